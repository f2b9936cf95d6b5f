"""`kubehop fix`'s diff: a patch `git apply` takes, that prints nothing a terminal or a CI log acts on.

A file name is written as git writes it: as it is when it is plain, else C-quoted ("a/x\\ny.yaml",
other bytes in octal, core.quotePath's default), which `git apply` reads back. So a newline in a
file name cannot start a line, and a control or bidirectional character shows as its bytes; a name
holding `##[` is quoted too, with the `[` in octal, so the header holds no workflow command.
The lines of the files are the patch itself and cannot be escaped: a diff that would print one that
a log or a terminal acts on (see `unsafe_line`) is not printed (the CLI says so, and --write applies it).

It takes time linear in the file: difflib over a whole file of thousands of migrated documents
matched lines across all of them (the 3,000 Ingresses of one file took minutes). fix knows which
documents it changed (FileFix.pieces), and its text edits which of their lines; only a document
rewritten by ruamel.yaml is compared line by line, on its own. The hunks are cut from those pieces
as difflib cuts them (three lines of context).
"""

from __future__ import annotations

import difflib
import os
from typing import Iterator, Sequence

from scanner.fix.result import Piece
from scanner.report.plain import UNSAFE

_CONTEXT = 3

# The C escapes git's quote_c_style writes; other control bytes, DEL and every byte from 0x80 are octal.
_C_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
              0x22: '\\"', 0x5C: "\\\\"}
_ALLOWED_IN_A_LINE = {0x09}  # a tab is only a blank, in a log as in a terminal
_UNSAFE_IN_A_LINE = frozenset(chr(code) for code in UNSAFE if code not in _ALLOWED_IN_A_LINE)


def quoted_name(name: str) -> str:
    """`name` as git prints it in a patch header (a str from the file system: its bytes are os.fsencode's)."""
    raw = os.fsencode(name)
    if not any(byte < 0x20 or byte >= 0x7F or byte in (0x22, 0x5C) for byte in raw) and b"##[" not in raw:
        return name
    out = []
    for n, byte in enumerate(raw):
        if byte in _C_ESCAPES:
            out.append(_C_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F or (byte == 0x5B and raw[max(n - 2, 0):n] == b"##"):
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'


def unified_diff(name: str, original: str, fixed: str, pieces: Sequence[Piece]) -> str:
    """A diff of the file `name` (relative, as the headers show it) that `git apply` takes; lines are
    split on newlines only (YAML may hold U+2028 in strings). A last line without a newline is marked
    as diff(1) and git mark it, so the diff still ends with one."""
    before, after = _lines(original), _lines(fixed)
    out: list[str] = []
    for group in _Grouping(list(_opcodes(before, after, pieces))).get_grouped_opcodes(_CONTEXT):
        if not out:
            out += [f"--- {quoted_name(f'a/{name}')}\n", f"+++ {quoted_name(f'b/{name}')}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, b1, b2, a1, a2 in group:
            if tag == "equal":
                out += (" " + line for line in before[b1:b2])
                continue
            out += ("-" + line for line in before[b1:b2])
            out += ("+" + line for line in after[a1:a2])
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _lines(text: str) -> list[str]:
    *complete, last = text.split("\n")
    return [line + "\n" for line in complete] + ([last] if last else [])


def _range(start: int, stop: int) -> str:
    """As difflib writes a hunk's range: `start,length`, 1-based; an empty range names the line before."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


class _Grouping(difflib.SequenceMatcher):
    """difflib's hunk grouping over opcodes found otherwise."""

    def __init__(self, opcodes: list[tuple[str, int, int, int, int]]):
        super().__init__(None, [], [], autojunk=False)  # nothing for difflib to index
        self._opcodes = opcodes

    def get_opcodes(self):  # noqa: D102 - difflib's
        return self._opcodes


def _opcodes(before: list[str], after: list[str], pieces: Sequence[Piece]) -> Iterator[tuple[str, int, int, int, int]]:
    """difflib's opcodes for the whole files, equal runs merged."""
    pending: list[int] | None = None  # an equal run not given out yet

    def equal(b1: int, b2: int, a1: int, a2: int) -> None:
        nonlocal pending
        if b2 > b1:
            pending = [pending[0], b2, pending[2], a2] if pending else [b1, b2, a1, a2]

    done_before = done_after = 0
    for b1, b2, a1, a2, changes in pieces:
        equal(done_before, b1, done_after, a1)
        if changes is None:  # rewritten by ruamel.yaml: compared line by line
            found = [(tag, b1 + i1, b1 + i2, a1 + j1, a1 + j2) for tag, i1, i2, j1, j2 in
                     difflib.SequenceMatcher(None, before[b1:b2], after[a1:a2], autojunk=False).get_opcodes()]
        else:
            found, at_before, at_after = [], b1, a1
            for i1, i2, j1, j2 in changes:
                found.append(("equal", at_before, b1 + i1, at_after, a1 + j1))
                found.append((_tag(i2 - i1, j2 - j1), b1 + i1, b1 + i2, a1 + j1, a1 + j2))
                at_before, at_after = b1 + i2, a1 + j2
            found.append(("equal", at_before, b2, at_after, a2))
        for tag, i1, i2, j1, j2 in found:
            if tag == "equal":
                equal(i1, i2, j1, j2)
                continue
            if pending:
                yield ("equal", *pending)
                pending = None
            yield tag, i1, i2, j1, j2
        done_before, done_after = b2, a2
    equal(done_before, len(before), done_after, len(after))
    if pending:
        yield ("equal", *pending)


def _tag(removed: int, added: int) -> str:
    return "replace" if removed and added else "delete" if removed else "insert"


def unsafe_line(diff: str) -> int | None:
    """The number (from 1) of the first line of `diff` that a CI log or a terminal would act on: one
    that starts with `::` after blanks, holds `##[`, or holds a control, bidirectional or separator
    character (a tab aside, and the carriage return that ends a line of a CRLF file); None: none is."""
    for number, line in enumerate(diff.split("\n"), start=1):
        body = line.removesuffix("\r")
        if body.lstrip().startswith("::") or "##[" in body or not _UNSAFE_IN_A_LINE.isdisjoint(body):
            return number
    return None
