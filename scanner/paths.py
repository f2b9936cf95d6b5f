"""How kubehop names a file wherever it shows one (findings, notices, every report): relative to the repository root, with forward slashes.

The root is the git work tree that holds the file (the nearest folder upward with a `.git`, as
git finds it), else the working directory. Code scanning, workflow annotations and a reviewer all
resolve paths from the checkout root, so `kubehop scan .` in a subfolder and `kubehop scan
/checkout/platform` from elsewhere name a file the same way, in every format. A file outside any
such root (a values file in /tmp) keeps its absolute path. (What kubehop may read, the repository's
end for what the tree names, is scanner.containment's.)
"""

from __future__ import annotations

import os

from scanner.containment import git_top, within
from scanner.model import STDIN_PATH, Origin


def repo_root(path: str) -> str | None:
    """The root `repo_path` names `path` from; None for standard input and files outside every root."""
    if path == STDIN_PATH:
        return None
    return _root_of(os.path.abspath(path))


def _root_of(absolute: str) -> str | None:
    root = git_top(os.path.dirname(absolute)) or os.getcwd()
    return root if within(absolute, root) else None


def repo_path(path: str) -> str:
    """`path` relative to its repository root, else absolute; standard input stays `<stdin>`."""
    if path == STDIN_PATH:
        return path
    absolute = os.path.abspath(path)
    root = _root_of(absolute)
    if root is None:
        return absolute.replace(os.sep, "/")
    # What os.path.relpath gives for a normalised path inside root, without normalising both again.
    relative = "." if absolute == root else absolute[len(os.path.join(root, "")):]
    return relative.replace(os.sep, "/")


def where(path: str, line: int | None = None, column: int | None = None) -> str:
    """`path:line:column` as a person types it into an editor; a missing line or column is left out."""
    return ":".join([repo_path(path), *(str(n) for n in (line, column) if n)])


def at(origin: Origin) -> str:
    return where(origin.path, origin.line, origin.column)
