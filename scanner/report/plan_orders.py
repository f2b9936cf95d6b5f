"""The upgrade orders of each plan window (scanner.orders.write), in the plan's text, Markdown and JSON.

Paths and order names come from the scanned tree: Markdown escapes them (scanner.report.md), and a
diff is fenced with more backticks than it holds, so a manifest cannot close the fence.
"""

from __future__ import annotations

from scanner.paths import repo_path


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


def markdown_lines(plan, window) -> list[str]:
    from scanner.report import md  # here: the text and JSON plans need no Markdown escaping

    lines = []
    for written in window.orders:
        what = "; ".join(md.code(w, in_table=False) for w in written.orders)
        lines.append(f"  - {md.code(_location(plan, written), in_table=False)}: {what}")
        lines.extend(f"  - ⚠️ {md.text(note)}" for note in written.notes)
        if written.diff:
            diff = [line.removesuffix("\r") for line in written.diff.removesuffix("\n").split("\n")]
            lines += ["", "    <details><summary>the change</summary>", "",
                      *(f"    {line}" for line in md.fenced(diff, "diff")), "", "    </details>", ""]
    return lines


def notes_lines(plan) -> list[str]:
    return [f"upgrade orders: {note}" for note in plan.order_notes]


def json_entries(plan, window) -> list[dict]:
    return [{"file": _location(plan, w), "based_on": repo_path(w.based_on), "orders": list(w.orders), "notes": list(w.notes)}
            for w in window.orders]
