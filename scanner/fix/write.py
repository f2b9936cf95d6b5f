"""Writing a fixed file: into a temporary file beside it, then renamed over it; never through a
second hard link (its other name may be outside the tree, and would change too)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

_BOM = b"\xef\xbb\xbf"


class NotWritten(Exception):
    """The file was left as it is; the message says why (a notice, not an error)."""


def write_fixed(path: str, text: str) -> None:
    """Replace `path` with `text`, keeping its byte-order mark and permissions. OSError when it cannot be."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten("not a regular file: not rewritten")
    if info.st_nlink > 1:
        raise NotWritten(f"has {info.st_nlink} hard links: not rewritten (its other names would change too); "
                         "apply the diff by hand")
    with open(path, "rb") as handle:
        encoding = "utf-8-sig" if handle.read(3) == _BOM else "utf-8"
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path) or ".",
                                             prefix=f".{os.path.basename(path)}.", suffix=".kubehop")
    try:
        with os.fdopen(descriptor, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
