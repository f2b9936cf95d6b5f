"""The unified diff `kubehop fix` prints, in time linear in the file.

difflib over a whole file of thousands of migrated documents matches lines across all of them: the
3,000 Ingresses of one file took minutes. fix knows which documents it changed (FileFix.pieces), and
the text edits which of their lines: only a document rewritten by ruamel.yaml is compared line by line,
on its own; the hunks are cut from the pieces as difflib cuts them (three lines of context). Lines are
split on newlines only (YAML may hold U+2028 in strings).
"""

from __future__ import annotations

import difflib
from typing import Iterator, Sequence

_CONTEXT = 3

Piece = tuple[int, int, int, int, "list[tuple[int, int, int, int]] | None"]


def unified_diff(original: str, fixed: str, old_name: str, new_name: str, pieces: Sequence[Piece]) -> str:
    """A diff `git apply` takes; a last line without a newline is marked as diff(1) and git mark it,
    so the diff still ends with one."""
    before, after = _lines(original), _lines(fixed)
    out: list[str] = []
    for group in _Pieces(list(_opcodes(before, after, pieces))).get_grouped_opcodes(_CONTEXT):
        if not out:
            out += [f"--- {old_name}\n", f"+++ {new_name}\n"]
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


class _Pieces(difflib.SequenceMatcher):
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
