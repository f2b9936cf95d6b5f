"""Third-party CRD API versions that a component release no longer serves (rules/crds/).

Reported when the release the tree pins already dropped the version, and when reaching the
target moves the component past the release that drops it: the lockstep plan from --from (or,
without it, from the minor before the target) says which releases the hops need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks import ScanContext
from scanner.components.catalog import load_components, load_crd_rules
from scanner.model import Finding, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:  # detection and the component state are imported only when the tree uses such an API
    from scanner.components.state import Migration


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    used = {(m.api_version, m.kind) for m in manifests}
    owners = frozenset(rule.component for rule in load_crd_rules() if (rule.api_version, rule.kind) in used)
    if not owners:
        return  # the common case: the tree uses no API a component release drops
    from scanner.components.detect import by_component, detect_in_manifests
    from scanner.components.state import component_states, resolve

    catalog = load_components(owners)
    grouped = by_component(detect_in_manifests(manifests, catalog))
    start = context.current if context.current is not None and context.current < context.target \
        else Minor(context.target.major, context.target.minor - 1)
    timeline = resolve(component_states(grouped, catalog), start, context.target, catalog, manifests)
    for migration in timeline.migrations:
        for manifest in migration.objects:
            yield _finding(manifest, migration, context)


def _finding(manifest: Manifest, migration: Migration, context: ScanContext) -> Finding:
    rule = migration.rule
    what = f"{rule.api_version} {rule.kind}"
    if migration.already:
        message = f"{what} was removed in {migration.before}: the release the tree pins no longer serves it"
    else:
        message = (f"{what} is no longer served from {migration.before}, which the hop to {migration.hop} needs; "
                   f"migrate before that move")
    if rule.replacement:
        message += f"; use {rule.replacement}"
    breaks_in = context.current if migration.already else migration.hop
    return Finding(rule.id, "error", message, manifest.origin, manifest.api_version, manifest.kind, manifest.name,
                   manifest.namespace, breaks_in=breaks_in, replacement=rule.replacement, note=rule.note,
                   source_url=rule.source)
