"""Find the external tools the richer sources run: helm, kubectl (for `kubectl kustomize`), kustomize.

Order: the environment variable (KUBEHOP_HELM, KUBEHOP_KUBECTL, KUBEHOP_KUSTOMIZE), then PATH,
then the project's tool cache (filled by scripts/get-tools.sh).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path


def cache_dir() -> Path:
    """kubehop's cache: $KUBEHOP_CACHE_DIR, else $XDG_CACHE_HOME/kubehop, else ~/.cache/kubehop."""
    explicit = os.environ.get("KUBEHOP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubehop"


def find_tool(name: str) -> str | None:
    """The path of an executable `name`, or None when it is nowhere to be found."""
    explicit = os.environ.get(f"KUBEHOP_{name.upper()}")
    if explicit is not None:  # set but empty: the user says the tool is absent
        return explicit if _runnable(explicit) else None
    on_path = shutil.which(name)
    if on_path:
        return on_path
    cached = str(cache_dir() / "tools" / name / name)
    return cached if _runnable(cached) else None


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)  # a folder is "executable" too


@functools.cache
def tool_version(path: str) -> str:
    """The tool's own version line (part of the render cache key); empty when it will not say."""
    for args in (["version", "--short"], ["version", "--client"], ["version"]):
        try:
            done = subprocess.run([path, *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ""
        if done.returncode == 0:
            return done.stdout.strip()
    return ""


def kustomize_command() -> list[str] | None:
    """`kustomize build` where kustomize is installed, else `kubectl kustomize`."""
    kustomize = find_tool("kustomize")
    if kustomize:
        return [kustomize, "build"]
    kubectl = find_tool("kubectl")
    return [kubectl, "kustomize"] if kubectl else None
