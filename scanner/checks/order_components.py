"""An upgrade order may not move the cluster past what the tree's components run on.

The newest control-plane order of each cluster moves the API server to its minor. Every
component the tree pins (the component state layer: scanner.components.state) must support that
minor at the release the tree pins: where the release's stated range excludes it, the order is a
blocker naming the component, its pin, and the release the plan would move it to first (or that
no known release supports the minor). A range the data does not know is left to the plan's
"unknown", never reported as blocked here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from scanner.checks.context import TREE, RuleInfo, ScanContext
from scanner.checks.findings import order_finding
from scanner.model import Finding, Manifest
from scanner.paths import where
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.orders.read import UpgradeOrder

SCOPE = TREE
RULE = "upgrade-order/component-support"
RULES = {RULE: RuleInfo("a control-plane order past what a pinned component supports",
                        "The order moves the cluster to a minor that the release the tree pins of a component does not "
                        "support: move the component first (the finding names the moves and its release's source).",
                        "error")}


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    orders = context.upgrade_orders(manifests)
    if not orders:
        return  # the common case: no component detection without an order to check
    from scanner.orders.read import clusters  # scanner.orders: imported once a tree has orders

    newest = [c.newest_control_plane for c in clusters(orders)]
    # An order at the cluster's own minor moves nothing (the tree's orders often say where it is): a
    # release running outside its range there is the component state's outside-range warning.
    moving = [o for o in newest if o is not None and (context.current is None or o.minor > context.current)]
    if not moving:
        return
    from scanner.components.catalog import load_catalog
    from scanner.components.detect import detect_in_manifests
    from scanner.components.pins import by_component
    from scanner.components.state import component_states

    if context.components is not None:  # the scan's: pins in every file, not only in objects
        states = context.components.states
    else:
        catalog = load_catalog()
        states = component_states(by_component(detect_in_manifests(manifests, catalog)), catalog)
    for order in moving:
        yield from _unsupported(order, states)


def _unsupported(order: UpgradeOrder, states) -> Iterator[Finding]:
    from scanner.components.state import route

    minor = order.minor
    for state in states:
        release = state.start
        if release is None or release.supports(minor) is not False or (release.min and minor < release.min):
            continue
        component = state.component
        pins = ", ".join(where(p.path, p.line) for p in state.pins)
        later = [r for r in component.releases_after(release) if r.supports(minor)]
        if later:
            path, _, _ = route(component, release, Minor(minor.major, minor.minor - 1), minor)
            moves = " → ".join(r.version for r in path) or later[0].version
            fix = f"move {component.title} {release.version} → {moves} first ({pins})"
        else:
            fix = f"no known release of {component.title} supports Kubernetes {minor}: keep the cluster below it"
        message = (f"{order.version_text} moves the cluster to {minor}, but {component.title} {release.version} "
                   f"(pinned at {pins}) supports {release.support_text} only")
        yield order_finding(order, RULE, "error", message, minor, source=release.source, remediation=(fix,))
