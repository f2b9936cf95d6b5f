"""The plan as Markdown for a pull request or a CI step summary, with a Mermaid diagram of the windows.

Object names and messages about them come from the scanned files: they are escaped, as in the scan's
Markdown report, so a manifest cannot inject links or @-mentions.
"""

from __future__ import annotations

from scanner.plan import BLOCKER, WARNING, Migration, Plan, Window
from scanner.report import plan_orders
from scanner.report.markdown import escape
from scanner.report.plan_text import (blocker_labels, chains, header, journeys, migration_labels, problems,
                                      unknown_components, where)


def render(plan: Plan) -> str:
    lines = [f"## {header(plan)[0]}", ""]
    lines.extend(f"- {line.strip()}" for line in header(plan)[1:])
    lines += ["", "```mermaid", *_diagram(plan), "```", "", *_table(plan), "", *_components(plan), ""]
    for window in plan.windows:
        lines.extend(_window(plan, window))
    lines.extend(f"- {escape(note)}" for note in plan_orders.notes_lines(plan))
    verdict = f"**Blocked**: {plan.blocker_count} blocker(s)." if plan.blocked else "Nothing known blocks the target."
    lines.append(verdict)
    return "\n".join(lines) + "\n"


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def _diagram(plan: Plan) -> list[str]:
    lines = ["flowchart LR"]
    for window in plan.windows:
        moves = "<br/>".join(_label(c) for c in chains(window.before)) or "no moves"
        blockers = f"<br/>⛔ {', '.join(blocker_labels(window))}" if window.blocker_count else ""
        lines.append(f'  W{window.number}["W{window.number} · {window.source} → {window.target}'
                     f'<br/>{moves}{blockers}"]')
    lines.extend(f"  W{a.number} --> W{b.number}" for a, b in zip(plan.windows, plan.windows[1:]))
    blocked = [f"W{w.number}" for w in plan.windows if w.blocker_count]
    if blocked:
        lines += ["  classDef blocked fill:#fdd,stroke:#c00", f"  class {','.join(blocked)} blocked"]
    return lines


def _cell(items: list[str]) -> str:
    return "<br>".join(items) or "—"


def _table(plan: Plan) -> list[str]:
    lines = ["| Window | Hop | Move before the hop | Migrate before | Blockers | May move after |",
             "|---|---|---|---|---|---|"]
    for w in plan.windows:
        lines.append(f"| W{w.number} | {w.source} → {w.target} | {_cell(chains(w.before))} | "
                     f"{_cell(migration_labels(w.migrations))} | {_cell(blocker_labels(w))} | "
                     f"{_cell(chains(w.after))} |")
    return lines


def _migration(migration: Migration) -> str:
    rule = migration.rule
    objects = ", ".join(f"`{where(o.origin)}`" for o in migration.objects)
    return f"- [ ] migrate `{rule.api_version}` {rule.kind} → `{rule.replacement}` before {migration.before}: {objects}"


def _components(plan: Plan) -> list[str]:
    lines = ["| Component | Release | Stops at | Pinned at |", "|---|---|---|---|"]
    lines.extend(f"| {name} | {journey} | {stop or '—'} | `{pin}` |" for name, journey, pin, stop in journeys(plan))
    return lines


def _window(plan: Plan, window: Window) -> list[str]:
    lines = [f"### W{window.number}: {window.source} → {window.target}", ""]
    lines.extend(_migration(m) for m in window.migrations_before(None))
    for step in window.before:
        lines.extend(_migration(m) for m in window.migrations_before(step))
        lines.append(f"- [ ] move **{step.label}** ({step.why}): edit "
                     + ", ".join(f"`{where(o)}`" for o in step.pins))
    lines.extend(f"- [ ] fix `{where(f.origin)}` {escape(f.object_ref)}: {escape(f.message)}"
                 for f in window.api_blockers)
    lines.append(f"- [ ] **upgrade the cluster to {window.target}**")
    lines.extend(plan_orders.markdown_lines(plan, window))
    lines.extend(f"- [ ] optional: {step.label} ({step.why})" for step in window.after)
    lines.extend(f"- note: **{n.title}** ({n.distro}): {n.detail} [source]({n.source})" for n in window.notes)
    lines.extend(f"- ⛔ {message}" for message in problems(window, BLOCKER))
    lines.extend(f"- ⚠️ {message}" for message in problems(window, WARNING))
    unknown = unknown_components(window)
    if unknown:
        lines.append(f"- support for {window.target} unknown: {', '.join(unknown)}")
    return lines + [""]
