"""What each Kubernetes minor refuses in a component's configuration, and what each client tool
supports, read once from rules/cluster-config/ and rules/client-tools.yaml (validated by schema)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scanner import data
from scanner.versions import Minor, parse_minor

PROJECTED = "projected"


@dataclass(frozen=True)
class Gate:
    name: str
    removed_in: Minor | None
    locked_in: Minor | None
    locked_to: bool | None
    history: str  # its stages for a person: "alpha 1.16-1.22, beta 1.23-1.24, GA 1.25-1.26"
    source: str  # its page: stages, lock
    removal_source: str  # where removed_in comes from (its page, unless the data names another)
    projected: bool = False  # removed_in rests on a pre-release source
    lock_projected: bool = False  # locked_in does


@dataclass(frozen=True)
class RemovedFlag:
    component: str
    flag: str
    removed_in: Minor
    note: str
    source: str
    projected: bool = False


@dataclass(frozen=True)
class RemovedName:
    """An admission plugin, a scheduler plugin or a configuration version a minor no longer has."""

    name: str
    removed_in: Minor
    replacement: str
    source: str
    projected: bool = False
    kinds: tuple[str, ...] = ()  # a configuration version: the kinds it is removed for
    component: str = ""
    note: str = ""


@dataclass(frozen=True)
class DeprecatedSetting:
    component: str
    setting: str
    value: str
    deprecated_in: Minor
    replacement: str
    note: str
    source: str


@dataclass(frozen=True)
class NodeFile:
    file: str
    unless_beside: str | None
    distros: tuple[str, ...]
    changed_in: Minor
    detail: str
    source: str


@dataclass(frozen=True)
class ConfigRules:
    gates: dict[str, Gate]
    gate_semantics: str  # where the answers to removed and locked gates are read
    flags: dict[tuple[str, str], RemovedFlag]  # (component, flag)
    admission_plugins: dict[str, RemovedName]
    config_versions: dict[str, RemovedName]  # apiVersion
    scheduler_plugins: dict[str, RemovedName]
    settings: tuple[DeprecatedSetting, ...]
    node_files: dict[str, NodeFile]
    runtime_config_source: str  # where a --runtime-config version the API server lacks is answered


@dataclass(frozen=True)
class ToolRange:
    version: tuple[int, int]
    min: Minor
    max: Minor


@dataclass(frozen=True)
class ClientTool:
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
def config_rules() -> ConfigRules:
    gates_file = data.load("rules/cluster-config/feature-gates.yaml")
    flags_file = data.load("rules/cluster-config/component-flags.yaml")
    apis = data.load("rules/cluster-config/config-apis.yaml")
    values = data.load("rules/cluster-config/config-sources.yaml")["value_lists"]
    return ConfigRules(
        gates={g["name"]: _gate(g) for g in gates_file["gates"]},
        gate_semantics=gates_file["semantics_source"],
        flags={(e["component"], flag): RemovedFlag(e["component"], flag, parse_minor(e["removed_in"]), e["note"],
                                                  e["source"], e.get("status") == PROJECTED)
               for e in flags_file["flags"] for flag in e["flags"]},
        admission_plugins={e["plugin"]: _removed(e["plugin"], e) for e in flags_file["admission_plugins"]},
        config_versions={e["api_version"]: _removed(e["api_version"], e, kinds=tuple(e["kinds"]),
                                                    component=e["component"], note=e.get("note", ""))
                         for e in apis["config_versions"]},
        scheduler_plugins={name: _removed(name, e) for e in apis["scheduler_plugins"] for name in e["plugins"]},
        settings=tuple(DeprecatedSetting(e["component"], e["setting"], e["value"], parse_minor(e["deprecated_in"]),
                                         e["replacement"], e["note"], e["source"]) for e in apis["settings"]),
        node_files=node_files(),
        runtime_config_source=values["runtime_config_source"],
    )


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


def _gate(entry: dict) -> Gate:
    stages = entry.get("stages", ())
    history = ", ".join(f"{'GA' if s['stage'] == 'stable' else s['stage']} {s['from']}"
                        + (f"-{s['to']}" if s.get("to") and s["to"] != s["from"] else "" if s.get("to") else "+")
                        for s in stages)
    removed, locked = entry.get("removed_in"), entry.get("locked_in")
    projected = entry.get("status") == PROJECTED
    # `removal_source`: only the removal rests on it (and on `status`); the page stated the rest
    return Gate(entry["name"], parse_minor(removed) if removed else None, parse_minor(locked) if locked else None,
                entry.get("locked_to"), history, entry["source"], entry.get("removal_source") or entry["source"],
                projected, projected and "removal_source" not in entry)


def _removed(name: str, entry: dict, **extra) -> RemovedName:
    return RemovedName(name, parse_minor(entry["removed_in"]), entry["replacement"], entry["source"],
                       entry.get("status") == PROJECTED, **extra)


def _major_minor(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor)
