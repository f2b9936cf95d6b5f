"""Keep a file's layout: only the lines an edit changes may differ from the original.

ruamel.yaml keeps comments, key order and quoting, but re-indents or re-spaces some
constructs when it writes a document back. So the edit is taken as the difference
between ruamel's output before and after the change, and applied to the original lines:
lines ruamel laid out differently are only replaced when they touch a changed line.
"""

from __future__ import annotations

import io
import re
from difflib import SequenceMatcher
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.util import load_yaml_guess_indent

_DASH = re.compile(r"^( *)-( +)\S")


def round_trip(text: str) -> YAML:
    """A ruamel.yaml instance writing with the document's own indentation and no line folding."""
    _, indent, _ = load_yaml_guess_indent(text)
    indent = indent or 2
    sequence, offset = _sequence_layout(text.split("\n")) or (indent, 0)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=indent, sequence=sequence, offset=offset)
    return yaml


def _sequence_layout(lines: list[str]) -> tuple[int, int] | None:
    """(item content, dash) columns relative to the parent key, from the first block sequence."""
    parent = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        dash = _DASH.match(line)
        if dash and parent is not None and parent.rstrip().endswith(":"):
            key_column = len(parent) - len(parent.lstrip(" -"))
            dash_column = len(dash[1])
            return dash_column + 1 + len(dash[2]) - key_column, dash_column - key_column
        parent = line
    return None


def dump(yaml: YAML, document: Any) -> list[str]:
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue().split("\n")[:-1]


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
        result.extend(after[a1:a2])
        done = end
    result.extend(original[done:])
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
