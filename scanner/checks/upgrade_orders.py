"""Upgrade orders move a cluster one minor at a time.

Per cluster (scanner.orders.read.clusters), the control-plane orders, oldest first, and then the
worker orders, each compared with the one before: the cluster's current minor (--from or the
API server of the cluster dump; the kubelets of the dump's workers for worker orders), then the
order's previous version in the tree's other orders. A version more than one minor above it is a
blocker at the line of its version field. An order that follows a channel naming no minor
(stable, latest) is a warning: what it installs is whatever the channel serves that day.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.findings import order_finding, order_kind_source
from scanner.checks.node_skew import load_policy
from scanner.model import Finding, Manifest
from scanner.paths import where
from scanner.versions import Minor, minor_range

if TYPE_CHECKING:
    from scanner.orders.read import UpgradeOrder

SCOPE = TREE
SKIPS, FLOATS = "upgrade-order/skips-minor", "upgrade-order/floating-channel"


def _rules(_rulebook) -> dict[str, RuleInfo]:
    return {
        SKIPS: RuleInfo("an upgrade order that skips a minor",
                        "A cluster moves one minor at a time (kubeadm and the upgrade controllers refuse a "
                        "multi-minor step): an order more than one minor above the cluster's current minor, or "
                        "above the tree's previous order, needs an order for each minor between.", "error",
                        load_policy().source),
        FLOATS: RuleInfo("an upgrade order that follows a channel naming no minor",
                         "The controller installs whatever the channel serves when it resolves it, possibly "
                         "several minors at once, and kubehop cannot check it: pin the version, or a minor channel.",
                         "warning", order_kind_source(lambda kind: kind.channel)),
    }


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    orders = context.upgrade_orders(manifests)
    if not orders:
        return
    from scanner.orders.read import clusters, order_key  # scanner.orders: imported once a tree has orders

    for order in orders:
        if order.floating:
            yield _floating(order)
    for cluster in clusters(orders):
        yield from _sequence(cluster.control_planes, _baseline(context), "the control plane", "moves")
        workers = sorted(cluster.workers, key=order_key)
        yield from _sequence(workers, _worker_baseline(context), "the workers", "move")


def _baseline(context: ScanContext) -> tuple[Minor, str] | None:
    """The minor the cluster runs today and where that was read; None when only its orders say."""
    if context.current is None or context.current_from_tree:
        return None
    cluster = context.cluster
    if cluster is not None and cluster.server == context.current:
        return context.current, f"the API server of the cluster dump is at {context.current}"
    return context.current, f"the cluster is at {context.current} ({context.current_said_by})"


def _worker_baseline(context: ScanContext) -> tuple[Minor, str] | None:
    """The oldest kubelet of the dump's workers, else the cluster's minor."""
    cluster = context.cluster
    if cluster is not None and cluster.nodes:
        from scanner.orders.kinds import control_plane_labels

        labels = control_plane_labels()
        workers = [n for n in cluster.nodes if not any(label in n.labels for label in labels)]
        if workers:
            oldest = min(workers, key=lambda n: n.kubelet)
            return oldest.kubelet, f"worker {oldest.name} runs kubelet {oldest.kubelet_version} in the cluster dump"
    return _baseline(context)


def _sequence(orders: Sequence[UpgradeOrder], baseline: tuple[Minor, str] | None, who: str,
              verb: str) -> Iterator[Finding]:
    previous = baseline
    for order in orders:
        if order.minor is None:
            continue
        if previous is not None and order.minor > previous[0].next():
            yield _skip(order, previous, f"{who} {verb}")
        if previous is None or order.minor > previous[0]:
            previous = (order.minor, f"{order.what} at {_where(order)} moves {who} to {order.version_text}")


def _where(order: UpgradeOrder) -> str:
    return where(order.origin.path, order.origin.line)


def _skip(order: UpgradeOrder, previous: tuple[Minor, str], who_moves: str) -> Finding:
    start, said = previous
    skipped = minor_range(start.next(), Minor(order.minor.major, order.minor.minor - 1))
    names = ", ".join(str(m) for m in skipped)
    message = (f"{order.version_text} skips {names}: {said}; {who_moves} one minor at a time "
               f"(kubeadm and the upgrade controllers refuse a multi-minor step)")
    steps = tuple(f"first an order to {m}" for m in skipped) + (f"then this one to {order.minor}",)
    return order_finding(order, SKIPS, "error", message, order.minor, remediation=steps)


def _floating(order: UpgradeOrder) -> Finding:
    message = (f"follows the channel {order.channel}, which names no minor: the controller installs "
               f"whatever the channel serves when it resolves it, possibly several minors at once; kubehop "
               f"cannot check it. Pin spec.version (kubehop plan --orders writes the exact version per hop) "
               f"or a minor channel (…/channels/v1.NN)")
    return order_finding(order, FLOATS, "warning", message, None)
