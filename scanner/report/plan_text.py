"""The plan for a terminal: a summary table of the windows (as seed plans draw them), then each window."""

from __future__ import annotations

import textwrap
from itertools import groupby

from scanner import __version__
from scanner.freshness import data_checked, older_sources_line
from scanner.model import Origin
from scanner.components.state import (BLOCKED, NEWER_THAN_CLUSTER, NO_DATA as NO_DATA_KIND, OUTSIDE_RANGE,
                                      UNKNOWN_RELEASE, UNKNOWN_SUPPORT, UNSUPPORTED, UNVERIFIED)
from scanner.components.unlisted import NO_DATA
from scanner.plan import BLOCKER, UNKNOWN, WARNING, Migration, Plan, Step, Window
from scanner.report import count_words, minor_sources, nothing_checked, plan_orders, verdict_words
from scanner.report import verdict as scan_verdict
from scanner.paths import at, repo_path
from scanner.report.plain import log_lines
from scanner.words import count

_COLUMNS = (("Window", 6), ("Hop", 11), ("Move before the hop", 36), ("Migrate before", 34),
            ("Blockers", 16), ("May move after", 36))


def where(origin: Origin) -> str:
    return at(origin)


def chains(steps: list[Step]) -> list[str]:
    """Consecutive steps of one component as one chain: 'longhorn 1.7 → 1.8 → 1.9'."""
    result = []
    for _, group in groupby(steps, key=lambda s: s.state or s.component.name):
        group = list(group)
        name = group[0].component.name
        result.append(" → ".join([f"{name} {group[0].source.version}"] + [s.target.version for s in group]))
    return result


def migration_labels(migrations: list[Migration]) -> list[str]:
    """One entry per API version: 'image.toolkit.fluxcd.io/v1beta2 (3 objects)'."""
    counts: dict[str, int] = {}
    for migration in migrations:
        counts[migration.rule.api_version] = counts.get(migration.rule.api_version, 0) + len(migration.objects)
    return [f"{api} ({count(n, 'object')})" for api, n in counts.items()]


_KINDS_NAMED = 3  # kinds of blocked objects a window's summary names; more are "…"


def blocker_labels(window: Window, kinds: bool = False) -> list[str]:
    """What the window's blockers (the findings a scan counts) are: the components, then how many
    objects (`kinds`: and of which kinds, '3 objects (ImagePolicy, ImageRepository, …)')."""
    errors = [f for f in window.findings if f.severity == "error"]
    components = sorted({f.name or "?" for f in errors if f.kind == "Component"})
    objects = [f for f in errors if f.kind != "Component"]
    if not objects:
        return components
    if not kinds:
        return components + [count(len(objects), "object")]
    names = sorted({f.kind for f in objects})
    named = ", ".join(names[:_KINDS_NAMED]) + (", …" if len(names) > _KINDS_NAMED else "")
    return components + [f"{count(len(objects), 'object')} ({named})"]


def problems(window: Window, severity: str) -> list[str]:
    return [p.text for p in window.problems if p.severity == severity]


def unknown_components(window: Window) -> list[str]:
    return sorted({p.component or "?" for p in window.problems if p.severity == UNKNOWN})


def header(plan: Plan) -> list[str]:
    lines = [f"kubehop {__version__} plan: Kubernetes {plan.current} → {plan.target} ({plan.distro})"]
    if plan.current_from is not None:
        pin = plan.current_from
        lines.append(f"  from {plan.current}: {pin.version}, {pin.what} at {where(pin.origin)}")
    if plan.distro_from != "--distro":
        lines.append(f"  distribution {plan.distro}: {plan.distro_from}")
    if plan.analysis is not None:  # a pull request may have set them in the configuration: say where
        lines.append(f"  {minor_sources(plan.analysis, repo_path)}")
    lines.append(f"  data checked {data_checked()}: releases after it are unknown to kubehop")
    older = older_sources_line(s.component.name for s in plan.components)
    if older:
        lines.append(f"  {older}")
    return lines


def journeys(plan: Plan) -> list[tuple[str, str, str, str]]:
    """Per component: name, 'start → end', the first pin to edit, and what stops the plan for it."""
    rows = []
    for state in plan.components:
        name = state.label
        if state.component.no_data:
            pin = state.detections[0].pin
            journey = NO_DATA if pin == "*" else f"{pin}: {NO_DATA}"
        elif state.start is None:
            journey = "release unknown"
        elif state.final is state.start:
            journey = f"{state.short(state.start)} (no move planned)"
        else:  # a chart whose releases are an app's names its chart too: "0.78 (chart 66.2.2)"
            journey = f"{state.short(state.start)} → {state.short(state.final)}"
        rows.append((name, journey, where(state.pins[0]), _stop(plan, state.key)))
    return rows


def _stop(plan: Plan, key: str) -> str:
    """What stops the plan for an install (ComponentState.key)."""
    for kinds, text in (({BLOCKED}, "blocked at the hop to {}"), ({UNSUPPORTED}, "must move before {}"),
                        ({UNVERIFIED, UNKNOWN_SUPPORT, UNKNOWN_RELEASE, NO_DATA_KIND}, "support unknown from {}")):
        window = next((w for w in plan.windows for p in w.problems if _about(p, key) and p.kind in kinds),
                      None)
        if window is not None:
            return text.format(window.target)
    # Runs outside its stated range (the cluster is older than the release states): worth a look, no move.
    outside = sorted({plan.current if p.kind == OUTSIDE_RANGE else w.target for w in plan.windows
                      for p in w.problems if _about(p, key) and p.kind in (OUTSIDE_RANGE, NEWER_THAN_CLUSTER)})
    if outside:
        span = f"{outside[0]}–{outside[-1]}" if len(outside) > 1 else f"{outside[0]}"
        return f"outside its stated range at {span}"
    return ""


def _about(problem, key: str) -> bool:
    return (problem.state or problem.component) == key


def render(plan: Plan) -> str:
    summary = f"{verdict(plan)} ({counts(plan)})"
    lines = header(plan) + [summary, ""] + _table(plan) + ["", "Components"]
    rows = journeys(plan)
    width, stops = max([len(row[0]) for row in rows] + [0]), max([len(row[3]) for row in rows] + [27])
    moves = max([len(row[1]) for row in rows] + [22])  # "0.93 (chart 88.3.0) (no move planned)" fits too
    lines.extend(f"  {name:<{width}}  {journey:<{moves}}  {stop:<{stops}}  {pin}".rstrip()
                 for name, journey, pin, stop in rows)
    lines.append("")
    for window in plan.windows:
        lines.extend(_window(plan, window, plan.distro))
        lines.append("")
    lines.extend(plan_orders.notes_lines(plan))
    lines.append(summary)
    return log_lines(lines)  # one line each: nothing from the tree breaks one (report/plain.py)


def _table(plan: Plan) -> list[str]:
    rows = [[f"W{w.number}", f"{w.source} → {w.target}", "; ".join(chains(w.before)) or "—",
             "; ".join(migration_labels(w.migrations)) or "—",
             ", ".join(blocker_labels(w)) or "—", "; ".join(chains(w.after)) or "—"] for w in plan.windows]
    lines = ["  ".join(title.ljust(width) for title, width in _COLUMNS).rstrip()]
    for row in rows:
        cells = [textwrap.wrap(text, width) or [""] for text, (_, width) in zip(row, _COLUMNS)]
        for i in range(max(len(c) for c in cells)):
            lines.append("  ".join((c[i] if i < len(c) else "").ljust(width)
                                   for c, (_, width) in zip(cells, _COLUMNS)).rstrip())
    return lines


def _window(plan: Plan, window: Window, distro: str) -> list[str]:
    lines = [f"W{window.number}  {window.source} → {window.target}"]
    lines.append("  1. Move before the hop" + ("" if window.before or window.migrations else ": nothing"))
    for migration in window.migrations_before(None):
        lines.extend(_migration_lines(migration))
    for step in window.before:
        for migration in window.migrations_before(step):
            lines.extend(_migration_lines(migration))
        lines.extend(_step_lines([step]))
    lines.append(f"  2. API blockers: {len(window.api_blockers) or 'none'}")
    for finding in window.api_blockers:
        lines.append(f"     {where(finding.origin)}  {finding.object_ref}: {finding.text}")
    lines.append(f"  3. Hop: upgrade the cluster from {window.source} to {window.target}")
    lines.extend(plan_orders.text_lines(plan, window))
    lines.append("  4. May move after the hop" + ("" if window.after else ": nothing"))
    lines.extend(_step_lines(window.after))
    lines.append(f"  5. Hop notes ({distro})" + ("" if window.notes else ": none in the data"))
    for note in window.notes:
        projected = ", projected: from a pre-release source" if note.projected else ""
        lines.append(f"     {note.title} [{note.distro}{projected}]: {note.detail} ({note.source})")
    lines.extend(f"  blocker: {message}" for message in problems(window, BLOCKER))
    lines.extend(f"  warning: {message}" for message in problems(window, WARNING))
    unknown = unknown_components(window)
    if unknown:
        lines.append(f"  support for {window.target} unknown: {', '.join(unknown)}")
    return lines


def _step_lines(steps: list[Step]) -> list[str]:
    lines = []
    for step in steps:
        lines.append(f"     {step.label}: {step.why}")
        lines.extend(f"       edit {where(origin)}" for origin in step.pins)
    return lines


def _migration_lines(migration: Migration) -> list[str]:
    rule = migration.rule
    when = (f"already not served by the pinned release ({migration.before} removed it)" if migration.already
            else f"before {migration.before}, which removes it")
    lines = [f"     migrate {rule.api_version} → {rule.replacement or '(no successor)'} {rule.kind}: {when}"]
    lines.extend(f"       {where(m.origin)}  {m.object_ref}" for m in migration.objects)
    return lines


def verdict(plan: Plan) -> str:
    """The verdict a scan of the same tree gives, in its words: one that checked nothing says so."""
    if plan.analysis is not None and nothing_checked(plan.analysis):
        return scan_verdict(plan.analysis)
    return verdict_words(plan.target, plan.blocker_count)


def counts(plan: Plan) -> str:
    return count_words(plan.findings, plan.input_errors)
