"""What each kind of upgrade order is, as rules/upgrade-orders.yaml says: loaded once."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from scanner import data

CONTROL_PLANE, WORKER = "control-plane", "worker"


@dataclass(frozen=True)
class MaxUnavailable:
    """Where an upgrade order says how many nodes may be down at once, and its default."""

    path: tuple[str, ...]
    default: int
    ceiling_percent: int
    node_names: tuple[str, ...] | None
    node_selector: tuple[str, ...] | None


@dataclass(frozen=True)
class OrderKind:
    """A kind of upgrade order (rules/upgrade-orders.yaml): where it keeps its version, role and channel."""

    family: str  # "yaki", "system-upgrade", "cluster-api"
    kind: str
    api_versions: tuple[str, ...]
    title: str
    version: tuple[str, ...]
    writes: str  # "in-place", "new-object" or "none"
    source: str
    fixed_role: str | None = None
    role_field: tuple[str, ...] | None = None
    role_values: dict[str, str] = field(default_factory=dict)
    node_selector: tuple[str, ...] | None = None
    channel: tuple[str, ...] | None = None
    minor_channel: re.Pattern | None = None
    worker_needs_exact_version: bool = False
    max_unavailable: MaxUnavailable | None = None
    single_control_plane_downtime: bool = False
    prepare: tuple[tuple[str, ...], tuple[str, ...], str] | None = None  # field, args, command
    distro_image: tuple[str, ...] | None = None
    distro_images: dict[str, str] = field(default_factory=dict)
    distro_channel_hosts: dict[str, str] = field(default_factory=dict)
    cluster_label: str | None = None
    cluster_field: tuple[str, ...] | None = None
    replicas: tuple[str, ...] | None = None
    concurrency: tuple[str, ...] | None = None  # how many nodes the controller upgrades at once
    not_written: str | None = None


@functools.cache
def control_plane_labels() -> tuple[str, ...]:
    """The node labels that mark a control-plane node (rules/lifecycle/version-skew.yaml)."""
    return tuple(e["label"] for e in data.load("rules/lifecycle/version-skew.yaml")["control_plane_labels"])


@functools.cache
def order_kinds() -> dict[tuple[str, str], OrderKind]:
    """(apiVersion, kind) -> what such an object is."""
    kinds: dict[tuple[str, str], OrderKind] = {}
    for entry in data.load("rules/upgrade-orders.yaml")["kinds"]:
        kind = _kind(entry)
        for api_version in kind.api_versions:
            kinds[(api_version, kind.kind)] = kind
    return kinds


def _path(entry: dict, key: str) -> tuple[str, ...] | None:
    value = entry.get(key)
    return tuple(value) if value else None


def _kind(entry: dict[str, Any]) -> OrderKind:
    role, distro, cluster = entry["role"], entry.get("distro", {}), entry.get("cluster", {})
    limit = entry.get("max_unavailable")
    prepare = entry.get("prepare")
    return OrderKind(
        family=entry["family"], kind=entry["kind"], api_versions=tuple(entry["apiVersions"]),
        title=entry["title"], version=tuple(entry["version"]), writes=entry["writes"], source=entry["source"],
        fixed_role=role.get("fixed"), role_field=_path(role, "field"), role_values=dict(role.get("values", {})),
        node_selector=_path(role, "node_selector"), channel=_path(entry, "channel"),
        minor_channel=re.compile(entry["minor_channel"]) if entry.get("minor_channel") else None,
        worker_needs_exact_version=entry.get("worker_needs_exact_control_plane_version", False),
        max_unavailable=MaxUnavailable(tuple(limit["field"]), limit["default"], limit["ceiling_percent"],
                                       _path(limit, "node_names"), _path(limit, "node_selector")) if limit else None,
        single_control_plane_downtime=entry.get("single_control_plane_downtime", False),
        prepare=(tuple(prepare["field"]), tuple(prepare["args"]), prepare["command"]) if prepare else None,
        distro_image=_path(distro, "image"), distro_images=dict(distro.get("images", {})),
        distro_channel_hosts=dict(distro.get("channel_hosts", {})),
        cluster_label=cluster.get("label"), cluster_field=_path(cluster, "field"),
        replicas=_path(entry, "replicas"), concurrency=_path(entry, "concurrency"),
        not_written=entry.get("not_written"),
    )
