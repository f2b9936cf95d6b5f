"""The pre-commit hook, installed by the real `pre-commit try-repo` into a temporary git repository:
it fails on a removed API and passes once the manifest is fixed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_repo, network_trouble

REMOVED = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\nspec: {}\n"
FIXED = REMOVED.replace("extensions/v1beta1", "networking.k8s.io/v1")
_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _tools() -> dict[str, str]:
    """The helm and kubectl kubehop finds here, named for the hook (its render cache is the test's own)."""
    from scanner.sources.tools.find import find_tool

    return {f"KUBEHOP_{name.upper()}": path for name in ("helm", "kubectl") if (path := find_tool(name))}


_TOOLS = _tools()


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **_GIT_ENV})


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This repository's files as they are now, committed in a fresh repository (try-repo clones HEAD)."""
    copy = copy_repo(tmp_path_factory.mktemp("hook") / "kubehop")
    git("init", "-q", cwd=copy)
    git("add", "-A", cwd=copy)
    git("commit", "-q", "-m", "snapshot", cwd=copy)
    return copy


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def try_hook(hook_repo, pre_commit_home, tmp_path):
    user_repo = tmp_path / "gitops"
    user_repo.mkdir()
    git("init", "-q", cwd=user_repo)

    def run(files: dict[str, str], *args: str) -> subprocess.CompletedProcess:
        for name, content in files.items():
            (user_repo / name).parent.mkdir(parents=True, exist_ok=True)
            (user_repo / name).write_text(content)
        git("add", "-A", cwd=user_repo)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBEHOP_DATA_DIR")}
        env.update(_GIT_ENV, PRE_COMMIT_HOME=str(pre_commit_home), NO_COLOR="1",
                   KUBEHOP_CACHE_DIR=str(tmp_path / "kubehop-cache"), **_TOOLS)
        proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "kubehop",
                               "--color", "never", *args], cwd=user_repo, env=env, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0 and network_trouble(proc.stdout + proc.stderr):
            pytest.skip("pre-commit could not reach a package index to build the hook's environment")
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        return proc

    return run


def test_hook_definition():
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "kubehop" and hook["language"] == "python"
    assert set(hook["types_or"]) == {"yaml", "json"} and hook["entry"] == "kubehop scan"


def test_fails_on_a_removed_api_and_passes_when_fixed(try_hook):
    failed = try_hook({"deploy/ing.yaml": REMOVED, "README.md": "not scanned\n"}, "--files", "deploy/ing.yaml",
                      "README.md")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "deploy/ing.yaml:1:1" in failed.stdout
    assert "extensions/v1beta1 Ingress is no longer served from Kubernetes 1.22" in failed.stdout
    fixed = try_hook({"deploy/ing.yaml": FIXED}, "--files", "deploy/ing.yaml")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout


def test_only_yaml_and_json_files_reach_kubehop(try_hook):
    proc = try_hook({"notes.txt": REMOVED, "chart/values.yml": "replicas: 2\n",
                     "deploy/ing.json": '{"apiVersion": "extensions/v1beta1", "kind": "Ingress",'
                                        ' "metadata": {"name": "j"}}'}, "--all-files", "--verbose")
    assert proc.returncode == 1
    assert "deploy/ing.json:1:2" in proc.stdout and "notes.txt" not in proc.stdout


# --- a file of a chart or of a kustomization is checked as part of it -----------------------------

CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "chart/values.yaml": "legacy: false\n",
    # a literal removed API in a template: helm renders it as it is
    "chart/templates/deployment.yaml": ("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n"
                                        "  name: {{ .Release.Name }}\nspec: {}\n"),
    # a removed API only a value turns on
    "chart/templates/psp.yaml": ("{{- if .Values.legacy }}\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\n"
                                 "metadata:\n  name: psp\n{{- end }}\n"),
    "chart/templates/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n",
}


def needs(tool: str) -> None:
    if f"KUBEHOP_{tool.upper()}" not in _TOOLS:
        pytest.skip(f"no {tool} here for the hook to run")


def test_a_changed_chart_template_is_rendered_with_its_chart(try_hook):
    needs("helm")
    failed = try_hook(CHART, "--files", "chart/templates/deployment.yaml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "chart/templates/deployment.yaml:1:1  error  Deployment web" in failed.stdout
    assert "via helm release web of chart web 0.1.0" in failed.stdout
    assert "not rendered" not in failed.stdout


def test_only_the_changed_templates_findings_are_the_commits(try_hook):
    needs("helm")
    passed = try_hook({**CHART, "chart/values.yaml": "legacy: true\n"}, "--files", "chart/templates/service.yaml",
                      "--verbose")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout and "deployment.yaml" not in passed.stdout


def test_a_changed_values_file_reports_what_it_does_to_the_whole_chart(try_hook):
    needs("helm")
    failed = try_hook({**CHART, "chart/values.yaml": "legacy: true\n"}, "--files", "chart/values.yaml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "chart/templates/psp.yaml:2:1  error  PodSecurityPolicy psp" in failed.stdout
    assert "chart/templates/deployment.yaml:1:1" in failed.stdout


KUSTOMIZATION = {
    "app/base/kustomization.yaml": "resources: [ingress.yaml, pdb.yaml]\npatches:\n  - path: patch.yaml\n",
    "app/base/ingress.yaml": REMOVED,
    "app/base/pdb.yaml": "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec: {}\n",
    "app/base/patch.yaml": ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\n"
                            "spec:\n  maxUnavailable: 1\n"),
}


def test_kustomization_files_are_checked_as_its_build(try_hook):
    needs("kubectl")
    passed = try_hook(KUSTOMIZATION, "--files", "app/base/pdb.yaml", "--verbose")
    assert passed.returncode == 0 and "Passed" in passed.stdout, passed.stdout + passed.stderr
    assert "ingress.yaml" not in passed.stdout  # the unchanged resource's finding is not this commit's
    failed = try_hook({}, "--files", "app/base/patch.yaml")  # a patch shapes the whole build
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "app/base/ingress.yaml:1:1  error  Ingress web" in failed.stdout


def test_a_commit_of_files_without_kubernetes_objects_passes_quietly(try_hook):
    proc = try_hook({"ci/config.yaml": "jobs: {}\n", "docs/data.json": "{}"}, "--all-files")
    assert proc.returncode == 0 and "Passed" in proc.stdout, proc.stdout + proc.stderr
