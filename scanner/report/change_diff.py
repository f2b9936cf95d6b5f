"""A window's change set as one unified diff `git apply` takes (from the repository's top).

Each file as every report names it (relative to its Git work tree, else the working folder), quoted
as git quotes it (scanner.report.patch); a file the change set adds is a creation (`--- /dev/null`).
A file whose diff would print a line a CI log or a terminal acts on is left out of the printed diff
and named (`--write` applies it), as `kubehop fix` does.
"""

from __future__ import annotations

from scanner.changes.model import ChangeSet, FileChange
from scanner.report import patch
from scanner.paths import repo_path


def render(change_set: ChangeSet) -> tuple[str, list[str]]:
    """The diff, and the files left out of it with why."""
    out, left_out = [], []
    for change in change_set.files:
        diff = file_diff(change)
        unsafe = patch.unsafe_line(diff)
        if unsafe is not None:
            left_out.append(f"{repo_path(change.path)}: its diff is not printed: line {unsafe} of it would be read as a "
                            "command by a CI log or a terminal; `kubehop plan --window N --write` applies it")
            continue
        out.append(diff)
    return "".join(out), left_out


def file_diff(change: FileChange) -> str:
    name = repo_path(change.path)
    bom = "\ufeff" if change.bom else ""  # the file's first line holds it: git apply matches it there
    before, after = bom + (change.original or ""), bom + change.text
    diff = patch.unified_diff(name, before, after, _pieces(_lines(before), _lines(after)))
    if change.original is None:  # a creation: git apply wants /dev/null as the old side
        first, rest = diff.split("\n", 1)
        diff = f"--- /dev/null\n{rest}"
    return diff


def _lines(text: str) -> list[str]:
    """The lines as the diff counts them (patch.unified_diff): a last line without a newline counts."""
    *complete, last = text.split("\n")
    return complete + ([last] if last else [])


def _pieces(before: list[str], after: list[str]) -> list[tuple]:
    """Where the texts differ, for patch.unified_diff (in time linear in the file): line for line where
    the edits kept the line count (pin edits do), else the span between the common head and tail,
    compared line by line."""
    if len(before) == len(after):
        return [(i, i + 1, i, i + 1, [(0, 1, 0, 1)]) for i, (b, a) in enumerate(zip(before, after)) if b != a]
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return [(head, len(before) - tail, head, len(after) - tail, None)]
