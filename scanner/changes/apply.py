"""Writing a change set into the tree, each file as `kubehop fix --write` writes one: a temporary file
beside it, renamed over it (scanner.fix.write: never through a second hard link, never a file that is
not a regular one). A file it adds is created, never written over one that appeared meanwhile.
Every file is inside the scanned tree, its symbolic links resolved, or it is not written.
"""

from __future__ import annotations

import os

from scanner.changes.model import ChangeSet, FileChange
from scanner.containment import inside
from scanner.fix.write import NotWritten, write_fixed
from scanner.sources.files.walk import read_file


def apply(change_set: ChangeSet, root: str) -> list[tuple[FileChange, str]]:
    """Write every file of the change set; the files left as they were, with why."""
    left = []
    for change in change_set.files:
        try:
            _write(change, root)
        except NotWritten as why:
            left.append((change, str(why)))
        except OSError as err:
            left.append((change, f"cannot write: {err.strerror or err}"))
    return left


def _write(change: FileChange, root: str) -> None:
    folder = os.path.dirname(os.path.abspath(change.path))
    if not inside(folder, root) or (not change.new and not inside(change.path, root)):
        raise NotWritten("outside the scanned tree: not written")
    if not change.new:
        text, _ = read_file(change.path)  # non-blocking: a file swapped for a FIFO meanwhile does not hang it
        if text != change.original:
            raise NotWritten("changed since kubehop read it: not written; run again")
        write_fixed(change.path, ("\ufeff" if change.bom else "") + change.text)  # it writes the mark it is given
        return
    descriptor = os.open(change.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
        handle.write(change.text)
