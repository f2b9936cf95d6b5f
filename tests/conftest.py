"""Shared test helpers. Tests run kubehop for real: in-process through the scan service,
or as a subprocess exactly as a user would (`python -m scanner ...`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = REPO.parent / "shared"


def run_kubehop(*args: str, cwd: Path | None = None, stdin: bytes | None = None,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the CLI in a child process; returns the completed process (text stdout/stderr)."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or REPO, input=stdin,
                          capture_output=True, env=full_env, timeout=600)


@pytest.fixture
def kubehop():
    return run_kubehop


def shared_or_skip(relative: str) -> Path:
    """A path in ../shared/ (seeds, corpora); skips the test in a clone where it is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"../shared/{relative} is not present (a user's clone)")
    return path


def tool_or_skip(name: str) -> str:
    """helm, kubectl or kustomize as kubehop finds it (KUBEHOP_<NAME>, PATH, tool cache), else skip."""
    from scanner.sources.tools import find_tool

    path = find_tool(name)
    if path is None:
        pytest.skip(f"{name} not found: set KUBEHOP_{name.upper()}, put it on PATH or run scripts/get-tools.sh")
    return path


def kustomize_or_skip() -> list[str]:
    from scanner.sources.tools import kustomize_command

    command = kustomize_command()
    if command is None:
        pytest.skip("neither kustomize nor kubectl found: run scripts/get-tools.sh")
    return command
