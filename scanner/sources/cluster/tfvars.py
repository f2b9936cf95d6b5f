"""The cluster's Kubernetes version as an OpenTofu/Terraform variable definitions file (`*.tfvars`) sets it.

Which assignments say it is data (rules/cluster-version.yaml `tfvars`: a dotted path of keys,
`versions.kubernetes` for `versions = { kubernetes = "1.35.2" }`). The file is read as far as that
needs: top-level assignments and the objects `{ ... }` they open, each key `=` or `:` a value; only
a double-quoted string with no `${...}` template in it is a value kubehop reads (an expression, a
variable, a list item, a heredoc is none). Anything else is stepped over, never evaluated, and a file
that does not read as HCL gives nothing: its version is simply not known from it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator, NamedTuple

from scanner import data
from scanner.model import Origin
from scanner.sources.yaml.jsonc import string_end

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MAX_DEPTH = 64  # deeper nesting is not an assignment a person writes a version in


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "string", "=", "{", "}", "[", "]", "other"
    text: str
    line: int  # from 1
    column: int  # from 1


@functools.cache
def _paths() -> frozenset[tuple[str, ...]]:
    rules = data.load("rules/cluster-version.yaml")
    return frozenset(tuple(entry["path"].split(".")) for entry in rules.get("tfvars", ()))


class VersionAssignment(NamedTuple):
    """A cluster version as a .tfvars file assigns it (scanner.components.cluster_pin.version_pin
    makes it a pin: a source reads, the components layer judges)."""
    version: str
    origin: Origin
    what: str


def tfvars_versions(path: str, text: str) -> list[VersionAssignment]:
    """The cluster versions the assignments of one .tfvars file set, as written."""
    wanted = _paths()
    return [VersionAssignment(token.text, Origin(path, token.line, token.column), f"variable {'.'.join(keys)}")
            for keys, token in _assignments(list(_tokens(text))) if keys in wanted]


def _assignments(tokens: list[_Token]) -> Iterator[tuple[tuple[str, ...], _Token]]:
    """(path of keys, string token) of each `key = "string"`; a key inside a list or an expression has no path."""
    stack: list[str | None] = []  # the keys of the objects open; None: a list, or an object no key opened
    i = 0
    while i < len(tokens):
        token = tokens[i]
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        value = tokens[i + 2] if i + 2 < len(tokens) else None
        if token.kind in ("name", "string") and after is not None and after.kind == "=" and value is not None:
            key = token.text
            if value.kind == "{" and len(stack) < _MAX_DEPTH:
                stack.append(key)
                i += 3
                continue
            if value.kind == "string" and None not in stack:
                yield (*stack, key), value  # type: ignore[misc]
                i += 3
                continue
            i += 2
            continue
        if token.kind in ("{", "[") and len(stack) < _MAX_DEPTH:
            stack.append(None)
        elif token.kind in ("}", "]") and stack:
            stack.pop()
        i += 1


def _tokens(text: str) -> Iterator[_Token]:
    """HCL's tokens as far as assignments need them; comments and heredocs dropped."""
    lines = text.split("\n")
    line_no = 0
    while line_no < len(lines):
        line, column = lines[line_no], 0
        while column < len(line):
            char = line[column]
            if char in " \t\r,":
                column += 1
            elif char == "#" or line.startswith("//", column):
                break
            elif line.startswith("/*", column):
                line_no, column = _block_comment_end(lines, line_no, column)
                line = lines[line_no] if line_no < len(lines) else ""
            elif line.startswith("<<", column):
                marker = line[column + 2:].lstrip("-").strip()
                line_no = _heredoc_end(lines, line_no, marker)
                yield _Token("other", "", line_no + 1, 1)
                break
            elif char == '"':
                end, literal = _string(line, column)
                yield _Token("string" if literal is not None else "other", literal or "", line_no + 1, column + 1)
                column = end
            elif char in "=:":
                yield _Token("=", char, line_no + 1, column + 1)
                column += 1
            elif char in "{}[]":
                yield _Token(char, char, line_no + 1, column + 1)
                column += 1
            else:
                match = _IDENT.match(line, column)
                if match:
                    yield _Token("name", match.group(0), line_no + 1, column + 1)
                    column = match.end()
                else:
                    yield _Token("other", char, line_no + 1, column + 1)
                    column += 1
        line_no += 1


def _string(line: str, start: int) -> tuple[int, str | None]:
    """Where the string opened at `start` ends, and its text when it is a plain literal (no template,
    no escape but \\" and \\\\, closed on its line)."""
    out, column = [], start + 1
    while column < len(line):
        char = line[column]
        if char == "\\":
            nxt = line[column + 1:column + 2]
            if nxt not in ('"', "\\"):
                return string_end(line, start), None
            out.append(nxt)
            column += 2
        elif char == '"':
            text = "".join(out)
            return column + 1, (None if "${" in text or "%{" in text else text)
        else:
            out.append(char)
            column += 1
    return len(line), None


def _block_comment_end(lines: list[str], line_no: int, column: int) -> tuple[int, int]:
    """The line and column just past the `*/` closing the comment opened at `column`."""
    start = column + 2
    while line_no < len(lines):
        end = lines[line_no].find("*/", start)
        if end != -1:
            return line_no, end + 2
        line_no, start = line_no + 1, 0
    return line_no, 0


def _heredoc_end(lines: list[str], line_no: int, marker: str) -> int:
    for index in range(line_no + 1, len(lines)):
        if marker and lines[index].strip() == marker:
            return index
    return len(lines)
