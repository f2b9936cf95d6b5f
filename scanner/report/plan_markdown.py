"""The plan as Markdown for a pull request or a CI step summary, read from the top down.

First the verdict, the table of windows and a Mermaid diagram of them (coloured by class, text
colour included, so it reads in light and dark mode; left to right only while it fits a comment);
then each window, its heading badged as its diagram box is, in the order of the work: what blocks it, the migrations and moves before the
hop (each move once, in the window that needs it: required there, saying how early it may land), the hop, then the
notes folded. It stays under GitHub's comment limit (scanner.report.comment). Names, paths and
messages from the tree go through scanner.report.md.
"""

from __future__ import annotations

from scanner.plan import BLOCKER, WARNING, Migration, Plan, Step, Window
from scanner.report import comment, md, plan_orders
from scanner.paths import at
from scanner.report.plan_text import (blocker_labels, chains, header, journeys, migration_labels, problems,
                                      unknown_components, verdict)
from scanner.report.plan_text import counts as verdict_counts
from scanner.words import count

_LEFT_TO_RIGHT = 5  # windows a left-to-right diagram holds at a comment's width; more are drawn top-down
# Short edges and little padding: at GitHub's default spacing five windows are drawn at 0.6 of their size.
_SPACING = '%%{init: {"flowchart": {"rankSpacing": 20, "nodeSpacing": 20, "padding": 6}}}%%'
# Fill, stroke and text colour for every class: GitHub draws Mermaid with a dark theme in dark mode,
# and a fill without a text colour leaves light text on a light fill there.
_CLASSES = {"ok": "fill:#dafbe1,stroke:#1a7f37,color:#1f2328",
            "warn": "fill:#fff8c5,stroke:#9a6700,color:#1f2328",
            "blocked": "fill:#ffebe9,stroke:#cf222e,color:#1f2328"}


def render(plan: Plan, limit: int | None = comment.LIMIT, full_report: str | None = None) -> str:
    return comment.fit(_head(plan), _parts(plan), _tail(plan), limit, full_report, what="plan item")


def _head(plan: Plan) -> str:
    title, *context = header(plan)
    icon = "❌" if plan.blocked else "✅"
    lines = [f"## {md.text(title)}", "", f"{icon} **{verdict(plan)}** ({verdict_counts(plan)})", ""]
    lines += [f"- {md.text(line.strip())}" for line in context] + ([""] if context else [])
    lines += [*_table(plan), "", "```mermaid", *_diagram(plan), "```", "", *_components(plan), ""]
    return "".join(line + "\n" for line in lines)


def _table(plan: Plan) -> list[str]:
    lines = ["| Window | Hop | Before the hop | Blockers |", "|---|---|---|---|"]
    for w in plan.windows:
        before = chains(w.before) + [f"migrate {label}" for label in migration_labels(w.migrations)]
        blockers = f"⛔ {w.blocker_count}: {', '.join(blocker_labels(w, kinds=True))}" if w.blocker_count else "—"
        hop = f"{w.source}\u00a0→\u00a0{w.target}"  # no-break spaces: a hop is not wrapped over two lines
        lines.append(f"| W{w.number} | {hop} | {_cell(before)} | {md.wrappable(md.text(blockers))} |")
    return lines


def _cell(items: list[str]) -> str:
    return "<br>".join(md.wrappable(md.text(item)) for item in items) or "—"


def _diagram(plan: Plan) -> list[str]:
    """The windows left to right; past what a comment's width holds, in rows of that many, each row left
    to right and the rows top-down (all top-down, ten windows were a strip 160 px wide and 1,600 px high)."""
    nodes, edges = [], []
    for w in plan.windows:
        kind, state = (("blocked", f"⛔ {count(w.blocker_count, 'blocker')}") if w.blocker_count else
                       ("warn", f"⚠️ {count(w.warning_count, 'warning')}") if w.warning_count else
                       ("ok", "✓ nothing blocks"))
        steps = len(w.before) + len(w.migrations)  # green says nothing blocks, not that nothing is to do
        todo = f"<br/>{count(steps, 'step')} before" if steps else ""
        nodes.append(f'W{w.number}["W{w.number}<br/>{w.source} → {w.target}<br/>{state}{todo}"]:::{kind}')
    edges = [f"W{a.number} --> W{b.number}" for a, b in zip(plan.windows, plan.windows[1:])]
    if len(plan.windows) <= _LEFT_TO_RIGHT:
        lines = [_SPACING, "flowchart LR", *(f"  {line}" for line in nodes + edges)]
    else:
        # A subgraph keeps its own direction only while no edge leaves it: the rows are linked row to row.
        lines = [_SPACING, "flowchart TB"]
        rows = [range(start, min(start + _LEFT_TO_RIGHT, len(nodes))) for start in range(0, len(nodes), _LEFT_TO_RIGHT)]
        for n, row in enumerate(rows, 1):
            lines += [f'  subgraph R{n} [" "]', "    direction LR", *(f"    {nodes[i]}" for i in row),
                      *(f"    {edges[i]}" for i in row if i + 1 in row), "  end",
                      f"  style R{n} fill:none,stroke:none"]
        lines += [f"  R{n} --> R{n + 1}" for n in range(1, len(rows))]
    return lines + [f"  classDef {name} {style}" for name, style in _CLASSES.items()]


def _components(plan: Plan) -> list[str]:
    lines = ["| Component | Release | Stops at | Pinned at |", "|---|---|---|---|"]
    lines.extend(f"| {md.text(name)} | {md.text(journey)} | {md.text(stop) if stop else '—'} | {md.path(pin)} |"
                 for name, journey, pin, stop in journeys(plan))
    return lines


def _parts(plan: Plan) -> list[comment.Part]:
    parts = []
    for window in plan.windows:
        items = _items(plan, window)
        heading = f"### W{window.number} · {window.source} → {window.target} · " + (  # as its diagram box says
            f"⛔ {count(window.blocker_count, 'blocker')}" if window.blocker_count else
            f"⚠️ {count(window.warning_count, 'warning')}" if window.warning_count else "✓ nothing blocks")
        parts.append(comment.Part(f"{heading}\n\n{items[0]}", 1))
        parts.extend(comment.Part(item, 0 if item.startswith("\n<details>") else 1) for item in items[1:])
        parts.append(comment.Part("\n"))
    return parts


def _items(plan: Plan, window: Window) -> list[str]:
    """The window's lines, one list item (with what nests under it) each, in the order of the work."""
    items = [f"- ⛔ {md.text(message)}\n" for message in problems(window, BLOCKER)]
    items += [f"- [ ] fix {md.path(at(f.origin))} {md.text(f.object_ref)}: {md.text(f.text)}\n"
              for f in window.api_blockers]
    items += [_migration(m) for m in window.migrations_before(None)]
    for step in window.before:
        items += [_migration(m) for m in window.migrations_before(step)]
        items.append(_move(plan, window, step))
    items.append(f"- [ ] **upgrade the cluster to {window.target}**\n"
                 + "".join(line + "\n" for line in plan_orders.markdown_lines(plan, window)))
    items += [f"- ⚠️ {md.text(message)}\n" for message in problems(window, WARNING)]
    unknown = unknown_components(window)
    if unknown:
        items.append(f"- ❔ support for {window.target} unknown: {md.text(', '.join(unknown))}\n")
    if window.notes:
        notes = [f"- **{md.text(n.title)}** ({md.text(n.distro)}{', projected' if n.projected else ''}): "
                 f"{md.prose(n.detail)} {md.link('source', n.source)}"
                 for n in window.notes]
        items.append(f"\n<details><summary>Hop notes for {window.target}: {count(len(notes), 'note')}</summary>\n\n"
                     + "".join(line + "\n" for line in notes) + "\n</details>\n")
    return items


def _migration(migration: Migration) -> str:
    rule = migration.rule
    objects = ", ".join(f"{md.path(at(o.origin))}" for o in migration.objects)
    successor = md.code(rule.replacement, in_table=False) if rule.replacement else "(no successor)"
    return (f"- [ ] migrate {md.code(rule.api_version, in_table=False)} {md.text(rule.kind)} → {successor} "
            f"before {md.text(migration.before)}: {objects}\n")


def _move(plan: Plan, window: Window, step: Step) -> str:
    pins = ", ".join(md.path(at(origin)) for origin in step.pins)
    line = f"- [ ] move **{md.text(step.label)}** ({md.text(step.why)}): edit {pins}"
    early = _earliest(plan, window, step)
    if early is not None:
        line += f"; may land earlier, from W{early.number} (after the hop to {early.target})"
    return line + "\n"


def _earliest(plan: Plan, window: Window, step: Step) -> Window | None:
    """The first earlier window after whose hop `step` may land (the planner lists it there as optional)."""
    same = (step.state, step.source.version, step.target.version)
    return next((w for w in plan.windows if w.number < window.number
                 and any((s.state, s.source.version, s.target.version) == same for s in w.after)), None)


def _tail(plan: Plan) -> str:
    lines = [f"- {md.text(note)}" for note in plan_orders.notes_lines(plan)]
    return "".join(line + "\n" for line in lines)
