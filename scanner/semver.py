"""Version pins as Helm, Flux and Argo CD read them: exact versions and semver ranges.

A pin is turned into a union of half-open intervals of (major, minor, patch), so that the
question "which component minors can this pin install?" is an interval overlap. Prerelease
and build suffixes are ignored: a pin chooses releases, not builds.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

Version = tuple[int, int, int]
_INFINITY = 10**9
_TOP: Version = (_INFINITY, 0, 0)
_BOTTOM: Version = (0, 0, 0)

_VERSION = re.compile(r"^[vV]?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$")
_COMPARATOR = re.compile(r"(>=|<=|!=|=>|=<|>|<|=|~>|~|\^)?\s*([vV]?[\dxX*][^\s,]*)")
_HYPHEN = re.compile(r"^\s*(\S+)\s+-\s+(\S+)\s*$")


class Interval(NamedTuple):
    """[low, high): the versions a pin admits."""

    low: Version
    high: Version

    def overlaps(self, other: "Interval") -> bool:
        return self.low < other.high and other.low < self.high

    def intersect(self, other: "Interval") -> "Interval":
        return Interval(max(self.low, other.low), min(self.high, other.high))

    @property
    def empty(self) -> bool:
        return self.low >= self.high


class Partial(NamedTuple):
    """A version as written, where missing or wildcard parts are None ("1.2", "1.2.x")."""

    parts: tuple[int | None, int | None, int | None]

    @property
    def floor(self) -> Version:
        return tuple(p or 0 for p in self.parts)  # type: ignore[return-value]

    @property
    def precision(self) -> int:
        """How many leading parts are given."""
        count = 0
        for part in self.parts:
            if part is None:
                break
            count += 1
        return count

    def bump(self, position: int) -> Version:
        """The first version past this one at `position` (0 major, 1 minor, 2 patch)."""
        parts = list(self.floor)
        parts[position] += 1
        return tuple(parts[:position + 1] + [0] * (2 - position))  # type: ignore[return-value]


_MAX_DIGITS = 18  # a version part longer than this is no version (and past 4,300 digits int() refuses it)


def parse_version(text: str) -> Partial | None:
    m = _VERSION.match(str(text).strip())
    if not m or any(group is not None and len(group) > _MAX_DIGITS for group in m.groups()):
        return None
    parts: list[int | None] = []
    for group in m.groups():
        parts.append(int(group) if group is not None and group.isdigit() else None)
    # "1.x.3" means "1.x": nothing is kept after the first wildcard.
    for i, part in enumerate(parts):
        if part is None:
            parts[i + 1:] = [None] * (2 - i)
            break
    return Partial(tuple(parts))  # type: ignore[arg-type]


def parse_pin(text: str) -> list[Interval] | None:
    """The versions `text` admits, or None when it is not a version or a range."""
    text = str(text).strip()
    if text in ("", "*", "x", "X", "latest"):
        return [Interval(_BOTTOM, _TOP)]
    intervals: list[Interval] = []
    for alternative in text.split("||"):
        interval = _conjunction(alternative.strip())
        if interval is None:
            return None
        if not interval.empty:
            intervals.append(interval)
    return intervals


def _conjunction(text: str) -> Interval | None:
    hyphen = _HYPHEN.match(text)
    if hyphen:
        low, high = parse_version(hyphen.group(1)), parse_version(hyphen.group(2))
        if low is None or high is None:
            return None
        upper = high.bump(high.precision - 1) if high.precision < 3 else _after(high.floor)
        return Interval(low.floor, upper)
    result = Interval(_BOTTOM, _TOP)
    comparators = _COMPARATOR.findall(text)
    if not comparators or _COMPARATOR.sub("", text).strip(" ,"):
        return None  # something that is not a comparator: not a range kubehop can read
    for operator, operand in comparators:
        version = parse_version(operand)
        if version is None:
            return None
        result = result.intersect(_comparator_interval(operator, version))
    return result


def _after(version: Version) -> Version:
    return (version[0], version[1], version[2] + 1)


def _comparator_interval(operator: str, version: Partial) -> Interval:
    floor, precision = version.floor, version.precision
    # The versions "equal" to a partial version: 1.2 is every 1.2.z.
    ceiling = version.bump(precision - 1) if 0 < precision < 3 else _after(floor)
    if precision == 0:
        return Interval(_BOTTOM, _TOP)
    if operator in ("", "="):
        return Interval(floor, ceiling)
    if operator in (">=", "=>"):
        return Interval(floor, _TOP)
    if operator == ">":
        return Interval(ceiling, _TOP)
    if operator in ("<=", "=<"):
        return Interval(_BOTTOM, ceiling)
    if operator == "<":
        return Interval(_BOTTOM, floor)
    if operator in ("~", "~>"):
        return Interval(floor, version.bump(1 if precision >= 2 else 0))
    if operator == "^":
        return Interval(floor, _caret_ceiling(floor, precision))
    return Interval(_BOTTOM, _TOP)  # "!=" excludes one version: it never narrows a minor


def _caret_ceiling(floor: Version, precision: int) -> Version:
    """^1.2.3 < 2.0.0, ^0.2.3 < 0.3.0, ^0.0.3 < 0.0.4 (the first non-zero part is kept)."""
    major, minor, patch = floor
    if major > 0 or precision == 1:
        return (major + 1, 0, 0)
    if minor > 0 or precision == 2:
        return (0, minor + 1, 0)
    return (0, 0, patch + 1)


@functools.lru_cache(maxsize=16384)  # the data's lines, asked of every pin (Renovate's chart lists ~2,000)
def line_interval(prefix: str) -> Interval | None:
    """The versions of a release line: "1.16" is [1.16.0, 1.17.0), "65" is [65.0.0, 66.0.0)."""
    version = parse_version(prefix)
    if version is None or version.precision == 0:
        return None
    precision = min(version.precision, 2)
    return Interval(version.floor, version.bump(precision - 1))


def admits_line(pin: list[Interval], prefix: str) -> bool:
    line = line_interval(prefix)
    return line is not None and any(interval.overlaps(line) for interval in pin)


def floats(text: str) -> bool:
    """A pin with no upper bound ("*", ">=1.2"): it installs whatever is newest when it reconciles."""
    intervals = parse_pin(text)
    return intervals is not None and any(interval.high == _TOP for interval in intervals)
