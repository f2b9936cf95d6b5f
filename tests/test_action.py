"""action.yml run the way a GitHub runner runs a composite action: each `run:` step with bash,
inputs given through the step's `env:`, outputs read from $GITHUB_OUTPUT, the job failing at the
first failing step. kubehop is really installed from a copy of this repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_repo, network_trouble

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
INSTALL = "Install kubehop"
BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: shop\nspec: {}\n"
WARNING = "apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: MutatingAdmissionPolicy\nmetadata: {name: p}\n"
CLEAN = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ok}\n"


# --- a small runner ------------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
_REFERENCE = re.compile(r"\b(inputs|steps)((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)")


def evaluate(expression: str, context: dict):
    """The subset of GitHub's expression syntax action.yml uses: references, ==, !=, &&, ||, 'strings'."""
    def lookup(match: re.Match) -> str:
        value = context[match.group(1)]
        for part in match.group(2)[1:].split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return repr(value)

    python = _REFERENCE.sub(lookup, expression).replace("&&", " and ").replace("||", " or ")
    return eval(python, {"__builtins__": {}})  # noqa: S307 - our own action.yml, in a test


def interpolate(text: str, context: dict) -> str:
    return _EXPRESSION.sub(lambda m: str(evaluate(m.group(1), context)), text)


def read_outputs(path: Path) -> dict[str, str]:
    outputs, lines = {}, path.read_text(encoding="utf-8").splitlines()
    while lines:
        line = lines.pop(0)
        if "<<" in line and "=" not in line.split("<<")[0]:
            key, delimiter = line.split("<<", 1)
            value = []
            while (item := lines.pop(0)) != delimiter:
                value.append(item)
            outputs[key] = "\n".join(value)
        elif "=" in line:
            key, value = line.split("=", 1)
            outputs[key] = value
    return outputs


@dataclass
class Job:
    failed_step: str | None = None
    exit_code: int = 0
    log: str = ""
    summary: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    used: list[tuple[str, dict]] = field(default_factory=list)  # `uses:` steps that would run


def run_action(inputs: dict[str, str], workspace: Path, action_path: Path, runner_temp: Path,
               skip: tuple[str, ...] = ()) -> Job:
    given = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(inputs) - set(given)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    context = {"inputs": {**given, **inputs}, "steps": {}}
    job = Job()
    summary = runner_temp / "step_summary.md"
    summary.write_text("")
    for step in STEPS:
        condition = step.get("if")
        if step["name"] in skip or (condition and not evaluate(_EXPRESSION.sub(r"\1", condition), context)):
            job.skipped.append(step["name"])
            continue
        if "uses" in step:
            job.used.append((step["uses"], {k: interpolate(str(v), context) for k, v in step["with"].items()}))
            continue
        output_file = runner_temp / f"output-{len(context['steps'])}"
        output_file.write_text("")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBEHOP_DATA_DIR")}
        env.update({f"INPUT_{name.upper()}": value for name, value in context["inputs"].items()})
        env.update({"GITHUB_ACTION_PATH": str(action_path), "GITHUB_WORKSPACE": str(workspace),
                    "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(summary),
                    "RUNNER_TEMP": str(runner_temp), "GITHUB_ACTIONS": "true", "CI": "true", "NO_COLOR": "1"})
        env.update({k: interpolate(str(v), context) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
        job.log += proc.stdout + proc.stderr
        context["steps"][step.get("id", step["name"])] = {"outputs": read_outputs(output_file)}
        if proc.returncode != 0:
            job.failed_step, job.exit_code = step["name"], proc.returncode
            break
    job.summary = summary.read_text(encoding="utf-8")
    job.outputs = {name: interpolate(spec["value"], context) for name, spec in ACTION["outputs"].items()}
    return job


# --- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """A copy of this repository as the action's checkout, installed once by the action's own step."""
    action_path = copy_repo(tmp_path_factory.mktemp("action") / "kubehop")
    runner_temp = tmp_path_factory.mktemp("runner_temp")
    job = run_action({}, tmp_path_factory.mktemp("empty_workspace"), action_path, runner_temp,
                     skip=tuple(s["name"] for s in STEPS if s["name"] != INSTALL))
    if job.failed_step and network_trouble(job.log):
        pytest.skip(f"pip could not reach a package index to install kubehop: {job.log[-300:]}")
    assert job.failed_step is None, job.log[-3000:]
    return action_path, runner_temp


@pytest.fixture
def action(installed, tmp_path):
    action_path, runner_temp = installed
    workspace = tmp_path / "repo"
    (workspace / "deploy").mkdir(parents=True)

    def run(files: dict[str, str], **inputs: str) -> Job:
        for name, content in files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(content)
        return run_action(inputs, workspace, action_path, runner_temp, skip=(INSTALL,))

    run.workspace = workspace
    return run


# --- tests ---------------------------------------------------------------------------------------

def test_no_run_step_interpolates_an_expression():
    scripts = [step["run"] for step in STEPS if "run" in step]
    assert scripts and all("${{" not in script for script in scripts)


def test_every_input_reaches_the_scan_through_env():
    [scan] = [step for step in STEPS if step.get("id") == "scan"]
    passed = " ".join(str(v) for v in scan["env"].values())
    assert all(f"inputs.{name}" in passed for name in ACTION["inputs"] if name != "upload-sarif")


def test_blockers_fail_the_job_with_annotations_and_a_summary(action):
    job = action({"deploy/ing.yaml": BLOCKER, "deploy/policy.yaml": WARNING}, target="1.36")
    assert job.failed_step == "Verdict" and job.exit_code == 1
    assert job.outputs["exit-code"] == "1"
    assert (job.outputs["errors"], job.outputs["warnings"]) == ("1", "1")
    assert "::error file=deploy/ing.yaml,line=1,col=1,title=kubehop extensions/v1beta1/Ingress::" in job.log
    assert "::warning file=deploy/policy.yaml,line=1,col=1," in job.log
    assert job.summary.startswith("## kubehop: up to 1.36\n")
    assert "| hop to 1.22 | 1 | 0 |" in job.summary
    assert "Upload SARIF to code scanning" in job.skipped and job.used == []
    assert "blocked: 1.36 cannot be reached as is" in job.log  # the text report, the default format


def test_sarif_upload_when_asked(action):
    job = action({"deploy/ing.yaml": BLOCKER}, **{"upload-sarif": "true"})
    [(uses, with_)] = job.used
    assert uses.startswith("github/codeql-action/upload-sarif@")
    assert with_["sarif_file"] == job.outputs["sarif-file"]
    sarif = json.loads(Path(with_["sarif_file"]).read_text())
    [result] = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/ing.yaml"


@pytest.mark.parametrize("files, fail_on, failed", [
    ({"deploy/ing.yaml": BLOCKER}, "never", False),
    ({"deploy/policy.yaml": WARNING}, "error", False),
    ({"deploy/policy.yaml": WARNING}, "warning", True),
    ({"deploy/ok.yaml": CLEAN}, "warning", False),
])
def test_fail_on(action, files, fail_on, failed):
    job = action(files, **{"fail-on": fail_on, "target": "1.36"})
    assert (job.failed_step == "Verdict") is failed and job.outputs["exit-code"] == ("1" if failed else "0")
    assert job.summary.startswith("## kubehop")


def test_paths_from_and_format_inputs(action):
    files = {"deploy/ing.yaml": BLOCKER, "apps/web.yaml": BLOCKER, "ignored/web.yaml": BLOCKER}
    job = action(files, paths="deploy\n  apps/web.yaml ", **{"from": "1.31", "format": "github"})
    assert job.outputs["errors"] == "2"
    assert "already broken at 1.31" in job.summary
    # With format github the log already holds the annotations: they are not printed twice.
    assert job.log.count("::error file=deploy/ing.yaml") == 1


def test_unreadable_input_fails_even_with_fail_on_never(action):
    job = action({"deploy/bin.yaml": "\0binary"}, **{"fail-on": "never"})
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == "3"
    assert "::error file=deploy/bin.yaml" in job.log


@pytest.mark.parametrize("inputs, code", [
    ({"target": '1.36"; touch {marker}; echo "'}, "2"),
    ({"target": "1.36 $(touch {marker})"}, "2"),
    ({"paths": "$(touch {marker}) `touch {marker}` ;touch {marker}"}, "3"),
    ({"format": "text; touch {marker}"}, "2"),
])
def test_hostile_inputs_stay_data(action, inputs, code):
    marker = action.workspace / "pwned"
    job = action({"deploy/ing.yaml": BLOCKER}, **{k: v.format(marker=marker) for k, v in inputs.items()})
    assert not marker.exists()
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == code


def test_the_summary_says_what_the_configuration_silenced(action):
    """A pull request may add a .kubehop.yaml that ignores everything: the reviewer is told."""
    job = action({".kubehop.yaml": 'ignore: ["*"]\n', "deploy/ing.yaml": BLOCKER,
                  "deploy/quiet.yaml": "# kubehop: ignore[*]\n" + BLOCKER.replace("web", "quiet")})
    assert job.failed_step is None and job.outputs["exit-code"] == "0"
    assert job.summary.startswith("> [!WARNING]\n> kubehop: findings silenced: 1 by the configuration (`ignore` "
                                  "in .kubehop.yaml, or --ignore); 1 by `# kubehop: ignore` comments.\n")
    assert job.outputs["silenced"] == "2"
