"""Nodes of the cluster dump that block a hop under the Kubernetes version-skew policy.

For each hop of the API server to minor M, with the policy of rules/lifecycle/version-skew.yaml:
every control-plane node is within `apiserver_max_skew` of M before any moves to M; no kubelet
is newer than the API server; no kubelet is older than the policy lets it be. A node is reported
once, at the first hop it blocks, with the version it needs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Sequence

from scanner import data
from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.cluster_state import ClusterNode
from scanner.model import Finding, Manifest
from scanner.versions import Minor, parse_minor

SCOPE = TREE
NEWER, CONTROL_PLANE_ORDER, TOO_OLD = "node-skew/kubelet-newer", "node-skew/control-plane-order", \
    "node-skew/kubelet-too-old"


def _rules(_rulebook) -> dict[str, RuleInfo]:
    source = load_policy().source
    return {
        NEWER: RuleInfo("a node of the cluster dump runs a kubelet newer than the API server",
                        "The version-skew policy lets no kubelet be newer than the API server: the control plane "
                        "moves first, before any other node.", "error", source),
        CONTROL_PLANE_ORDER: RuleInfo("a control-plane node too far behind for the API server's next hop",
                                      "Every control-plane node must be within the policy's skew of the minor the "
                                      "API server moves to before any moves: upgrade the named nodes first.",
                                      "error", source),
        TOO_OLD: RuleInfo("a kubelet older than the API server's hop allows",
                          "Kubelets may be only so many minors older than the API server (the version-skew "
                          "policy): the named nodes must be upgraded before the API server reaches that minor.",
                          "error", source),
    }


RULES = Rules(_rules)


@dataclass(frozen=True)
class SkewPolicy:
    """Kubernetes' version skew policy (rules/lifecycle/version-skew.yaml)."""

    apiserver_max_skew: int
    kubelet_newer_allowed: bool
    kubelet_max_older: tuple[tuple[Minor, int], ...]  # (kubelet from, minors), newest first
    control_plane_labels: tuple[str, ...]
    source: str

    def max_older(self, kubelet: Minor) -> int:
        return next((minors for since, minors in self.kubelet_max_older if kubelet >= since), 0)

    def kubelet_needed(self, apiserver: Minor) -> Minor:
        """The oldest kubelet an API server at `apiserver` supports."""
        kubelet = Minor(apiserver.major, 0)
        while kubelet.minor + self.max_older(kubelet) < apiserver.minor:
            kubelet = kubelet.next()
        return kubelet


@functools.cache
def load_policy() -> SkewPolicy:
    document = data.load("rules/lifecycle/version-skew.yaml")
    return SkewPolicy(
        apiserver_max_skew=document["apiserver_max_skew"],
        kubelet_newer_allowed=document["kubelet_newer_allowed"],
        kubelet_max_older=tuple(sorted(((parse_minor(e["kubelet_from"]), e["minors"])
                                        for e in document["kubelet_max_older"]), reverse=True)),
        control_plane_labels=tuple(e["label"] for e in document["control_plane_labels"]),
        source=document["source"],
    )


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    cluster = context.cluster
    apiserver = (cluster.server or context.current) if cluster else None
    if apiserver is None or apiserver >= context.target:
        return
    policy = load_policy()
    groups: dict[_Blocker, list[ClusterNode]] = {}
    for node in cluster.nodes:
        blocker = _first_blocker(node, apiserver, policy)
        if blocker is not None and blocker.hop <= context.target:
            groups.setdefault(blocker, []).append(node)
    for blocker, nodes in groups.items():
        yield _finding(blocker, nodes, apiserver, policy)


@dataclass(frozen=True)
class _Blocker:
    """The first hop a node's kubelet blocks, and the kubelet version that clears it."""

    hop: Minor  # the first hop of the API server the node blocks
    rule_id: str
    needed: Minor | None  # the kubelet version that clears it (None: the API server must move)
    already: bool  # outside the policy before any hop


def _first_blocker(node: ClusterNode, apiserver: Minor, policy: SkewPolicy) -> _Blocker | None:
    first_hop = apiserver.next()
    if node.kubelet > apiserver:
        return None if policy.kubelet_newer_allowed else _Blocker(first_hop, NEWER, None, True)
    blockers = []
    if node.kubelet < apiserver and any(label in node.labels for label in policy.control_plane_labels):
        hop = _later(node.kubelet, policy.apiserver_max_skew + 1)
        blocked = max(hop, first_hop)
        blockers.append(_Blocker(blocked, CONTROL_PLANE_ORDER,
                                 _later(blocked, -policy.apiserver_max_skew), hop <= apiserver))
    hop = _later(node.kubelet, policy.max_older(node.kubelet) + 1)
    blocked = max(hop, first_hop)
    blockers.append(_Blocker(blocked, TOO_OLD, policy.kubelet_needed(blocked), hop <= apiserver))
    return min(blockers, key=lambda b: b.hop)


def _later(minor: Minor, minors: int) -> Minor:
    return Minor(minor.major, minor.minor + minors)


def _finding(blocker: _Blocker, nodes: list[ClusterNode], apiserver: Minor, policy: SkewPolicy) -> Finding:
    named = ", ".join(f"{n.name} ({n.kubelet_version})" for n in nodes)
    blocks = f"blocks the hop of the API server to {blocker.hop}"
    if blocker.already:
        blocks += " (already outside the policy today)"
    message = {
        NEWER: f"outside the policy today: no kubelet may be newer than the API server ({apiserver}): {named}; "
               f"the control plane moves to {blocker.hop} before any other node",
        CONTROL_PLANE_ORDER: f"{blocks}: every control-plane node must be at {blocker.needed} or newer before any "
                             f"moves to {blocker.hop}: upgrade {named} first",
        TOO_OLD: f"{blocks}: kubelets must be at {blocker.needed} or newer for an API server at {blocker.hop}: "
                 f"upgrade {named} first",
    }[blocker.rule_id]
    return Finding(
        rule_id=blocker.rule_id,
        severity="error",
        message=message,
        origin=nodes[0].origin,
        api_version="v1",
        kind="Node",
        name=", ".join(n.name for n in nodes),
        breaks_in=blocker.hop,
        source_url=policy.source,
    )
