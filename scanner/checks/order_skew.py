"""Worker orders follow the control plane's: kubelets are never newer than the API server.

For each worker order of a cluster, against the newest control-plane order of that cluster (or,
without one, the cluster's current minor): a worker version above it is a blocker, and so is one
the version-skew policy leaves too far behind (rules/lifecycle/version-skew.yaml). A kind whose
controller wants the control plane at exactly the worker's version (yaki-operator) gets a
blocker for any other version. An agent Plan must wait for the server Plan with its prepare step
(`prepare.args: [prepare, <server plan>]`), or the controller upgrades both at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.findings import order_finding, order_kind_source
from scanner.checks.node_skew import load_policy
from scanner.model import Finding, Manifest
from scanner.paths import at
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.orders.read import Cluster, UpgradeOrder

AHEAD = "upgrade-order/worker-before-control-plane"
NOT_EXACT = "upgrade-order/worker-version-not-control-plane"
TOO_OLD = "upgrade-order/kubelet-skew"
NO_PREPARE = "upgrade-order/agent-without-prepare"
SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    policy = load_policy().source
    return {
        AHEAD: RuleInfo("a worker order above its control plane's",
                        "Kubelets are never newer than the API server: the control plane's order moves it first, "
                        "then the workers' follow.", "error", policy),
        NOT_EXACT: RuleInfo("a worker order not at its control plane's exact version",
                            "The operator starts a worker upgrade only when every control-plane node is Ready at "
                            "exactly the worker order's version (patch included), and fails it otherwise.", "error",
                            order_kind_source(lambda kind: kind.worker_needs_exact_version)),
        TOO_OLD: RuleInfo("a worker order outside the kubelet skew of its control plane",
                          "Kubelets may be only so many minors older than the API server (the version-skew policy): "
                          "the worker order must move before the control plane's passes that skew.", "error", policy),
        NO_PREPARE: RuleInfo("an agent Plan that does not wait for its server Plan",
                             "Without a prepare step that waits for the server Plan, the controller upgrades the "
                             "agents at once, and kubelets can run ahead of the API server.", "error",
                             order_kind_source(lambda kind: kind.prepare)),
    }


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    orders = context.upgrade_orders(manifests)
    if not orders:
        return
    from scanner.orders.read import clusters  # scanner.orders: imported once a tree has orders

    for cluster in clusters(orders):
        yield from _cluster(cluster, context)


def _cluster(cluster: Cluster, context: ScanContext) -> Iterator[Finding]:
    control_plane = cluster.newest_control_plane
    current = None if context.current_from_tree else context.current
    for worker in cluster.live_workers:
        yield from _prepare(worker, cluster)
        if worker.minor is None:
            continue
        if control_plane is not None:
            yield from _against_order(worker, control_plane)
        elif current is not None and worker.minor > current:
            yield order_finding(worker, AHEAD, "error", (
                f"{worker.version_text} is above the API server ({current}, the cluster's current minor) and no "
                f"control-plane order in the tree moves it: kubelets are never newer than the API server"),
                worker.minor, source=load_policy().source,
                remediation=(f"upgrade the control plane to {worker.minor} first",))


def _against_order(worker: UpgradeOrder, control_plane: UpgradeOrder) -> Iterator[Finding]:
    policy, target = load_policy(), control_plane.minor
    where = f"{control_plane.what} at {at(control_plane.origin)}"
    if worker.minor > target:
        yield order_finding(worker, AHEAD, "error", (
            f"{worker.version_text} is above the control plane's order ({control_plane.version_text}, {where}): "
            f"kubelets are never newer than the API server"), worker.minor, source=policy.source,
            remediation=(f"upgrade the control plane to {worker.minor} first ({where})",
                         "then this worker order"))
    elif (worker.kind.worker_needs_exact_version and worker.minor == target and worker.version
          and control_plane.version and not worker.version.same_release(control_plane.version)):
        yield order_finding(worker, NOT_EXACT, "error", (
            f"{worker.version_text} is not the control plane's version ({control_plane.version_text}, {where}): "
            f"the operator starts a worker upgrade only when every control-plane node is Ready at exactly "
            f"the worker order's version, and fails it otherwise"), worker.minor,
            remediation=(f"set spec.version to {control_plane.version_text}, or move the control plane to "
                         f"{worker.version_text} first",))
    elif target.minor - worker.minor.minor > policy.max_older(worker.minor):
        needed = policy.kubelet_needed(target)
        yield order_finding(worker, TOO_OLD, "error", (
            f"{worker.version_text} is too old for the control plane's order ({control_plane.version_text}, {where}): "
            f"kubelets may be {policy.max_older(worker.minor)} minors older than the API server, so an API server "
            f"at {target} needs kubelets at {needed} or newer"), target, source=policy.source,
            remediation=(f"move this worker order to {needed} or newer before the control plane reaches {target}",))


def _prepare(worker: UpgradeOrder, cluster: Cluster) -> Iterator[Finding]:
    """An agent Plan waits for its server Plan (system-upgrade-controller's prepare step)."""
    if worker.kind.prepare is None:
        return
    command = worker.kind.prepare[2]
    servers = sorted({o.manifest.name for o in cluster.control_planes if o.manifest.name})
    server = servers[0] if len(servers) == 1 else "<server plan>"
    wanted = f"prepare: {{image: <the upgrade image>, args: [{command}, {server}]}}"
    hop: Minor | None = worker.minor
    if not cluster.control_planes:
        if worker.prepare is None or worker.prepare.waits_for is None:
            # Nothing in the tree to wait for (k3OS upgrades its servers itself): a design to check, not a breakage.
            yield order_finding(worker, NO_PREPARE, "warning", (
                "agent Plan with no server Plan in the tree to wait for: nothing holds the agents back until the "
                "control plane is upgraded, so make sure it is upgraded first by other means"), hop,
                origin=worker.prepare.origin if worker.prepare is not None else None,
                remediation=("upgrade the control plane before the agents, or add its server Plan to the tree and "
                             f"set spec.prepare.args to [{command}, <server plan>]",))
        return
    if worker.prepare is None:
        yield order_finding(worker, NO_PREPARE, "error", (
            "agent Plan without a prepare step: the controller upgrades its nodes at once, without waiting for "
            "the server Plan, so kubelets can run ahead of the API server"), hop,
            remediation=(f"add to spec: {wanted}",))
    elif worker.prepare.waits_for is None:
        yield order_finding(worker, NO_PREPARE, "error", (
            f"the prepare step does not wait for a server Plan (its args must be [{command}, <server plan>]): "
            f"the agents are upgraded without waiting for the control plane"), hop, origin=worker.prepare.origin,
            remediation=(f"set spec.prepare.args to [{command}, {server}]",))
    elif worker.prepare.waits_for not in servers and cluster.control_planes:
        yield order_finding(worker, NO_PREPARE, "error", (
            f"the prepare step waits for Plan {worker.prepare.waits_for}, which is not this cluster's server Plan "
            f"({', '.join(servers) or 'none named'}): the agents are not held back until the control plane is done"),
            hop, origin=worker.prepare.origin,
            remediation=(f"set spec.prepare.args to [{command}, {server}]",))
