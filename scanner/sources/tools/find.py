"""Find the external tools the richer sources run: helm, kubectl (for `kubectl kustomize`), kustomize.

Order: the environment variable (KUBEHOP_HELM, KUBEHOP_KUBECTL, KUBEHOP_KUSTOMIZE), then PATH,
then the project's tool cache (filled by `kubehop tools install`); a tool on PATH too old for kubehop
gives way to the cached one.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable


def cache_dir() -> Path:
    """kubehop's cache: $KUBEHOP_CACHE_DIR, else $XDG_CACHE_HOME/kubehop, else ~/.cache/kubehop."""
    explicit = os.environ.get("KUBEHOP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubehop"


def find_tool(name: str, usable: Callable[[str], bool] | None = None) -> str | None:
    """The path of an executable `name`, or None when it is nowhere to be found.

    With `usable`, a tool on PATH that it refuses (an old helm) gives way to the one in the tool
    cache when that one is usable; a tool named by the environment variable is always taken.
    """
    explicit = os.environ.get(f"KUBEHOP_{name.upper()}")
    if explicit is not None:  # set but empty: the user says the tool is absent
        return explicit if _runnable(explicit) else None
    on_path = shutil.which(name)
    cached = str(cache_dir() / "tools" / name / name)
    cached = cached if _runnable(cached) else None
    if on_path and cached and usable and not usable(on_path) and usable(cached):
        return cached
    return on_path or cached


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
