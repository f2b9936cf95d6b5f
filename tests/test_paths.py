"""repo_path: a finding's file as the repository names it (scanner/paths.py)."""

from __future__ import annotations

import os

from scanner import per_scan
from scanner.model import STDIN_PATH
from scanner.paths import repo_path


def _expected(path: str, root: str | None) -> str:
    """What the report named before repo_path took the remainder itself: os.path.relpath."""
    if root is None:
        return os.path.abspath(path).replace(os.sep, "/")
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


def test_repo_path_is_relpath_from_the_git_root_and_absolute_outside(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "apps" / "web").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    per_scan.forget()
    root = str(repo)
    cases = {
        str(repo / "apps" / "web" / "deploy.yaml"): root,
        str(repo / "top.yaml"): root,
        str(repo / "apps" / ".." / "apps" / "x.yaml"): root,  # normalised first
        str(repo / "apps" / "web") + "//twice.yaml": root,
        "plain.yaml": str(outside),  # relative: from the working folder, which holds no .git
        "sub/../b.yaml": str(outside),
    }
    for path, where in cases.items():
        assert repo_path(path) == _expected(path, where), path
    assert repo_path(str(tmp_path / "x.yaml")) == _expected(str(tmp_path / "x.yaml"), None)
    assert repo_path(STDIN_PATH) == STDIN_PATH


def test_repo_path_of_the_root_itself_is_a_dot(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    per_scan.forget()
    assert repo_path(str(tmp_path / "f.yaml")) == "f.yaml"
    assert repo_path(".") == os.path.relpath(str(tmp_path), os.getcwd()) == "."
