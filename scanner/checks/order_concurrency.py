"""How many nodes an upgrade order takes down at once, as its controller will really do it.

yaki-operator (rules/upgrade-orders.yaml: max_unavailable) upgrades at most `maxUnavailable`
selected workers at a time, an integer or a percentage rounded up, and never more than a ceiling
share of the selected workers: a value past it is clamped, and the warning says to what. The
selected workers are counted from a --cluster-state nodes dump (the order's nodeNames or
nodeSelector, else every node that is not a control-plane node); without a dump only a percentage
above the ceiling is certain to be clamped. A kind whose control plane is down while its only
node upgrades gets a notice when the dump holds one control-plane node, or when the order's
concurrency (system-upgrade Plans) takes every control-plane node of the dump at once.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.findings import order_finding, order_kind_source
from scanner.cluster_state import ClusterNode
from scanner.model import Finding, Manifest
from scanner.nodes import mapping_get, scalar

if TYPE_CHECKING:
    from scanner.orders.kinds import MaxUnavailable
    from scanner.orders.read import UpgradeOrder

CLAMPED = "upgrade-order/max-unavailable-clamped"
SINGLE = "upgrade-order/single-control-plane"
SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    return {
        CLAMPED: RuleInfo("a maxUnavailable above the operator's ceiling",
                          "The operator upgrades at most a ceiling share of the selected workers at once: a larger "
                          "maxUnavailable is clamped, and the finding says to what.", "warning",
                          order_kind_source(lambda kind: kind.max_unavailable)),
        SINGLE: RuleInfo("no API server serves while the control plane upgrades",
                         "With one control-plane node, or a concurrency that takes them all at once, controllers "
                         "stop reconciling and kubectl fails while they restart (running pods keep running).",
                         "notice", order_kind_source(lambda kind: kind.single_control_plane_downtime)),
    }


RULES = Rules(_rules)
_PERCENT = re.compile(r"^\s*(\d{1,18})\s*%\s*$")  # int() refuses 4,301 digits
_INTEGER = re.compile(r"^\s*(\d{1,18})\s*$")


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    orders = context.upgrade_orders(manifests)
    if not orders:
        return
    from scanner.orders.read import clusters  # scanner.orders: imported once a tree has orders

    nodes = context.cluster.nodes if context.cluster is not None else []
    for cluster in clusters(orders):
        for order in cluster.live_workers:
            if order.kind.max_unavailable is not None:
                yield from _max_unavailable(order, order.kind.max_unavailable, nodes)
        newest = cluster.newest_control_plane
        if newest is not None and newest.kind.single_control_plane_downtime:
            yield from _single_control_plane(newest, nodes)


def _max_unavailable(order: UpgradeOrder, limit: MaxUnavailable, nodes: list[ClusterNode]) -> Iterator[Finding]:
    node = order.node(limit.path)
    text = scalar(node)
    if text is None:
        return  # the default (limit.default) is never above the ceiling
    percent, count = _PERCENT.match(text), _INTEGER.match(text)
    if not (percent or count):
        return
    selected = _selected_workers(order, limit, nodes) if nodes else None
    origin = order.origin_of(limit.path)
    field = ".".join(limit.path)
    if selected is None:
        if percent and int(percent.group(1)) > limit.ceiling_percent:
            yield order_finding(order, CLAMPED, "warning", (
                f"{field} {text} is above the operator's ceiling of {limit.ceiling_percent}% of the selected "
                f"workers: it is clamped to {limit.ceiling_percent}% of them (rounded down, at least one); "
                f"give --cluster-state with a nodes dump for the number"), order.minor, origin=origin)
        return
    if not selected:
        return
    n = len(selected)
    asked = math.ceil(int(percent.group(1)) * n / 100) if percent else int(count.group(1))
    ceiling = max(1, math.floor(limit.ceiling_percent * n / 100))
    if asked <= ceiling:
        return
    why = f"{text} of {n} selected workers rounds up to {asked}" if percent else f"{asked} of {n} selected workers"
    yield order_finding(order, CLAMPED, "warning", (
        f"{field}: {why}, above the operator's ceiling of {limit.ceiling_percent}% ({ceiling}): it upgrades "
        f"{ceiling} at a time instead"), order.minor, origin=origin,
        remediation=(f"set {field} to {ceiling} to say what will happen",))


def _selected_workers(order: UpgradeOrder, limit: MaxUnavailable, nodes: list[ClusterNode]) -> list[ClusterNode]:
    from scanner.orders.kinds import control_plane_labels

    labels = control_plane_labels()
    workers = [n for n in nodes if not any(label in n.labels for label in labels)]
    names = order.node(limit.node_names) if limit.node_names else None
    if names is not None:
        wanted = {scalar(item) for item in getattr(names, "value", ()) if not isinstance(item, tuple)}
        return [n for n in workers if n.name in wanted]
    selector = order.node(limit.node_selector) if limit.node_selector else None
    return [n for n in workers if _selects(selector, n.labels)] if selector is not None else workers


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    """A label selector's matchLabels and matchExpressions, as Kubernetes evaluates them."""
    match_labels = mapping_get(selector, "matchLabels")
    for key, value in getattr(match_labels, "value", ()):
        if labels.get(scalar(key)) != scalar(value):
            return False
    for expression in getattr(mapping_get(selector, "matchExpressions"), "value", ()):
        key, operator = scalar(mapping_get(expression, "key")), scalar(mapping_get(expression, "operator"))
        values = {scalar(v) for v in getattr(mapping_get(expression, "values"), "value", ())}
        present = key in labels
        ok = {"In": present and labels.get(key) in values, "NotIn": not present or labels.get(key) not in values,
              "Exists": present, "DoesNotExist": not present}.get(operator, False)
        if not ok:
            return False
    return True


def _single_control_plane(order: UpgradeOrder, nodes: list[ClusterNode]) -> Iterator[Finding]:
    """One control-plane node, or a concurrency that takes every one at once: no API server serves meanwhile."""
    from scanner.orders.kinds import CONTROL_PLANE, control_plane_labels
    from scanner.orders.version import parse_order_version

    labels = control_plane_labels()
    control_planes = [n for n in nodes if any(label in n.labels for label in labels)]
    if not control_planes or order.version is None or order.role != CONTROL_PLANE:
        return
    behind = [n for n in control_planes
              if (parse_order_version(n.kubelet_version) or order.version).key < order.version.key]
    if not behind:
        return  # every control-plane node is there already: nothing left to move
    after = "controllers stop reconciling and kubectl fails meanwhile (running pods keep running)"
    if len(control_planes) == 1:
        yield order_finding(order, SINGLE, "notice", (
            f"the cluster dump holds one control-plane node ({control_planes[0].name}): its API server is down while "
            f"it upgrades to {order.version_text}; {after}"), order.minor)
        return
    at_once = _integer(scalar(order.node(order.kind.concurrency))) if order.kind.concurrency else None
    if at_once is not None and at_once >= len(control_planes):
        yield order_finding(order, SINGLE, "notice", (
            f"concurrency {at_once} upgrades all {len(control_planes)} control-plane nodes of the cluster dump at "
            f"once: no API server serves while they restart at {order.version_text}; {after}; concurrency: 1 "
            f"keeps the others serving"), order.minor, origin=order.origin_of(order.kind.concurrency))


def _integer(text: str | None) -> int | None:
    match = _INTEGER.match(text or "")
    return int(match.group(1)) if match else None
