"""Keep a file's layout: only the lines an edit changes may differ from the original.

ruamel.yaml keeps comments, key order and quoting, but re-indents or re-spaces some
constructs when it writes a document back. So the edit is taken as the difference
between ruamel's output before and after the change, and applied to the original lines:
lines ruamel laid out differently are only replaced when they touch a changed line.
Used by every writer that edits a file of the tree: `kubehop fix` (scanner.fix) and the upgrade
orders a plan writes (scanner.orders.write).
"""

from __future__ import annotations

import io
import json
import re
from difflib import SequenceMatcher
from typing import Any

from ruamel.yaml import YAML

_DASH = re.compile(r"^( *)-( +)\S")


class Layout:
    """Reads a document with ruamel.yaml, and writes it back in the document's own style:
    its indentation for YAML; for a JSON document, JSON indented like it."""

    def __init__(self, text: str):
        lines = [line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]
        self.json_indent = _json_indent(lines) if text.lstrip().startswith(("{", "[")) else None
        mapping = mapping_indent(lines) or 2
        sequence, offset = _sequence_layout(lines) or (mapping, 0)
        self.yaml = YAML(typ="rt")
        self.yaml.preserve_quotes = True
        self.yaml.width = 1 << 16
        self.yaml.indent(mapping=mapping, sequence=sequence, offset=offset)

    def load(self, text: str) -> Any:
        return self.yaml.load(text)

    def dump(self, document: Any) -> list[str]:
        if self.json_indent is not None:
            return json.dumps(document, indent=self.json_indent or None, ensure_ascii=False).split("\n")
        out = io.StringIO()
        self.yaml.dump(document, out)
        return out.getvalue().split("\n")[:-1]


def _json_indent(lines: list[str]) -> int:
    """The indentation of a JSON document's second line; 0 when it is all on one line."""
    return len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 else 0


def _key_column(line: str) -> int:
    """Where a line's key starts, past any `- ` of a sequence item."""
    return len(line) - len(line.lstrip(" -"))


def mapping_indent(lines: list[str]) -> int | None:
    """How far the first nested block mapping is indented from its parent key."""
    for parent, child in zip(lines, lines[1:]):
        if parent.rstrip().endswith(":") and not child.lstrip().startswith("-"):
            step = _key_column(child) - _key_column(parent)
            if step > 0:
                return step
    return None


def _sequence_layout(lines: list[str]) -> tuple[int, int] | None:
    """(item content, dash) columns relative to the parent key, from the first block sequence."""
    for parent, child in zip(lines, lines[1:]):
        dash = _DASH.match(child)
        if dash and parent.rstrip().endswith(":"):
            key_column = _key_column(parent)
            dash_column = len(dash[1])
            return dash_column + 1 + len(dash[2]) - key_column, dash_column - key_column
    return None


def splice(original: list[str], before: list[str], after: list[str]) -> list[str]:
    """`original` with the edit `before` -> `after` applied (all three without line ends)."""
    aligned: dict[int, int] = {}  # line of `before` -> the identical line of `original`
    for tag, b1, b2, o1, _ in SequenceMatcher(None, before, original, autojunk=False).get_opcodes():
        if tag == "equal":
            aligned.update((b1 + k, o1 + k) for k in range(b2 - b1))
    result: list[str] = []
    done = 0  # lines of `original` already copied or replaced
    for b1, b2, a1, a2 in _hunks(before, after, aligned):
        start = aligned[b1 - 1] + 1 if b1 > 0 else 0
        end = aligned[b2] if b2 < len(before) else len(original)
        result.extend(original[done:start])
        result.extend(_apply(original[start:end], before[b1:b2], after[a1:a2]))
        done = end
    result.extend(original[done:])
    return result


def _apply(original: list[str], before: list[str], after: list[str]) -> list[str]:
    """One widened hunk: where ruamel re-laid out as many lines as there were, line for line,
    the lines the edit did not change are taken from the original."""
    if len(original) != len(before):
        return after
    result: list[str] = []
    for tag, b1, b2, a1, a2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        result.extend(original[b1:b2] if tag == "equal" else after[a1:a2])
    return result


def _hunks(before: list[str], after: list[str], aligned: dict[int, int]) -> list[list[int]]:
    """The changed blocks [b1, b2, a1, a2], widened until the lines around them are aligned."""
    changes = [[b1, b2, a1, a2] for tag, b1, b2, a1, a2 in
               SequenceMatcher(None, before, after, autojunk=False).get_opcodes() if tag != "equal"]
    hunks: list[list[int]] = []
    while changes:
        hunk = changes.pop(0)
        while hunk[0] > 0 and hunk[0] - 1 not in aligned:
            if hunks and hunks[-1][1] == hunk[0]:
                previous = hunks.pop()
                hunk = [previous[0], hunk[1], previous[2], hunk[3]]
            else:  # an unchanged line (before == after there): take ruamel's version of it
                hunk = [hunk[0] - 1, hunk[1], hunk[2] - 1, hunk[3]]
        while hunk[1] < len(before) and hunk[1] not in aligned:
            if changes and changes[0][0] == hunk[1]:
                following = changes.pop(0)
                hunk = [hunk[0], following[1], hunk[2], following[3]]
            else:
                hunk = [hunk[0], hunk[1] + 1, hunk[2], hunk[3] + 1]
        hunks.append(hunk)
    return hunks
