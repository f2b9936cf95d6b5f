"""The upgrade orders of a tree: each with its role, version, the line of the field, and its cluster.

An order is read from the composed YAML of a manifest, as its controller reads it: a Plan's role
from the node selector (control-plane label required: server; excluded: agent), its wait for the
server Plan from `prepare.args: [prepare, <server plan>]`; a KubernetesNodeUpgrade's from
spec.target.role; Cluster API's from the kind. Orders are then grouped into clusters (`Cluster`):
Cluster API by namespace and cluster name, the others by folder, an agent Plan with the server Plan
its prepare step names. `cluster_pins` is the one place the cluster's own minor is inferred from
the orders, for `plan` and `scan` alike.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from yaml.nodes import SequenceNode

from scanner.model import Manifest, Origin
from scanner.orders.kinds import CONTROL_PLANE, WORKER, OrderKind, control_plane_labels, order_kinds
from scanner.orders.version import OrderVersion, distro_of, parse_order_version
from scanner.nodes import locate, mapping_get, scalar
from scanner.versions import Minor

_CAPI_CLUSTER = ("cluster.x-k8s.io", "Cluster")


@dataclass(frozen=True)
class Prepare:
    """An upgrade order's prepare step, and the order it waits for."""

    waits_for: str | None  # the Plan the prepare step waits for; None: it waits for none
    origin: Origin


@dataclass(frozen=True)
class UpgradeOrder:
    """An upgrade order of the tree: its kind, the role it upgrades and the version it moves to."""

    manifest: Manifest
    kind: OrderKind
    role: str | None  # CONTROL_PLANE, WORKER, or None when the object does not say
    version: OrderVersion | None
    minor: Minor | None  # of the version, or the minor a channel names
    channel: str | None  # the release channel followed instead of a version
    origin: Origin  # the line of the version (or channel) field; the object's when neither is set
    distro: str | None  # kubernetes, k3s, rke2; None when nothing in the order says
    cluster: str | None = None  # Cluster API: the cluster it belongs to
    prepare: Prepare | None = None

    @property
    def what(self) -> str:
        return self.manifest.object_ref

    @property
    def floating(self) -> bool:
        """Follows a channel that names no minor (stable, latest): the version is the channel's."""
        return self.channel is not None and self.minor is None

    @property
    def version_text(self) -> str:
        if self.version is not None:
            return self.version.text
        return self.channel or "no version"

    def node(self, path: Sequence[str]) -> Any:
        node = self.manifest.node
        for key in path:
            node = mapping_get(node, key)
        return node

    def origin_of(self, path: Sequence[str]) -> Origin:
        """The line of the deepest key of `path` the object has (the field, or its nearest parent); for a
        value a Flux Kustomization's variable filled in, where the variable is set (`via`: where it is used)."""
        filled = self.manifest.filled_at(self.node(path)) if self.manifest.filled else None
        if filled is not None:
            return filled
        found = locate(self.manifest.node, path)
        mark = getattr(found, "start_mark", None)
        if mark is None or found is self.manifest.node:
            return self.manifest.origin
        base = self.manifest.origin
        return Origin(base.path, mark.line + 1, mark.column + 1, base.via)


@dataclass
class Cluster:
    """The orders of one cluster and family: its control-plane orders, oldest first, and its workers'."""

    family: str
    control_planes: list[UpgradeOrder] = field(default_factory=list)
    workers: list[UpgradeOrder] = field(default_factory=list)
    unknown: list[UpgradeOrder] = field(default_factory=list)  # role not stated

    @property
    def orders(self) -> list[UpgradeOrder]:
        return self.control_planes + self.workers + self.unknown

    @property
    def live_workers(self) -> list[UpgradeOrder]:
        """The worker orders still to act: all of a kind edited in place; of a kind that adds an
        object per attempt (the rest are its history), those at the newest version."""
        kept = [o for o in self.workers if o.kind.writes != "new-object"]
        history = [o for o in self.workers if o.kind.writes == "new-object" and o.minor is not None]
        if history:
            newest = max(order_key(o) for o in history)
            kept += [o for o in history if order_key(o) == newest]
        return kept

    @property
    def newest_control_plane(self) -> UpgradeOrder | None:
        versioned = [o for o in self.control_planes if o.minor is not None]
        return max(versioned, key=order_key) if versioned else None


def order_key(order: UpgradeOrder) -> tuple[int, ...]:
    if order.version is not None:
        return order.version.key
    return (*order.minor, 1 << 30, 0) if order.minor else (0, 0, 0, 0)  # a minor channel: its newest patch


def read_orders(manifests: Sequence[Manifest]) -> list[UpgradeOrder]:
    """Every upgrade order among `manifests`, in the order they were read."""
    kinds, labels = order_kinds(), control_plane_labels()
    capi_clusters = _capi_control_plane_refs(manifests)
    orders = []
    for manifest in manifests:
        kind = kinds.get((manifest.api_version, manifest.kind))
        if kind is not None and manifest.node is not None:
            orders.append(_order(manifest, kind, labels, capi_clusters))
    return orders


def _order(manifest: Manifest, kind: OrderKind, labels: Sequence[str],
           capi_clusters: dict[tuple[str | None, str], str]) -> UpgradeOrder:
    probe = UpgradeOrder(manifest, kind, None, None, None, None, manifest.origin, None)
    version = parse_order_version(scalar(probe.node(kind.version)))
    channel = scalar(probe.node(kind.channel)) if kind.channel else None
    minor = version.minor if version else _channel_minor(kind, channel)
    path = kind.version if version is not None or channel is None else kind.channel
    return UpgradeOrder(
        manifest, kind, _role(probe, kind, labels), version, minor, channel if version is None else None,
        probe.origin_of(path), _distro(probe, kind, version, channel),
        _cluster(probe, kind, capi_clusters), _prepare(probe, kind))


def _channel_minor(kind: OrderKind, channel: str | None) -> Minor | None:
    m = kind.minor_channel.search(channel) if kind.minor_channel and channel else None
    if not m:
        return None
    major, minor = m.group("minor").split(".")
    return Minor(int(major), int(minor))


def _role(order: UpgradeOrder, kind: OrderKind, labels: Sequence[str]) -> str | None:
    if kind.fixed_role:
        return kind.fixed_role
    if kind.role_field:
        return kind.role_values.get(scalar(order.node(kind.role_field)) or "")
    if kind.node_selector:
        return _selector_role(order.node(kind.node_selector), labels)
    return None


def _selector_role(selector: Any, labels: Sequence[str]) -> str | None:
    """Control plane when the selector requires a control-plane label, worker when it excludes it."""
    required, excluded = False, False
    match_labels = mapping_get(selector, "matchLabels")
    for label in labels:
        if scalar(mapping_get(match_labels, label)) == "true":
            required = True
    for expression in _items(mapping_get(selector, "matchExpressions")):
        key, operator = scalar(mapping_get(expression, "key")), scalar(mapping_get(expression, "operator"))
        if key not in labels:
            continue
        values = [scalar(v) for v in _items(mapping_get(expression, "values"))]
        if operator == "Exists" or (operator == "In" and "true" in values):
            required = True
        elif operator == "DoesNotExist" or (operator == "NotIn" and "true" in values):
            excluded = True
    if required == excluded:
        return None  # neither, or a selector that can match nothing
    return CONTROL_PLANE if required else WORKER


def _items(node: Any) -> list[Any]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def _distro(order: UpgradeOrder, kind: OrderKind, version: OrderVersion | None, channel: str | None) -> str | None:
    if version is not None and distro_of(version.text):
        return distro_of(version.text)
    if kind.distro_image:
        image = _image_name(scalar(order.node(kind.distro_image)) or "")
        if image in kind.distro_images:
            return kind.distro_images[image]
    host = re.match(r"^https?://([^/]+)", channel or "")
    if host and host.group(1) in kind.distro_channel_hosts:
        return kind.distro_channel_hosts[host.group(1)]
    return None if kind.distro_images or kind.distro_channel_hosts else "kubernetes"


def _image_name(reference: str) -> str:
    name = reference.partition("@")[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[:name.rfind(":")]
    for prefix in ("docker.io/", "index.docker.io/"):
        name = name.removeprefix(prefix)
    return name


def _prepare(order: UpgradeOrder, kind: OrderKind) -> Prepare | None:
    if kind.prepare is None:
        return None
    field_path, args_path, command = kind.prepare
    if order.node(field_path) is None:
        return None
    args = [scalar(a) for a in _items(order.node(args_path))]
    waits_for = args[1] if len(args) >= 2 and args[0] == command else None
    return Prepare(waits_for, order.origin_of(args_path))


def _cluster(order: UpgradeOrder, kind: OrderKind, refs: dict[tuple[str | None, str], str]) -> str | None:
    if kind.cluster_field:
        return scalar(order.node(kind.cluster_field))
    if kind.cluster_label:
        label = scalar(mapping_get(mapping_get(mapping_get(order.manifest.node, "metadata"), "labels"),
                                   kind.cluster_label))
        return label or refs.get((order.manifest.namespace, order.manifest.name or ""))
    return None


def _capi_control_plane_refs(manifests: Iterable[Manifest]) -> dict[tuple[str | None, str], str]:
    """(namespace, control plane name) -> the Cluster whose spec.controlPlaneRef names it."""
    refs = {}
    for manifest in manifests:
        if (manifest.group, manifest.kind) != _CAPI_CLUSTER:
            continue
        ref = mapping_get(mapping_get(manifest.node, "spec"), "controlPlaneRef")
        name = scalar(mapping_get(ref, "name"))
        if name and manifest.name:
            refs[(scalar(mapping_get(ref, "namespace")) or manifest.namespace, name)] = manifest.name
    return refs


# --- clusters ---------------------------------------------------------------------------------------

def clusters(orders: Sequence[UpgradeOrder]) -> list[Cluster]:
    """The orders grouped by the cluster they upgrade."""
    groups: dict[tuple, Cluster] = {}
    placed_later: list[UpgradeOrder] = []
    for order in orders:
        if order.role == WORKER:
            placed_later.append(order)
            continue
        group = groups.setdefault(_home(order), Cluster(order.kind.family))
        (group.control_planes if order.role == CONTROL_PLANE else group.unknown).append(order)
    for order in placed_later:
        home = _worker_home(order, groups)
        groups.setdefault(home, Cluster(order.kind.family)).workers.append(order)
    for group in groups.values():
        group.control_planes.sort(key=order_key)
    return list(groups.values())


def _home(order: UpgradeOrder) -> tuple:
    if order.kind.family == "cluster-api":
        return (order.kind.family, order.manifest.namespace, order.cluster)
    return (order.kind.family, os.path.dirname(order.manifest.origin.path))


def _worker_home(order: UpgradeOrder, groups: dict[tuple, Cluster]) -> tuple:
    family = order.kind.family
    if family == "cluster-api":
        home = _home(order)
        if home in groups:
            return home
        unnamed = [k for k in groups if k[:2] == (family, order.manifest.namespace) and k[2] is None]
        return unnamed[0] if len(unnamed) == 1 else home
    if order.prepare is not None and order.prepare.waits_for:
        named = [k for k, g in groups.items() for o in g.control_planes + g.unknown
                 if k[0] == family and o.manifest.namespace == order.manifest.namespace
                 and o.manifest.name == order.prepare.waits_for]
        if named:
            return _nearest(order, named)
    candidates = [k for k, g in groups.items() if k[0] == family and g.control_planes]
    return _nearest(order, candidates) if candidates else _home(order)


def _nearest(order: UpgradeOrder, homes: list[tuple]) -> tuple:
    """The home whose folder shares the longest path with the order's; its own folder on a tie."""
    folder = os.path.dirname(order.manifest.origin.path).split(os.sep)

    def shared(home: tuple) -> int:
        other = home[1].split(os.sep)
        n = 0
        while n < min(len(folder), len(other)) and folder[n] == other[n]:
            n += 1
        return n

    best = max(shared(h) for h in homes)
    nearest = sorted({h for h in homes if shared(h) == best})
    return nearest[0] if len(nearest) == 1 else _home(order)


def cluster_pins(orders: Sequence[UpgradeOrder]) -> list[UpgradeOrder]:
    """Per cluster, the order that says its minor: the newest control-plane order (the minor the
    cluster runs once its orders are applied); without one, the newest order of unstated role,
    then the newest worker order (a lower bound: kubelets are never newer than the API server)."""
    pins = []
    for group in clusters(orders):
        for candidates in (group.control_planes, group.unknown, group.workers):
            versioned = [o for o in candidates if o.minor is not None]
            if versioned:
                pins.append(max(versioned, key=order_key))
                break
    return pins
