"""A Markdown report as a pull-request comment: under GitHub's 65,536 characters, or cut and said so.

A report is a head (the verdict and the summary tables, always kept), parts in reading order, and a
tail (input problems, notices, the footer, always kept). Past the limit the parts that do not fit
are left out from the first one that does not, a note says how many findings that hides, and the
CLI writes the whole report to a file beside the comment (`report.md` -> `report.full.md`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from scanner.report import md
from scanner.words import count

LIMIT = 65_536  # characters in an issue or pull-request comment
_ROOM = 600  # kept free for the note that says the comment was cut


@dataclass(frozen=True)
class Part:
    text: str  # Markdown lines, each ending with a newline
    findings: int = 0  # how many findings (or plan items) it lists


def size(text: str) -> int:
    """Characters as GitHub counts them at most (UTF-16 code units: an emoji may be two)."""
    return len(text.encode("utf-16-le")) // 2


def fit(head: str, parts: list[Part], tail: str, limit: int | None, full_report: str | None,
        what: str = "finding") -> str:
    """head + the parts that fit + a note about the rest + tail; everything when `limit` is None.
    Every piece goes out through md.document (its sizes are what is written)."""
    head, tail = md.document(head), md.document(tail)
    parts = [Part(md.document(part.text), part.findings) for part in parts]
    budget = None if limit is None else limit - size(head) - size(tail) - _ROOM
    kept: list[str] = []
    for n, part in enumerate(parts):
        if budget is not None and size(part.text) > budget:
            hidden = sum(p.findings for p in parts[n:])
            kept.append(_cut_note(hidden, what, full_report))
            break
        kept.append(part.text)
        if budget is not None:
            budget -= size(part.text)
    return head + "".join(kept) + tail


def _cut_note(hidden: int, what: str, full_report: str | None) -> str:
    where = (f"the full report is in `{full_report}`, written beside this one" if full_report else
             "write the full report with `--output-file FILE` (it goes to FILE.full.md), or see the JSON report")
    return (f"\n> ✂️ **This comment is cut** to fit GitHub's limit of {LIMIT:,} characters: "
            f"{count(hidden, 'more ' + what)} {'is' if hidden == 1 else 'are'} not shown here; {where}.\n")


def full_path(path: str) -> str:
    """Where the uncut report goes: beside the comment, `.full` before the extension."""
    stem, extension = os.path.splitext(path)
    return f"{stem}.full{extension or '.md'}"


def outputs(render: Callable[[int | None, str | None], str], path: str | None) -> list[tuple[str | None, str]]:
    """(file, text) to write: the comment at `path` (None: standard output) and, when it had to be cut
    and there is a file to put it beside, the full report. `render(limit, full_report_name)`."""
    full = render(None, None)
    if size(full) <= LIMIT:
        return [(path, full)]
    if path is None:
        return [(None, render(LIMIT, None))]
    beside = full_path(path)
    return [(path, render(LIMIT, os.path.basename(beside))), (beside, full)]
