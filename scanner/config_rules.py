"""What each Kubernetes minor refuses in a component's configuration, read once from
rules/cluster-config/ (validated by schema) by the cluster-config check, for a tree that configures a
component. What every scan's tool-file walk needs (the node files, the client tools) is
scanner.tool_rules'."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scanner import data
from scanner.tool_rules import NodeFile, node_files
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
