"""Third-party CRD API versions that a component release no longer serves (rules/crds/).

Reported when the release the tree pins already dropped the version, and when reaching the
target moves the component past the release that drops it (with the cluster at the target, the move
that brings a release it runs outside its range back into it): the component state (from --from, or
the cluster version the tree pins, or the minor before the target) says which releases the hops
need. When the tree uses such a version and kubehop cannot tell which release runs, the object
is a warning naming the release that removed it (--unknown decides). `plan` takes its migrations'
findings from here too.

Its rules are rules/crds', one per component, apiVersion and kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.findings import minors_said
from scanner.components.catalog import CrdRule, load_crd_rules
from scanner.model import Finding, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.timeline import Migration, Timeline

SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    return {rule.id: _describe(rule) for rule in load_crd_rules()}


def _describe(rule: CrdRule) -> RuleInfo:
    return RuleInfo(f"not served from {rule.component} {rule.removed_in}" if rule.removed_in
                    else f"deprecated since {rule.component} {rule.deprecated_in}",
                    minors_said(rule.deprecated_in and f"{rule.component} {rule.deprecated_in}",
                                rule.removed_in and f"{rule.component} {rule.removed_in}", rule.replacement, rule.note),
                    "error", rule.source, rule)


RULES = Rules(_rules, pattern="<component>/<apiVersion>/<Kind>", data="rules/crds")


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    timeline = component_timeline(manifests, context, {(m.api_version, m.kind) for m in manifests})
    if timeline is None:
        return []  # the common case: the tree uses no API a component release drops
    return migration_findings(timeline, context.current)


def component_timeline(manifests: Sequence[Manifest], context: ScanContext,
                       used: set[tuple[str, str]]) -> Timeline | None:
    """The scan's component state; without one (a check run on its own), the state of the components
    whose CRD rules name one of the `used` (apiVersion, kind), from the manifests alone. None: no such
    component."""
    if context.components is not None:
        return context.components
    owners = frozenset(rule.component for rule in load_crd_rules() if (rule.api_version, rule.kind) in used)
    if not owners:
        return None
    from scanner.components.tree import timeline_of_manifests

    return timeline_of_manifests(manifests, context.target, context.current, context.unknown, owners)


def migration_findings(timeline: Timeline, current: Minor | None) -> list[Finding]:
    """A finding per object of each migration that weighs; `current` is --from as given (None: not given)."""
    found = []
    for migration in timeline.migrations:
        if migration_severity(migration, timeline) is None:
            continue
        found.extend(_migration_finding(m, migration, timeline, current) for m in migration.objects)
    return found


def migration_severity(migration: Migration, timeline: Timeline) -> str | None:
    """How much a migration weighs: an error, unless which release runs is unknown (then what --unknown
    says: a warning, an error, or None for nothing); a warning when the move is one at the current minor
    with no hop left (the pinned release still serves the API there: the move is the fix of an
    outside-range warning, and the migration comes before it)."""
    if not migration.unknown:
        return "warning" if migration.now else "error"
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
        message = (f"{what} is no longer served from {migration.before}, which {migration.needed_by} needs; "
                   f"migrate before that move")
    return Finding(rule.id, severity, message, manifest.origin, manifest.api_version, manifest.kind, manifest.name,
                   manifest.namespace, breaks_in=breaks_in, replacement=rule.replacement, note=rule.note,
                   source_url=rule.source, support="unknown" if migration.unknown else None,
                   fix=rule.use)
