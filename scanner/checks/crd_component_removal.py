"""Third-party CRD API versions that a component release no longer serves (rules/crds/).

Reported when the release the tree pins already dropped the version, and when reaching the
target moves the component past the release that drops it: the component state (from --from, or
the cluster version the tree pins, or the minor before the target) says which releases the hops
need. When the tree uses such a version and kubehop cannot tell which release runs, the object
is a warning naming the release that removed it (--unknown decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks.context import ScanContext
from scanner.components.catalog import load_crd_rules
from scanner.model import Finding, Manifest

if TYPE_CHECKING:
    from scanner.components.timeline import Timeline


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    timeline = component_timeline(manifests, context, {(m.api_version, m.kind) for m in manifests})
    if timeline is None:
        return []  # the common case: the tree uses no API a component release drops
    from scanner.components.verdicts import migration_findings

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
