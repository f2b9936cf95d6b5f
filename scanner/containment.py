"""Where the repository ends: kubehop reads nothing outside it.

The repository is the Git work tree that holds a path (the nearest folder upward with a `.git`, as
git finds it), else the scanned folder that holds it. Every path the tree names -- a kustomization's
reference, a Flux `Kustomization` path or `HelmRelease` chart path, a chart's `file://` dependency,
a configuration file's `rules`, `baseline` and `paths`, the configuration file itself -- is checked
here, the same way: resolved from the folder it is written in, symbolic links followed, and it must
stay inside. `leaves` says why one does not, in words a message can quote. Paths a user gives on the
command line are the user's own and are not checked.
"""

from __future__ import annotations

import os
from typing import Container, Iterable

from scanner import per_scan


@per_scan.cache(maxsize=4096)
def git_top(folder: str) -> str | None:
    """The nearest folder at or above `folder` (absolute) that holds a `.git`; None when there is none."""
    if os.path.exists(os.path.join(folder, ".git")):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else git_top(parent)


def nearest_folder(here: str, folders: Container[str]) -> str | None:
    """The nearest of `folders` at or above the folder `here` (normalised paths), else None."""
    while True:
        if here in folders:
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def within(path: str, root: str) -> bool:
    """Is `path` `root` itself or below it? Both absolute and normalised; nothing is resolved."""
    return path == root or path.startswith(os.path.join(root, ""))


def inside(path: str, root: str) -> bool:
    """Does `path`, its symbolic links resolved, stay in `root` (a real path)? A name holding a NUL
    names no file (realpath refuses it), so it is not inside anything."""
    if "\0" in path:
        return False
    return within(os.path.realpath(path), root)


def repository_root(path: str, scanned: Iterable[str] = ()) -> str:
    """The real path of the Git work tree holding `path`, else of the outermost scanned folder holding
    it, else of `path` itself (of its folder, for a file)."""
    real = os.path.realpath(path)
    top = git_top(real)
    if top is not None:
        return top
    holding = [r for r in (os.path.realpath(p) for p in scanned if p != "-" and os.path.isdir(p)) if within(real, r)]
    if holding:
        return min(holding, key=len)
    return real if os.path.isdir(real) else os.path.dirname(real)


def leaves(value: str, base: str, root: str) -> str | None:
    """None when `value`, a path written in a file of folder `base`, stays inside `root` (a real path);
    else why it does not, e.g. "leaves the repository (/r) with `..`"."""
    if "\0" in value:
        return "names no file (it holds a NUL character)"
    joined = os.path.join(os.path.realpath(base), value)
    written = os.path.normpath(joined)  # as kustomize and helm read it; the system resolves `link/..` first
    if not within(written, root):
        how = "as an absolute path" if os.path.isabs(value) else "with `..`"
        return f"leaves the repository ({root}) {how}"
    if not inside(written, root) or not inside(joined, root):
        return f"leaves the repository ({root}) through a symbolic link"
    return None
