"""Find the external tools the richer sources run: helm, kubectl (for `kubectl kustomize`), kustomize.

Order: the environment variable (KUBEHOP_HELM, KUBEHOP_KUBECTL, KUBEHOP_KUSTOMIZE), then PATH,
then the project's tool cache (filled by `kubehop tools install`); a tool on PATH too old for kubehop
gives way to the cached one. What a tool says of itself (its version, `helm env`) is kept in kubehop's
cache per binary (`remembered`), so a scan does not start the tool only to ask it again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

# The first bytes of a native executable: ELF, Mach-O (both orders, 32 and 64 bit, universal), PE.
_NATIVE = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
           b"\xca\xfe\xba\xbe", b"MZ")


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
    return remembered(path, "version", lambda: _ask_version(path)) or ""


def _ask_version(path: str) -> str | None:
    for args in (["version", "--short"], ["version", "--client"], ["version"]):
        try:
            done = subprocess.run([path, *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode == 0:
            return done.stdout.strip()
    return None


def remembered(path: str, question: str, ask: Callable[[], str | None]) -> str | None:
    """`ask()`: what the tool at `path` answers to `question` (None: it did not answer, and that is
    not kept). Kept in kubehop's cache for this very binary: its path, size, times and inode, so a
    tool replaced or updated in place is asked again. Only a native executable whose real file has the
    name it was found by: a script or a version manager's shim (asdf, mise) may answer by the folder
    it is run in or by a configuration file, so it is always asked."""
    key = _binary_key(path, question)
    entry = cache_dir() / "tool-facts" / key[:2] / f"{key}.json" if key else None
    if entry is not None:
        try:
            return str(json.loads(entry.read_text(encoding="utf-8"))["answer"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    answer = ask()
    if entry is not None and answer is not None:
        keep(entry, json.dumps({"tool": path, "question": question, "answer": answer}))
    return answer


def _binary_key(path: str, question: str) -> str | None:
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
        with open(real, "rb") as handle:
            magic = handle.read(4)
    except OSError:
        return None
    if not magic.startswith(_NATIVE) or os.path.basename(real) != os.path.basename(path):
        return None
    parts = ("tool-facts-1", os.path.abspath(path), real, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
             info.st_ino, info.st_dev, question)
    return hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "surrogateescape")).hexdigest()


def keep(entry: Path, text: str) -> None:
    """`text` written to a cache entry whole or not at all (another run may read it meanwhile); best
    effort: a read-only cache only means asking the tool, or rendering, again next time."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=entry.parent, delete=False) as handle:
            handle.write(text)
        os.replace(handle.name, entry)
    except OSError:
        pass


def kustomize_command() -> list[str] | None:
    """`kustomize build` where kustomize is installed, else `kubectl kustomize`."""
    kustomize = find_tool("kustomize")
    if kustomize:
        return [kustomize, "build"]
    kubectl = find_tool("kubectl")
    return [kubectl, "kustomize"] if kubectl else None
