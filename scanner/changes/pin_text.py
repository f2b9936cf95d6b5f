"""A version pin written for another release, in the style it was written in.

An exact version stays exact ("1.16.5" -> "1.17.0", "v2.5.1" -> "v2.6.0"); a pin that admits one
release line moves to the target line with every bound and wildcard kept (">=1.7.0 <1.8.0" ->
">=1.8.0 <1.9.0", "3.3.x" -> "3.4.x", "~1.7.0" -> "~1.8.0"). A pin that admits several lines, or
one kubehop cannot read, is not rewritten: None, and a person widens it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.semver import Interval, line_interval, parse_pin, parse_version

# A version literal inside a pin: optional v, up to three parts, a part may be a wildcard.
_LITERAL = re.compile(r"(?<![\w.])([vV]?)(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?![\w.+-])")
_EXACT = re.compile(r"^\s*=?\s*[vV]?\d+\.\d+\.\d+\s*$")


@dataclass(frozen=True)
class Target:
    """The release to write, in the pin's own numbering (a chart's, where it has its own)."""

    line: tuple[int, ...]  # (major,) or (major, minor): the release line
    patch: tuple[int, ...] = ()  # the parts after the line, for a bound at the line itself (1.8.2: (2,))
    exact: str | None = None  # the whole version an exact pin takes (None: not known)


def is_exact(pin: str) -> bool:
    return bool(_EXACT.match(pin))


def moved_pin(pin: str, target: Target) -> str | None:
    """`pin` moved to `target`, in its style; None when it cannot be said mechanically. The same pin
    when it already admits the target line and is not exact (it installs the newest there itself)."""
    if is_exact(pin):
        if target.exact is None:
            return None
        m = _LITERAL.search(pin)
        return pin[:m.start(2)] + target.exact.lstrip("vV") + pin[m.end():]
    intervals = parse_pin(pin)
    if not intervals or not _LITERAL.search(pin):
        return None
    precision = len(target.line)
    source = _line_of(intervals, precision)
    if source is None:
        return None  # several lines (">=0.22.0 <1.0.0"), or none: a person decides how far it reaches
    if source == target.line:
        return pin
    moved = _LITERAL.sub(lambda m: _moved_literal(m, source, target), pin)
    wanted = line_interval(".".join(map(str, target.line)))
    check = parse_pin(moved)
    if not check or wanted is None or _line_of(check, precision) != target.line:
        return None
    return moved


def _line_of(intervals: list[Interval], precision: int) -> tuple[int, ...] | None:
    """The one release line (at `precision` parts) every interval lies in; None if not one."""
    low = min(i.low for i in intervals)
    line = tuple(low[:precision])
    bounds = line_interval(".".join(map(str, line)))
    if bounds is None or any(i.low < bounds.low or i.high > bounds.high for i in intervals):
        return None
    return line


def _moved_literal(m: re.Match, source: tuple[int, ...], target: Target) -> str:
    prefix, *raw = m.group(1), m.group(2), m.group(3), m.group(4)
    parts = [p for p in raw if p is not None]
    numbers = [int(p) if p.isdigit() else None for p in parts]
    precision = len(source)
    head = numbers[:precision] + [0] * (precision - len(numbers[:precision]))
    if None in head:
        return m.group(0)  # a wildcard inside the line ("1.x" on a minor line): left as it is
    offset = [h - s for h, s in zip(head, source)]
    if all(o == 0 for o in offset):
        new_head, tail = list(target.line), list(target.patch)
    else:
        new_head = [target.line[0] + offset[0], *(t + o for t, o in zip(target.line[1:], offset[1:]))]
        tail = []
    written = []
    for index, part in enumerate(parts):
        if index < precision:
            written.append(str(new_head[index]))
        elif not part.isdigit():
            written.append(part)  # a wildcard keeps its place and its letter
        else:
            at = index - precision
            written.append(str(tail[at]) if at < len(tail) else "0")
    return prefix + ".".join(written)


def with_version(url: str, old: str, new: str) -> str | None:
    """A release URL with its version moved (?ref=v8.2.0, /releases/download/v1.2.1/); None when
    `old` is not there exactly once."""
    pattern = re.compile(r"(?<=[?&]ref=)" + re.escape(old) + r"(?=$|[&#])|(?<=[?&]version=)" + re.escape(old)
                         + r"(?=$|[&#])|(?<=/releases/download/)" + re.escape(old) + r"(?=/)")
    found = list(pattern.finditer(url))
    if len(found) != 1:
        return None
    return url[:found[0].start()] + new + url[found[0].end():]


def version_parts(version: str) -> tuple[int, int, int] | None:
    parsed = parse_version(version)
    return parsed.floor if parsed is not None else None
