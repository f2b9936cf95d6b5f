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
        env.update(_GIT_ENV, PRE_COMMIT_HOME=str(pre_commit_home), NO_COLOR="1")
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
