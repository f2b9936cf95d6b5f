"""Kubernetes minor versions: parsing user input and stepping through hops."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_MINOR_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


class Minor(NamedTuple):
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def next(self) -> "Minor":
        return Minor(self.major, self.minor + 1)


def parse_minor(text: str) -> Minor:
    """'1.36', 'v1.36' and 'v1.36.2+k3s1' all mean minor 1.36."""
    if type(text) in (float, int) or (type(text) is str and len(text) <= 64):  # a short one, kept:
        return _parse_short(text)  # the data alone asks 1,700 times a run, for 40 minors
    return _parse(text)


@functools.lru_cache(maxsize=1024, typed=True)  # typed: 1 is no version, 1.0 is
def _parse_short(text: str | float | int) -> Minor:
    return _parse(text)


def _parse(text: str) -> Minor:
    m = _MINOR_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"not a Kubernetes version: {text!r}")
    return Minor(int(m.group(1)), int(m.group(2)))


def minor_range(first: Minor, last: Minor) -> list[Minor]:
    """Every minor from first to last, inclusive (Kubernetes 1.x only)."""
    return [Minor(first.major, n) for n in range(first.minor, last.minor + 1)]
