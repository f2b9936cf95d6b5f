"""Nothing from the tree is printed raw (issue 21, README "Security"): one tree whose every name
carries the same hostile text (tests/hostile_text.py: OSC 8, CSI, C1, bidi, separators, `\\r`,
`\\n::error::`, `##[`, HTML, links, mentions), through every command and every format, in process.

Every standard output, standard error and report file must hold no raw control, bidi or separator
character, no line that is a workflow command but kubehop's own annotations, and no `##[`; JSON
keeps the names exactly; SARIF message text holds no embedded link; Markdown renders (cmark-gfm, as
GitHub) with no HTML, link or mention from the tree; `kubehop fix`'s diff still applies with git.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import cli_runner, run_kubehop
from hostile_text import (ANNOTATION, HOSTILE, HOSTILE_CONFIGS, HOSTILE_FILE, KUBEHOP_COMMAND, NOT_UTF8,
                          hostile_tree, log_problems)
from scanner.report.plain import printable

SPAN = ["--from", "1.31", "--target", "1.36"]
SCAN_FORMATS = ("text", "wide", "json", "yaml", "csv", "sarif", "markdown", "github")
RUNS = {
    **{f"scan {fmt}": ["scan", "--no-config", *SPAN, "--format", fmt, "."] for fmt in SCAN_FORMATS},
    "scan --report": ["scan", "--no-config", *SPAN, *(f"--report={fmt}=../reports/report.{fmt}" for fmt in SCAN_FORMATS),
                      "."],
    **{f"plan {fmt}": ["plan", "--no-config", *SPAN, "-o", fmt, "."] for fmt in ("text", "json", "yaml", "markdown")},
    "plan markdown --output-file": ["plan", "--no-config", *SPAN, "-o", "markdown", "--output-file",
                                    "../reports/plan.md", "."],
    **{f"plan --window {fmt}": ["plan", "--no-config", *SPAN, "--window", "1", "-o", fmt, "."]
       for fmt in ("text", "json", "yaml", "markdown")},
    "plan --window --diff": ["plan", "--no-config", *SPAN, "--window", "1", "--diff", "."],
    **{f"{command} {fmt}": [command, "--no-config", "--format", fmt, "."]
       for command in ("components", "inventory") for fmt in ("text", "json", "yaml")},
    **{f"rules {fmt}": ["rules", "--format", fmt] for fmt in ("text", "json")},
    "fix": ["fix", "--no-config", *SPAN, "."],
}


@dataclass
class Printed:
    exit_code: int
    stdout: str
    stderr: str


def invoke(args: list[str], cwd: Path, env: dict[str, str]) -> Printed:
    """The CLI in process, at `cwd`; an exception kubehop did not handle fails the test."""
    from scanner.cli import cli

    runner = cli_runner()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(cli, args, env=env, catch_exceptions=True)
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    # strictly UTF-8: a lone surrogate (a file name that is not UTF-8) printed raw could not be encoded
    return Printed(result.exit_code, result.stdout_bytes.decode("utf-8"), result.stderr_bytes.decode("utf-8"))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, dict[str, Printed]]:
    root = hostile_tree(tmp_path_factory.mktemp("hostile") / "repo")
    (root.parent / "reports").mkdir()
    return root, {name: invoke(args, root, environment(root.parent / "cache")) for name, args in RUNS.items()}


def environment(cache: Path) -> dict[str, str]:
    """A render cache of the test's own, and the helm and kubectl kubehop finds (when found: charts are
    then rendered, kustomizations built; else read as text, which must be as safe)."""
    from scanner.sources.tools.find import find_tool

    tools = {f"KUBEHOP_{name.upper()}": find_tool(name) for name in ("helm", "kubectl")}
    return {"NO_COLOR": "1", "KUBEHOP_CACHE_DIR": str(cache), **{k: v for k, v in tools.items() if v}}


def shown(text: str) -> str:
    """`text` as a log line shows it: printable, `##[` broken up (scanner.report.plain)."""
    return printable(text).replace("##[", "##\\[")


def reports(root: Path) -> dict[str, str]:
    folder = root.parent / "reports"
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("run", list(RUNS))
def test_nothing_printed_holds_a_control_or_a_workflow_command(hostile, run):
    root, printed = hostile
    done = printed[run]
    assert done.exit_code in (0, 1, 3), (done.exit_code, done.stderr[-500:])
    assert "please report it" not in done.stdout + done.stderr
    assert log_problems(done.stdout, commands_allowed=run == "scan github") == []
    assert log_problems(done.stderr) == []


def test_every_report_file_is_as_safe_as_standard_output(hostile):
    root, _ = hostile
    written = reports(root)
    assert sorted(written) == sorted([f"report.{fmt}" for fmt in SCAN_FORMATS] + ["plan.md"])
    for name, text in written.items():
        assert log_problems(text, commands_allowed=name == "report.github") == [], name


def test_the_tree_was_read_and_its_hostile_names_reported(hostile):
    """The checks above mean something only if the hostile text reached the reports."""
    root, printed = hostile
    text = printed["scan text"].stdout
    assert shown(HOSTILE) in text  # an object's name, escaped visibly
    assert shown(f"{HOSTILE_FILE}/{HOSTILE_FILE}.yaml") in text  # a file in a folder
    assert shown(f"broken{HOSTILE_FILE}.yaml") in text  # an input problem
    assert shown(ANNOTATION) in text  # an annotation key a field rule quotes
    assert shown(f"{NOT_UTF8}.yaml") == "latin\\xff.yaml" and "latin\\xff.yaml" in text  # its byte, shown
    rows = printed["components text"].stdout
    assert f"HelmRelease {shown(HOSTILE)}/{shown(HOSTILE)} (chart cilium)" in rows
    # the Markdown plan shows the lines of an upgrade order around its version, one starting `::error::`
    window = printed["plan markdown"].stdout.partition("```diff")[2].partition("```")[0]
    assert "+  version: v1.32." in window and "\n       :\u2060:error::pwned: " in window


def test_json_keeps_the_names_exactly(hostile):
    """JSON is data: the bytes printed are safe, the strings read back are the tree's."""
    root, printed = hostile
    report = json.loads(printed["scan json"].stdout)
    assert {"name": HOSTILE, "namespace": HOSTILE} in [
        {k: f["object"][k] for k in ("name", "namespace")} for f in report["findings"]]
    assert f"{HOSTILE_FILE}/{HOSTILE_FILE}.yaml" in {f["file"] for f in report["findings"]}
    assert f"{NOT_UTF8}.yaml" in {f["file"] for f in report["findings"]}
    plan = printed["plan json"].stdout
    assert f"Ingress {HOSTILE}/{HOSTILE}" in {blocker["object"] for window in json.loads(plan)["windows"]
                                              for blocker in window["api_blockers"]}
    components = json.loads(printed["components json"].stdout)
    assert any(HOSTILE in c["what"] for c in components["components"])


@pytest.mark.parametrize("command", ["scan", "plan", "plan --window", "components", "inventory"])
def test_yaml_reads_back_as_the_json(hostile, command):
    """-o yaml is the JSON report in YAML: the same data, the tree's strings exactly, nothing raw printed."""
    import yaml

    root, printed = hostile
    assert yaml.safe_load(printed[f"{command} yaml"].stdout) == json.loads(printed[f"{command} json"].stdout)


def test_csv_cells_are_the_names_escaped_and_no_formula(hostile):
    import csv
    import io

    root, printed = hostile
    rows = list(csv.DictReader(io.StringIO(printed["scan csv"].stdout, newline="")))
    assert rows and all(len(row) == len(rows[0]) for row in rows)
    assert shown(HOSTILE) in {row["name"] for row in rows}
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values())


def test_sarif_message_text_holds_no_embedded_link(hostile):
    root, printed = hostile
    run = json.loads(printed["scan sarif"].stdout)["runs"][0]
    texts = [r["message"]["text"] for r in run["results"]]
    texts += [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    link = re.compile(r"(?<!\\)(?:\\\\)*\]\(")  # a ']' not escaped, then '(': the end of [text](target)
    assert texts and not [t for t in texts if link.search(t)]
    assert any(printable(HOSTILE).replace("\\", "\\\\").replace("](", "\\](") in t for t in texts)
    assert HOSTILE in {r["properties"]["object"]["name"] for r in run["results"]}  # data, kept


def test_github_annotations_are_kubehops_own_and_carry_the_tree_inside(hostile):
    root, printed = hostile
    lines = printed["scan github"].stdout.splitlines()
    report = json.loads(printed["scan json"].stdout)
    commands = [line for line in lines if line.startswith("::")]
    assert all(KUBEHOP_COMMAND.match(line) for line in commands)
    assert len(commands) == len(report["findings"]) + len(report["diagnostics"])
    # the runner decodes %0A into the annotation's line breaks: kubehop's, never the tree's
    decoded = [line.partition("::")[2].partition("::")[2].replace("%0A", "\n").replace("%0D", "\r")
               .replace("%25", "%") for line in commands]
    assert not [part for message in decoded for part in message.split("\n") if part.startswith("::")]


@pytest.mark.parametrize("run", ["scan markdown", "plan markdown", "report.markdown", "plan.md"])
def test_markdown_renders_no_html_link_or_mention_from_the_tree(hostile, run):
    from test_markdown_html import JOINER, Page, assert_inert, github_html

    root, printed = hostile
    markdown = printed[run].stdout if run in printed else reports(root)[run]
    page = Page(github_html(markdown))
    assert_inert(page, markdown)
    assert "img" not in page.elements
    shown = page.visible.replace(JOINER, "")
    assert " ".join(printable(HOSTILE).split()) in shown  # the name reads as itself, escapes and all


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return subprocess.run(["git", "-c", "core.quotePath=true", *args], cwd=cwd, capture_output=True, text=True)


def test_fix_names_hostile_files_as_git_does_and_the_diff_applies(hostile, tmp_path):
    root, printed = hostile
    diff = printed["fix"].stdout
    headers = [line for line in diff.splitlines() if line.startswith(("--- ", "+++ "))]
    assert len(headers) == 4  # the plain Ingress and the CronJob (the chart's PodDisruptionBudget needs a person)
    assert '--- "a/latin\\377.yaml"' in headers
    # a file whose own lines hold the hostile text: its diff would print them, so it is not printed
    assert (f"./{shown(HOSTILE_FILE)}/{shown(HOSTILE_FILE)}.yaml: its diff is not printed: line 8 of it would "
            "be read as a command by a CI log or a terminal; `kubehop fix --write` applies it") in printed["fix"].stderr
    assert printed["fix"].stderr.endswith("2 objects to migrate in 2 files; 3 left to a person\n")
    copy = tmp_path / "repo"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git"))
    git("init", "-q", ".", cwd=copy)
    applied = subprocess.run(["git", "apply", "-"], input=diff, cwd=copy, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert "networking.k8s.io/v1" in (copy / f"{HOSTILE_FILE}.yaml").read_text()
    assert "batch/v1\n" in (copy / f"{NOT_UTF8}.yaml").read_text()


def test_fix_write_migrates_what_its_diff_could_not_show(hostile, tmp_path):
    root, _ = hostile
    copy = tmp_path / "repo"
    shutil.copytree(root, copy)
    done = invoke(["fix", "--no-config", *SPAN, "--write", "."], copy, environment(tmp_path / "cache"))
    assert done.stdout == "" and log_problems(done.stderr) == []
    assert "networking.k8s.io/v1" in (copy / HOSTILE_FILE / f"{HOSTILE_FILE}.yaml").read_text()


@pytest.mark.parametrize("config", list(HOSTILE_CONFIGS))
@pytest.mark.parametrize("command", [["scan", *SPAN], ["plan", *SPAN], ["components"], ["inventory"], ["fix", *SPAN]])
def test_a_hostile_configuration_is_refused_without_echoing_it_raw(tmp_path, config, command):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".kubehop.yaml").write_text(HOSTILE_CONFIGS[config], encoding="utf-8")
    (tmp_path / "ing.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: x}\n")
    done = invoke([*command, "."], tmp_path, environment(tmp_path / "cache"))
    assert log_problems(done.stdout) == [] and log_problems(done.stderr) == []
    if config == "raw":  # a comment full of controls: YAML refuses the file, kubehop says where
        assert done.exit_code == 2 and "/.kubehop.yaml: cannot read: invalid YAML: unacceptable character" in done.stderr
    elif config != "baseline" or command[0] != "fix":  # fix reads no baseline
        assert done.exit_code == 2, done.stderr
        assert "\\x1b]8;;" in done.stderr and "##\\[" in done.stderr


def test_the_cli_prints_the_tree_safely_end_to_end(hostile):
    """A real process, its real standard output: the encoding of a name that is not UTF-8 included."""
    root, _ = hostile
    for fmt, named in (("sarif", '"uri": "latin%FF.yaml"'), ("markdown", "<code>latin\\\\xff.yaml:1:1</code>")):
        done = run_kubehop("scan", "--no-config", "--no-render", *SPAN, "--format", fmt, ".", cwd=root)
        assert done.returncode == 3, done.stderr.decode()
        assert log_problems(done.stdout.decode("utf-8")) == [] and log_problems(done.stderr.decode("utf-8")) == []
        assert named in done.stdout.decode("utf-8")


def test_a_library_warning_reaches_standard_error_printable(tmp_path, monkeypatch):
    """ruamel.yaml warned of an anchor defined twice by quoting the file's lines on standard error,
    raw: a line `::error::pwned: &x a` of the tree became a workflow command. Such an anchor is valid
    YAML (no warning now), and any other warning is printed on one printable line."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "ing.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: a\n"
                                       "  labels:\n    ::error::pwned: &x a\n    b: &x c\nspec: {}\n")
    done = invoke(["fix", "--no-config", "--target", "1.36", "."], tmp_path, {"NO_COLOR": "1"})
    assert done.stderr == "1 object to migrate in 1 file; 0 left to a person\n"

    import warnings

    import scanner.fix

    real = scanner.fix.fix

    def warning(*args, **kwargs):
        warnings.warn(f"quoting the tree:\n{HOSTILE}", UserWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scanner.fix, "fix", warning)
    done = invoke(["fix", "--no-config", "--target", "1.36", "."], tmp_path, {"NO_COLOR": "1"})
    assert log_problems(done.stderr) == []
    assert done.stderr.startswith(f"kubehop: warning: UserWarning: quoting the tree:\\n{shown(HOSTILE)}\n")


def test_text_that_is_printable_holds_nothing_printable_escapes():
    """printable() passes a text str.isprintable() passes as it is, without its pattern (compiled only
    for a text that needs it): that holds only while no character it escapes is printable to Python."""
    from scanner.report.plain import UNSAFE

    assert [hex(code) for code in UNSAFE if chr(code).isprintable()] == []


def test_printable_and_log_json_escape_as_their_patterns_do():
    """The shortcuts (printable text, ASCII JSON without DEL) change no output: each character up to
    U+3000, the surrogates and a few beyond, alone and inside text, comes out as the patterns make it."""
    from scanner.report.plain import _escaped, _json_unsafe, _unsafe, log_json

    codes = [*range(0x3000), *range(0xD800, 0xE000), 0xFEFF, 0xFFFD, 0x1F600, 0xE0001, 0x10FFFF]
    for code in codes:
        for text in (chr(code), f"name-{chr(code)}-x"):
            assert printable(text) == _unsafe().sub(_escaped, text), hex(code)
            raw = json.dumps({"name": text}, indent=2, ensure_ascii=False)
            expected = _json_unsafe().sub(lambda m: f"\\u{ord(m.group(0)):04x}", raw).replace("##[", "##\\u005b")
            assert log_json({"name": text}) == expected + "\n", hex(code)
