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
    absolute = os.path.abspath(path)
    root = git_top(os.path.dirname(absolute)) or os.getcwd()
    return root if within(absolute, root) else None


def repo_path(path: str) -> str:
    """`path` relative to its repository root, else absolute; standard input stays `<stdin>`."""
    root = repo_root(path)
    if root is None:
        return path if path == STDIN_PATH else os.path.abspath(path).replace(os.sep, "/")
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


def where(path: str, line: int | None = None, column: int | None = None) -> str:
    """`path:line:column` as a person types it into an editor; a missing line or column is left out."""
    return ":".join([repo_path(path), *(str(n) for n in (line, column) if n)])


def at(origin: Origin) -> str:
    return where(origin.path, origin.line, origin.column)
