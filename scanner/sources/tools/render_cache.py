"""Rendered output kept between scans, keyed by everything that shapes it.

A key is a SHA-256 over the chart's files (names and bytes), the values, the target minor, the
APIs it serves and the tool's version: change any of them and the chart renders again. The tool's
own failure on such inputs is kept too (the same inputs fail the same way).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from scanner.sources.tools.find import cache_dir, keep


def folder_digest(folder: str, follow_links: bool = False) -> str:
    """`follow_links`: into linked folders too (a copy made of links, whose own tree has no loop)."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(folder, followlinks=follow_links):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(top, name)
            digest.update(os.fsencode(os.path.relpath(path, folder)) + b"\0")  # a name that is no UTF-8 too
            try:
                with open(path, "rb") as handle:
                    digest.update(handle.read())
            except OSError:
                digest.update(b"\1unreadable")
            digest.update(b"\0")
    return digest.hexdigest()


def cache_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def _entry(key: str, suffix: str = ".yaml") -> Path:
    return cache_dir() / "renders" / key[:2] / f"{key}{suffix}"


def load(key: str) -> str | None:
    return _read(_entry(key))


def load_failure(key: str) -> str | None:
    """The tool's error message for these inputs, when it failed on them before."""
    return _read(_entry(key, ".error"))


def store_failure(key: str, message: str) -> None:
    """Only for the tool's own verdict on its input, which the key covers: never for a time or
    memory limit, which another run may not hit."""
    store(key, message, ".error")


def _read(entry: Path) -> str | None:
    try:
        return entry.read_text(encoding="utf-8")
    except OSError:
        return None


def store(key: str, text: str, suffix: str = ".yaml") -> None:
    """Best effort: a read-only cache only costs a re-render next time."""
    keep(_entry(key, suffix), text)
