"""Hostile input (issue 13): one test per class of crash, hang or blow-up, each with a real removed
API beside the bad input that must still be reported, and the exit code the README promises."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import REPO, tool_or_skip

BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: still-scanned\nspec: {}\n"
EXIT_BLOCKED, EXIT_INPUT, EXIT_INTERNAL = 1, 3, 4


def kubehop(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("KUBEHOP_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or REPO, capture_output=True,
                          text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def tree(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    """The bad files, and good.yaml holding the blocker every test expects to be reported."""
    (tmp_path / "good.yaml").write_text(BLOCKER)
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return tmp_path


def scan_json(*args: str, timeout: float = 120) -> tuple[int, dict]:
    done = kubehop("scan", "--no-config", "--target", "1.36", "--format", "json", *args, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert "still-scanned" in [f["object"]["name"] for f in report["findings"]], "the rest was not scanned"
    assert done.returncode == report["exit_code"]
    return done.returncode, report


def messages(report: dict, name: str) -> list[str]:
    return [d["message"] for d in report["diagnostics"] if d["file"].endswith(name)]


# --- 1. crashes -----------------------------------------------------------------------------------

def test_a_crd_whose_name_is_a_map(tmp_path):
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {a: b}\n"
           "spec:\n  group: x.io\n  names: {kind: X, plural: xs}\n  scope: Namespaced\n"
           "  versions: [{name: v1, served: true, storage: true}]\n")
    code, report = scan_json(str(tree(tmp_path, {"crd.yaml": crd})))
    assert messages(report, "crd.yaml") == ["metadata.name is a mapping, not a string (Kubernetes rejects it); "
                                            "object read without it"]
    assert code == EXIT_BLOCKED  # a notice: the CRD was still read


@pytest.mark.parametrize("wrong", [
    "sourceRef: {kind: HelmRepository, name: repo, namespace: [a]}",
    "sourceRef: {kind: [HelmRepository], name: {x: 1}}",
])
def test_a_helm_release_with_lists_and_maps_where_names_belong(tmp_path, wrong):
    release = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: r, namespace: ns}\n"
               f"spec:\n  chart:\n    spec:\n      chart: [web]\n      version: {{v: 1}}\n      {wrong}\n"
               "  releaseName: [x]\n  valuesFrom:\n  - {kind: [x], name: y, valuesKey: [k], targetPath: {a: b}}\n"
               "  - [not, a, map]\n")
    code, report = scan_json(str(tree(tmp_path, {"hr.yaml": release})))
    assert code == EXIT_BLOCKED
    assert not any("please report it" in d["message"] for d in report["diagnostics"])


@pytest.mark.parametrize("render", [True, False], ids=["rendered", "no-render"])
def test_non_utf8_chart_yaml_and_kustomization(tmp_path, render):
    if render:
        tool_or_skip("helm")
    root = tree(tmp_path, {
        "chart/Chart.yaml": b"apiVersion: v2\nname: c\nversion: 1.0.0\ndescription: \"\xff\xfe\"\n",
        "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        "kust/kustomization.yaml": b"resources: [cm.yaml]\n# \xff\n",
        "kust/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n",
    })
    code, report = scan_json(*([] if render else ["--no-render"]), str(root))
    assert messages(report, "Chart.yaml") == ["not UTF-8 text (byte 0xff); skipped"]
    assert messages(report, "kustomization.yaml") == ["not UTF-8 text (byte 0xff); skipped"]
    assert code == EXIT_INPUT


def test_a_cluster_state_file_that_is_a_template(tmp_path):
    root = tree(tmp_path, {})
    dump = tmp_path.parent / f"{tmp_path.name}-dump.yaml"
    dump.write_text("apiVersion: v1\nkind: List\nitems:\n- {{ .Values.crd }}\n")
    code, report = scan_json("--cluster-state", str(dump), str(root))
    assert messages(report, dump.name) == ["holds template syntax ({{ }}): not a kubectl dump"]
    assert code == EXIT_INPUT


def release_secret(payload: bytes, name: str = "r") -> str:
    """A Helm release Secret as kubectl dumps it; `payload` is gzipped here unless it already is."""
    payload = payload if payload.startswith(b"\x1f\x8b") else _gzip(payload)
    encoded = base64.b64encode(base64.b64encode(payload)).decode()
    return (f"apiVersion: v1\nkind: Secret\nmetadata: {{name: sh.helm.release.v1.{name}.v1, namespace: d}}\n"
            f"data:\n  release: {encoded}\n")


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


def test_a_release_payload_whose_version_is_1e999(tmp_path):
    root = tree(tmp_path, {})
    manifest = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: from-release\n"
    text = json.dumps({"name": "r", "namespace": "d", "version": 1, "info": {"status": "deployed"},
                       "manifest": manifest}).replace('"version": 1', '"version": 1e999')
    dump = tmp_path.parent / f"{tmp_path.name}-releases.yaml"
    dump.write_text(release_secret(text.encode()))
    code, report = scan_json("--helm-releases", str(dump), str(root))
    assert "from-release" in [f["object"]["name"] for f in report["findings"]]
    assert code == EXIT_BLOCKED


def test_a_release_payload_that_decompresses_without_end(tmp_path):
    """A gzip bomb: 1 MB of dump, 1 GiB decompressed; refused at the limit, without the memory."""
    root = tree(tmp_path, {})
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"a" * (1 << 20)
    payload = packer.compress(b'{"name": "x", "manifest": "') + b"".join(
        packer.compress(chunk) for _ in range(1024)) + packer.compress(b'"}') + packer.flush()
    dump = tmp_path.parent / f"{tmp_path.name}-bomb.yaml"
    dump.write_text(release_secret(payload))
    code, report = scan_json("--helm-releases", str(dump), str(root))
    [message] = messages(report, dump.name)
    assert "decompresses to more than 20 MiB" in message
    assert code == EXIT_INPUT


FIXABLE = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\n{body}"


@pytest.mark.parametrize("name, body", [
    ("merged", "  labels: &b {serviceName: s}\nspec:\n  backend:\n    <<: *b\n    servicePort: 80\n"),
    ("merged-list", "  x: &b {serviceName: s, servicePort: 80}\nspec:\n  rules:\n  - http:\n      paths:\n"
                    "      - backend: *b\n      - backend:\n          <<: [*b]\n          servicePort: 81\n"),
    ("a-set", "spec:\n  backend: !!set {serviceName, servicePort}\n"),
    ("int-tag", "spec:\n  backend: {serviceName: s, servicePort: !!int \"abc\"}\n"),
    ("bool-tag", "spec:\n  backend: {serviceName: s, servicePort: 80, x: !!bool maybe}\n"),
    ("huge-int", "spec:\n  backend: {serviceName: s, servicePort: " + "9" * 4301 + "}\n"),
])
def test_fix_on_what_ruamel_cannot_rewrite(tmp_path, name, body):
    (tmp_path / "bad.yaml").write_text(FIXABLE.format(name=name, body=body))
    (tmp_path / "good.yaml").write_text(BLOCKER)
    done = kubehop("fix", "--no-config", "--target", "1.36", ".", cwd=tmp_path)
    assert "Traceback" not in done.stderr and "please report it" not in done.stderr, done.stderr
    assert f"not migrated: ./bad.yaml:1: Ingress {name}: " in done.stderr
    assert "+apiVersion: networking.k8s.io/v1" in done.stdout and "still-scanned" in done.stdout
    assert done.returncode == EXIT_BLOCKED  # objects left to a person


# --- 2. hangs and blow-ups -------------------------------------------------------------------------

def test_a_recursive_alias(tmp_path):
    code, report = scan_json(str(tree(tmp_path, {"rec.yaml": "apiVersion: v1\nkind: ConfigMap\n"
                                                             "metadata: {name: r}\ndata: &a {b: *a}\n"})),
                             timeout=60)
    assert messages(report, "rec.yaml") == ["an alias refers to a node that holds it (recursive alias); "
                                            "document skipped"]
    assert code == EXIT_INPUT


def test_a_recursive_alias_in_a_file_that_looks_like_a_template(tmp_path):
    code, report = scan_json(str(tree(tmp_path, {"rec.yaml": "a: &a ['{{ x }}', *a]\n"})), timeout=60)
    assert messages(report, "rec.yaml") == ["an alias refers to a node that holds it (recursive alias); "
                                            "document skipped"]
    assert code == EXIT_INPUT


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", ["scan", "fix", "components", "inventory", "plan"])
def test_a_fifo_named_like_a_manifest_is_not_opened_for_reading(tmp_path, command):
    tree(tmp_path, {})
    os.mkfifo(tmp_path / "x.yaml")
    extra = ["--no-config", "--target", "1.36"] if command in ("scan", "fix", "plan") else []
    extra += ["--from", "1.35"] if command == "plan" else []
    done = kubehop(command, *extra, ".", cwd=tmp_path, timeout=60)
    assert "x.yaml: not a regular file (a FIFO, socket or device); skipped" in done.stdout + done.stderr
    assert done.returncode == EXIT_INPUT


def test_helm_release_values_aliasing_one_mebibyte_300_times(tmp_path):
    big = "x" * (1 << 20)
    release = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: b, namespace: ns}\n"
               "spec:\n  chart: {spec: {chart: ./c, sourceRef: {kind: GitRepository, name: g}}}\n  values:\n"
               f"    a: &big {big}\n" + "".join(f"    k{i}: *big\n" for i in range(300)))
    code, report = scan_json(str(tree(tmp_path, {"hr.yaml": release})), timeout=60)
    [message] = messages(report, "hr.yaml")
    assert "(alias bomb); document skipped" in message
    assert code == EXIT_INPUT


@pytest.mark.parametrize("name, where", [(".kubehop.yaml", "configuration"), ("Chart.yaml", "chart")])
def test_alias_bombs_in_what_kubehop_reads_for_itself(tmp_path, name, where):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(7))
    if where == "configuration":
        (tmp_path / name).write_text(bomb)
        (tmp_path / "good.yaml").write_text(BLOCKER)
        done = kubehop("scan", "--target", "1.36", ".", cwd=tmp_path, timeout=60)
        assert "alias bomb" in done.stderr and done.returncode == 2  # a configuration that cannot be read
        return
    root = tree(tmp_path, {"chart/Chart.yaml": bomb, "chart/templates/x.yaml": BLOCKER.replace("still", "t")})
    code, report = scan_json("--no-render", str(root), timeout=60)
    assert any("alias bomb" in m for m in messages(report, "Chart.yaml"))
    assert code == EXIT_INPUT


# --- the last line of defence ------------------------------------------------------------------------

def _scan_in_process(root: Path):
    from scanner.scan import scan
    from scanner.versions import Minor

    return scan([str(root)], Minor(1, 36))


def test_a_bug_in_a_check_is_an_input_problem_for_the_object_it_met(tmp_path, monkeypatch):
    from scanner.checks import field_rules

    real = field_rules.check

    def failing(manifests, context):
        for manifest in manifests:
            if manifest.name == "boom":
                raise TypeError("unhashable type: 'dict'")
        return real(manifests, context)

    monkeypatch.setattr(field_rules, "check", failing)
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    root = tree(tmp_path, {"boom.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: boom}\n"})
    result = _scan_in_process(root)
    assert [f.name for f in result.findings] == ["still-scanned"]
    [problem] = result.diagnostics
    assert problem.path.endswith("boom.yaml") and problem.line == 1 and problem.level == "error"
    assert problem.message == ("kubehop could not check ConfigMap boom; please report it "
                               "(TypeError: unhashable type: 'dict')")
    assert result.exit_code == EXIT_INPUT


def test_a_bug_while_reading_a_file_is_an_input_problem_for_that_file(tmp_path, monkeypatch):
    import scanner.sources.files.source as sources

    def failing(real):
        def fail(text, path, *rest):
            if path.endswith("boom.yaml"):
                raise KeyError(1)
            return real(text, path, *rest)
        return fail

    for reader in ("read_text", "stream_text"):  # a file read whole, or a document at a time (the scan's way)
        monkeypatch.setattr(sources, reader, failing(getattr(sources, reader)))
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    result = _scan_in_process(tree(tmp_path, {"boom.yaml": BLOCKER.replace("still-scanned", "x")}))
    assert [f.name for f in result.findings] == ["still-scanned"]
    assert [d.message for d in result.diagnostics] == ["kubehop could not read this; please report it (KeyError: 1)"]
    assert result.exit_code == EXIT_INPUT
    monkeypatch.setenv("KUBEHOP_DEBUG", "1")  # for a developer: the exception itself
    with pytest.raises(KeyError):
        _scan_in_process(tmp_path)


def test_a_bug_outside_any_input_exits_4_never_1(tmp_path, monkeypatch, capsys):
    import scanner.scan
    from scanner.cli import main

    def failing(*args, **kwargs):
        raise RuntimeError("boom\n::error::spoofed")

    monkeypatch.setattr(scanner.scan, "scan", failing)
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["kubehop", "scan", "--no-config", str(tree(tmp_path, {}))])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == EXIT_INTERNAL
    assert capsys.readouterr().err == ("kubehop: internal error (RuntimeError: boom ::error::spoofed); please "
                                       "report it (KUBEHOP_DEBUG=1 shows the traceback)\n")


# --- 4. nothing from the tree reaches a log line raw --------------------------------------------------

def test_the_text_report_prints_no_workflow_command_from_the_tree(tmp_path):
    evil = "evil\\n::error file=x::spoofed\\r::stop-commands::t\\u2028::warning::x ##[error]legacy \\e[2J"
    odd_file = "a\n::error::named.yaml"
    tree(tmp_path, {"evil.yaml": f'apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: "{evil}"\n',
                    odd_file: BLOCKER.replace("still-scanned", "in-an-odd-file"),
                    "::notice::x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n"})
    done = kubehop("scan", "--no-config", "--target", "1.36", ".", cwd=tmp_path)
    lines = done.stdout.split("\n")
    assert not [line for line in lines if line.lstrip().startswith("::") or "##[" in line]
    assert not any(char in done.stdout for char in "\r\x1b\u2028")
    assert r"Ingress evil\n::error file=x::spoofed\r::stop-commands::t\u2028::warning::x ##\[error]legacy \x1b[2J" \
        in done.stdout
    assert r"  a\n::error::named.yaml:1:1  error  Ingress in-an-odd-file" in done.stdout
    assert done.returncode == EXIT_INPUT


# --- 3. kubehop fix --write -----------------------------------------------------------------------

def test_fix_write_replaces_the_file_and_never_writes_through_a_hard_link(tmp_path):
    tree_ = tmp_path / "tree"
    tree_.mkdir()
    (tree_ / "good.yaml").write_text(BLOCKER)
    os.chmod(tree_ / "good.yaml", 0o640)
    outside = tmp_path / "outside.yaml"  # not in the scanned tree; the same file as linked.yaml
    outside.write_text(BLOCKER.replace("still-scanned", "linked"))
    os.link(outside, tree_ / "linked.yaml")
    inode = (tree_ / "good.yaml").stat().st_ino
    done = kubehop("fix", "--no-config", "--target", "1.36", "--write", ".", cwd=tree_)
    assert "Traceback" not in done.stderr
    assert "networking.k8s.io/v1" in (tree_ / "good.yaml").read_text()
    fixed = (tree_ / "good.yaml").stat()
    assert fixed.st_ino != inode and oct(fixed.st_mode & 0o777) == "0o640"  # a new file renamed over it
    assert outside.read_text() == BLOCKER.replace("still-scanned", "linked")
    assert ("./linked.yaml: has 2 hard links: not rewritten (its other names would change too); apply the diff "
            "by hand") in done.stderr
    assert "1 object migrated in 1 file; 1 left to a person" in done.stderr
    assert sorted(p.name for p in tree_.iterdir()) == ["good.yaml", "linked.yaml"]  # no temporary file left
    assert done.returncode == EXIT_BLOCKED


def test_no_tool_is_handed_a_file_kubehop_refused_as_a_bomb(tmp_path):
    """kustomize itself recurses into a recursive alias until its stack overflows (12 s, 1 GB)."""
    from conftest import kustomize_or_skip

    kustomize_or_skip()
    root = tree(tmp_path, {
        "k/kustomization.yaml": "resources: [cm.yaml]\n",
        "k/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata: &a {b: *a}\n",
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        "chart/values.yaml": "a: &a [*a]\n",
        "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    })
    code, report = scan_json(str(root), timeout=60)
    held = {Path(u["file"]).name: u["reason"] for u in report["unrendered"]}
    assert held["k"].startswith("kustomization not built: ") and "k/cm.yaml holds an alias bomb" in held["k"]
    assert held["chart"].startswith("Helm chart not rendered: ") and "values.yaml holds" in held["chart"]
    assert code == EXIT_INPUT


def test_a_kustomization_naming_a_nul_beside_a_bomb_is_no_crash(tmp_path):
    """Found by the fuzzer (seed 2026, case 50220): looking for the files a kustomization would hand
    kustomize, a reference holding a NUL sent realpath's ValueError out of the scan."""
    root = tree(tmp_path, {
        "k/kustomization.yaml": 'resources: ["cm\\0.yaml", bomb.yaml]\n',
        "k/bomb.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata: &a {b: *a}\n",
    })
    code, report = scan_json("--no-render", str(root), timeout=60)
    assert code == EXIT_INPUT and "please report it" not in json.dumps(report)
    assert any("recursive alias" in d["message"] for d in report["diagnostics"])


@pytest.mark.parametrize("command", [["components"], ["inventory"], ["plan", "--from", "1.31", "--target", "1.36"]])
def test_the_other_text_reports_print_no_workflow_command_from_the_tree(tmp_path, command):
    tree(tmp_path, {"hr.yaml": (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        'metadata: {name: "x\\n::error::injected", namespace: "ns\\n##[error]legacy"}\n'
        "spec:\n  chart:\n    spec: {chart: cilium, version: 1.14.0, sourceRef: {kind: HelmRepository, name: c}}\n"
        "---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: \"i\\n::warning::x\"}\n")})
    done = kubehop(*command, ".", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    printed = (done.stdout + done.stderr).split("\n")
    assert not [line for line in printed if line.lstrip().startswith("::") or "##[" in line]


@pytest.mark.parametrize("command", [["scan", "--target", "1.36"], ["plan", "--target", "1.36", "--from", "1.31"],
                                     ["components"], ["inventory"]])
def test_a_configuration_naming_a_missing_baseline_is_a_usage_error(tmp_path, command):
    """Fuzz find (seed 1, case 422): `plan` applies the configuration's baseline as `scan` does, and a
    missing one escaped it as a traceback (exit 1, which CI reads as "blockers found"). `components`
    and `inventory` read the tree through the same analysis since, and asked for a bug report."""
    root = tree(tmp_path, {".kubehop.yaml": "baseline: .kubehop-baseline.json\n"})
    done = kubehop(*command, str(root), cwd=root)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cannot read the baseline" in done.stderr


def test_chart_metadata_and_values_with_dates_that_are_no_dates(tmp_path):
    """Fuzz find (seed 1, case 3991): a vendored subchart's `version: 2001-13-45` (a YAML timestamp
    with month 13) escaped PyYAML's constructor as ValueError; a chart's own files are read with the
    guards of every file in the tree (yamldoc.load_data)."""
    root = tree(tmp_path, {
        "umbrella/Chart.yaml": ("apiVersion: v2\nname: umbrella\nversion: 2.0.0\ndependencies:\n"
                                "  - {name: legacy, version: 0.1.0, condition: legacy.enabled}\n"
                                "  - {name: absent, version: 1.0.0, condition: absent.enabled}\n"),
        "umbrella/values.yaml": "legacy: {enabled: true}\nabsent: {enabled: 2001-13-45}\n",
        "umbrella/charts/legacy/Chart.yaml": "apiVersion: v2\nname: legacy\nversion: 2001-13-45\n",
        "umbrella/charts/legacy/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    })
    for command in (["components", "--format", "json"], ["scan", "--no-config", "--target", "1.36"]):
        done = kubehop(*command, str(root))
        assert "please report it" not in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 1), done.stderr


def test_a_template_of_unclosed_actions_is_read_in_one_pass(tmp_path):
    """Deciding Capabilities branches (sources/template_branches.py) with a lazy regex rescanned the rest
    of the template from every `{{` that never closes: 100 KB took 12 s, this one about five minutes."""
    root = tree(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        "chart/templates/cm.yaml": "{{ if .Capabilities.APIVersions.Has \"v1\" }}\n" + "{{ x " * 100_000,
    })
    code, report = scan_json("--no-render", str(root), timeout=60)
    assert [f["object"]["name"] for f in report["findings"]] == ["still-scanned"]
