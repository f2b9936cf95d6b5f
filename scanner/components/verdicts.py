"""The component state as findings: what `scan` reports and `plan` counts, from one Timeline.

A component that cannot run on a hop's minor is a blocker at the line of its pin, with the moves
that unblock it; a hop nobody states support for is unverified (a warning, or what --unknown
says); a third-party API version a pinned or planned release no longer serves is a blocker at
the object. Both commands take their findings from here, so they count the same things.
"""

from __future__ import annotations

from scanner.components.state import BLOCKER, UNKNOWN, Migration, Problem, Timeline
from scanner.model import Finding, Manifest, Origin
from scanner.paths import where
from scanner.versions import Minor

_SEVERITY = {BLOCKER: "error", UNKNOWN: "warning"}  # anything else: "warning"
COMPONENT_RULES = "component/"  # the rule ids of problem findings start with this
_ALSO_EDIT = 10  # the other pins a finding names; a chart pinned by a hundred releases says how many more


def findings(timeline: Timeline, current: Minor | None) -> list[Finding]:
    """Every finding of the component layer; `current` is --from as given (None: not given)."""
    return problem_findings(timeline) + migration_findings(timeline, current)


def problem_findings(timeline: Timeline) -> list[Finding]:
    return [_problem_finding(problem, timeline) for problem in timeline.all_problems if problem.pins]


def _problem_finding(problem: Problem, timeline: Timeline) -> Finding:
    state = next(s for s in timeline.states if s.key == (problem.state or problem.component))
    first = state.detections[0]
    origin = Origin(first.origin.path, first.origin.line, first.origin.column, via=first.what)
    others = problem.pins[1:]
    also = tuple(f"also edit {where(o.path, o.line)}" for o in others[:_ALSO_EDIT])
    if len(others) > _ALSO_EDIT:
        also += (f"and {len(others) - _ALSO_EDIT} more pins of the same version (`kubehop components` lists them)",)
    return Finding(f"{COMPONENT_RULES}{problem.component}/{problem.kind}", _SEVERITY.get(problem.severity, "warning"),
                   problem.message, origin, "", "Component", problem.component, breaks_in=problem.minor,
                   source_url=problem.source or ((state.start.source or None) if state.start else None),
                   remediation=problem.fix + also, support=problem.support)


def migration_findings(timeline: Timeline, current: Minor | None) -> list[Finding]:
    found = []
    for migration in timeline.migrations:
        if migration_severity(migration, timeline) is None:
            continue
        found.extend(_migration_finding(m, migration, timeline, current) for m in migration.objects)
    return found


def migration_severity(migration: Migration, timeline: Timeline) -> str | None:
    """How much a migration weighs: an error, unless which release runs is unknown (then what --unknown
    says: a warning, an error, or None for nothing)."""
    if not migration.unknown:
        return "error"
    return {"ignore": None, "block": "error"}.get(timeline.unknown, "warning")


def migration_breaks_in(migration: Migration, current: Minor | None) -> Minor | None:
    """The minor a migration's finding is filed under: its hop; today's when already due; none when unknown."""
    return None if migration.unknown else current if migration.already else migration.hop


def _migration_finding(manifest: Manifest, migration: Migration, timeline: Timeline,
                       current: Minor | None) -> Finding:
    rule = migration.rule
    what = f"{rule.api_version} {rule.kind}"
    severity, breaks_in = migration_severity(migration, timeline), migration_breaks_in(migration, current)
    if migration.unknown:
        message = (f"{what} is not served from {migration.before} on, and kubehop cannot tell which "
                   f"{rule.component} release runs (no pin it can read): migrate if it is {rule.removed_in} or later")
    elif migration.already:
        message = f"{what} was removed in {migration.before}: the release the tree pins no longer serves it"
    else:
        message = (f"{what} is no longer served from {migration.before}, which the hop to {migration.hop} needs; "
                   f"migrate before that move")
    if rule.replacement:
        message += f"; use {rule.replacement}"
    return Finding(rule.id, severity, message, manifest.origin, manifest.api_version, manifest.kind, manifest.name,
                   manifest.namespace, breaks_in=breaks_in, replacement=rule.replacement, note=rule.note,
                   source_url=rule.source, support="unknown" if migration.unknown else None)


def from_component_layer(finding: Finding, crd_rule_ids: frozenset[str]) -> bool:
    """Whether a finding came from here (a component problem or a CRD rule): the plan shows those
    as moves and migrations, not as API blockers."""
    return finding.rule_id.startswith(COMPONENT_RULES) or finding.rule_id in crd_rule_ids
