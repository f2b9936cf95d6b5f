"""Shared test helpers. Tests run kubehop for real: in-process through the scan service,
or as a subprocess exactly as a user would (`python -m scanner ...`)."""

from __future__ import annotations

import os
import shutil
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


def helm_or_skip() -> str:
    """The helm binary (KUBEHOP_HELM, PATH, or scripts/get-tools.sh's cache); skips the test without one."""
    for candidate in (os.environ.get("KUBEHOP_HELM"), shutil.which("helm"),
                      str(Path.home() / ".cache/kubehop/tools/helm")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip("helm not found: set KUBEHOP_HELM or put helm on PATH")
