"""Rewrite one scalar of a YAML (or JSON) file where it stands, every other byte kept.

The scalar is found at the line and column its node starts at (what kubehop reports a pin at);
its quoting stays. Only a scalar on one line is rewritten, and only when the text there reads
back as the value kubehop read: anything else (a block scalar, an escape, a value a render or a
kustomize build moved) is refused with the reason, and the step is left to a person.
"""

from __future__ import annotations

import re

import yaml

_PLAIN_END = re.compile(r"\s+#|\s*$")
_UNSAFE_PLAIN_START = tuple("-?:,[]{}#&*!|>'\"%@`")


class NotEditable(Exception):
    """The scalar cannot be rewritten in place; the message says why."""


def replace_scalar(text: str, line: int, column: int, expected: str, new: str) -> str:
    """`text` with the scalar at `line`:`column` (from 1), whose value is `expected`, set to `new`."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        raise NotEditable(f"line {line} is not in the file")
    raw = lines[line - 1]
    body, cr = (raw[:-1], "\r") if raw.endswith("\r") else (raw, "")
    start = column - 1
    if not 0 <= start < len(body):
        raise NotEditable(f"column {column} is not on line {line}")
    begin, end, style = _token(body, start, expected)
    replacement = _written(new, style, body[begin:end], expected)
    lines[line - 1] = body[:begin] + replacement + body[end:] + cr
    return "\n".join(lines)


def _token(body: str, start: int, expected: str) -> tuple[int, int, str]:
    """Where the scalar's text is on the line (without its quotes), and its style."""
    first = body[start]
    if first in "\"'":
        close = body.find(first, start + 1)
        if first == "'" and close != -1 and body[close + 1:close + 2] == "'":
            raise NotEditable("its single-quoted value holds an escaped quote")
        if close == -1:
            raise NotEditable("its quoted value goes on past the line")
        inner = body[start + 1:close]
        if first == '"' and "\\" in inner:
            raise NotEditable("its double-quoted value holds an escape")
        if inner != expected:
            raise NotEditable(f"the file holds {inner!r} there, not {expected!r}")
        return start + 1, close, first
    if first in "|>":
        raise NotEditable("it is a block scalar")
    rest = body[start:]
    for end in (_PLAIN_END.search(rest).start(), *(i for i, c in enumerate(rest) if c in ",]}")):
        if rest[:end].rstrip() == expected:
            return start, start + len(expected), ""
    raise NotEditable(f"the file holds {rest.strip()!r} there, not {expected!r}")


def _written(new: str, style: str, old: str, expected: str) -> str:
    """`new` as the scalar's text in its style; NotEditable when that style cannot hold it as it is."""
    if style == '"':
        if any(c in new for c in '"\\') or not new.isprintable():
            raise NotEditable(f"{new!r} cannot be written double-quoted as it is")
        return new
    if style == "'":
        if "'" in new or not new.isprintable():
            raise NotEditable(f"{new!r} cannot be written single-quoted as it is")
        return new
    if not new or new.startswith(_UNSAFE_PLAIN_START) or ": " in new or " #" in new or not new.isprintable():
        raise NotEditable(f"{new!r} cannot be written unquoted")
    if _plain_value(new) != new and _plain_value(old) == old:
        raise NotEditable(f"unquoted, {new!r} would be read as {_plain_value(new)!r}: quote it by hand")
    if _plain_value(old) != old and str(_plain_value(new)) != new:
        raise NotEditable(f"unquoted, {new!r} would be read as {_plain_value(new)!r}: quote it by hand")
    return new


def _plain_value(value: str):
    try:
        return yaml.safe_load(f"k: {value}")["k"]
    except yaml.YAMLError:
        return None
