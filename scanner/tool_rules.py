"""What the tool-file walk (scanner/sources/cluster/tool_pins.py) looks for on every scan, read once
from rules/client-tools.yaml and rules/cluster-config/config-apis.yaml (validated by schema): each
client tool's names, supported Kubernetes range and skew, and the node files a distribution reads.
The rest of the cluster-configuration facts, which only a tree that configures a component needs,
are scanner.config_rules': a scan that configures none creates none of their classes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scanner import data
from scanner.versions import Minor, parse_minor


@dataclass(frozen=True)
class NodeFile:
    """A file a node reads as it is (a containerd config template) that a distribution's minor reads
    differently."""

    file: str
    unless_beside: str | None
    distros: tuple[str, ...]
    changed_in: Minor
    detail: str
    source: str


@dataclass(frozen=True)
class ToolRange:
    """The Kubernetes minors one release line of a client tool supports."""

    version: tuple[int, int]
    min: Minor
    max: Minor


@dataclass(frozen=True)
class ClientTool:
    """A client tool (kubectl, helm, flux): how the tree pins it, its skew and the minors it supports."""

    name: str
    skew: int | None
    skew_source: str | None
    ranges: tuple[ToolRange, ...]
    ranges_source: str | None
    pairs_with: str | None  # the compat-matrix component whose release the tool's version is
    pairing_source: str | None
    names: tuple[str, ...]
    env_keys: tuple[str, ...]
    images: tuple[str, ...]
    actions: tuple[str, ...]


@functools.cache
def node_files() -> dict[str, NodeFile]:
    """The node files by name: every scan looks for them (sources/cluster/tool_pins.py), so they are read
    without the rest of the configuration facts, which only a tree that configures a component needs."""
    return {e["file"]: NodeFile(e["file"], e.get("unless_beside"), tuple(e["distros"]), parse_minor(e["changed_in"]),
                                e["detail"], e["source"])
            for e in data.load("rules/cluster-config/config-apis.yaml")["node_files"]}


@functools.cache
def client_tools() -> dict[str, ClientTool]:
    tools = {}
    for entry in data.load("rules/client-tools.yaml")["tools"]:
        skew, pairs = entry.get("skew") or {}, entry.get("pairs_with") or {}
        tools[entry["name"]] = ClientTool(
            name=entry["name"], skew=skew.get("minors"), skew_source=skew.get("source"),
            ranges=tuple(ToolRange(_major_minor(r["version"]), parse_minor(r["min"]), parse_minor(r["max"]))
                         for r in entry.get("ranges", ())),
            ranges_source=entry.get("ranges_source"),
            pairs_with=pairs.get("component"), pairing_source=pairs.get("source"),
            names=tuple(entry["names"]), env_keys=tuple(entry["env_keys"]), images=tuple(entry["images"]),
            actions=tuple(entry["actions"]))
    return tools


def _major_minor(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor)
