"""The upgrade orders of each plan window (scanner.orders.write), in the plan's text, Markdown and JSON.

Paths and order names come from the scanned tree: Markdown escapes them, and a diff is fenced with
more backticks than it holds, so a manifest cannot close the fence.
"""

from __future__ import annotations

import re

from scanner.report.markdown import escape
from scanner.paths import repo_path

_TICKS = re.compile(r"`+")


def _location(plan, written) -> str:
    return f"{plan.orders_folder.rstrip('/')}/{written.path}" if plan.orders_folder else repo_path(written.based_on)


def text_lines(plan, window) -> list[str]:
    lines = []
    for written in window.orders:
        verb = "written to" if plan.orders_folder else "in"
        lines.append(f"     upgrade orders {verb} {_location(plan, written)}:")
        lines.extend(f"       {what}" for what in written.orders)
        lines.extend(f"       note: {note}" for note in written.notes)
    return lines


def _code(text: str) -> str:
    """A code span around text from the tree: nothing in it renders as a link, a mention or HTML."""
    text = " ".join(text.split())
    fence = "`" * (1 + max((len(t) for t in _TICKS.findall(text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_lines(plan, window) -> list[str]:
    lines = []
    for written in window.orders:
        what = "; ".join(_code(w) for w in written.orders)
        lines.append(f"  - {_code(_location(plan, written))}: {what}")
        lines.extend(f"  - ⚠️ {escape(note)}" for note in written.notes)
        if written.diff:
            fence = "`" * max(3, 1 + max((len(t) for t in _TICKS.findall(written.diff)), default=0))
            lines += ["", "    <details><summary>the change</summary>", "", f"    {fence}diff",
                      *(f"    {line}" for line in written.diff.splitlines()), f"    {fence}", "", "    </details>", ""]
    return lines


def notes_lines(plan) -> list[str]:
    return [f"upgrade orders: {note}" for note in plan.order_notes]


def json_entries(plan, window) -> list[dict]:
    return [{"file": _location(plan, w), "based_on": repo_path(w.based_on), "orders": list(w.orders), "notes": list(w.notes)}
            for w in window.orders]
