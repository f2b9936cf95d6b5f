"""The readers' common ground: the data of rules/cluster-config/config-sources.yaml, where the
nodes being read sit in their file, and what a file gives (Settings and problems), with the parsing
of a flag, a --feature-gates list, a featureGates mapping, an extraArgs block and the component
configuration objects. sources/cluster/settings.py and sources/cluster/talos.py read the tree with it."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from scanner import data
from scanner.cluster_config import ADMISSION_PLUGIN, CONFIG_FIELD, CONFIG_VERSION, FEATURE_GATE, FLAG, \
    RUNTIME_CONFIG, SCHEDULER_PLUGIN, Setting
from scanner.model import Diagnostic, Origin
from scanner.nodes import mapping_get, scalar, sequence_items, value_at

# Go's strconv.ParseBool, which component-base reads each gate's value with.
_TRUE, _FALSE = ("1", "t", "T", "TRUE", "true", "True"), ("0", "f", "F", "FALSE", "false", "False")


@dataclass(frozen=True)
class Sources:
    """rules/cluster-config/config-sources.yaml, as the readers use it."""

    arg_keys: dict[str, str]  # K3s/RKE2 key -> component
    arg_object_groups: tuple[str, ...]  # objects that carry K3s flags (k3d)
    gates_flag: str
    admission_flags: tuple[str, ...]
    proxy_mode_flag: str
    runtime_config_flag: str
    gates_field: str
    proxy_mode_field: str
    talos_extra_args: dict[tuple[str, ...], str]  # path -> component
    talos_kubelet_config: tuple[str, ...]
    talos_scheduler_config: tuple[str, ...]
    talos_proxy_mode: tuple[str, ...]
    talos_disabled: str
    talos_extra_manifests: tuple[str, ...]
    talhelper_patches: tuple[str, ...]
    kubeadm_extra_args: dict[str, tuple[tuple[tuple[str, ...], str], ...]]  # kind -> ((path, component), ...)
    component_configs: dict[tuple[str, str], str]  # (group, kind) -> component
    markers: tuple[str, ...]  # text that a file holding any of it must contain


@functools.cache
def sources() -> Sources:
    doc = data.load("rules/cluster-config/config-sources.yaml")
    values, talos, kubeadm = doc["value_lists"], doc["talos"], doc["kubeadm"]
    arg_keys = {e["key"]: e["component"] for e in doc["arg_lists"]["keys"]}
    kubeadm_args: dict[str, list] = {}
    for entry in kubeadm["extra_args"]:
        kubeadm_args.setdefault(entry["kind"], []).append((tuple(entry["path"].split(".")), entry["component"]))
    configs = {(e["group"], e["kind"]): e["component"] for e in doc["component_configs"]["kinds"]}
    path = lambda dotted: tuple(dotted.split("."))  # noqa: E731
    markers = (*arg_keys, "extraArgs", "extraConfig", values["feature_gates_field"], *talos["talhelper_patches"],
               *{group for group, _ in configs}, "proxy", talos["extra_manifests"].rpartition(".")[2])
    return Sources(arg_keys, tuple(doc["arg_lists"]["object_groups"]), values["feature_gates_flag"],
                   tuple(values["admission_plugin_flags"]), values["proxy_mode_flag"], values["runtime_config_flag"],
                   values["feature_gates_field"], values["proxy_mode_field"],
                   {path(e["path"]): e["component"] for e in talos["extra_args"]}, path(talos["kubelet_config"]),
                   path(talos["scheduler_config"]), path(talos["proxy_mode"]), talos["disabled"],
                   path(talos["extra_manifests"]), tuple(talos["talhelper_patches"]),
                   {kind: tuple(v) for kind, v in kubeadm_args.items()}, configs, markers)


@dataclass(frozen=True)
class Place:
    """Where the nodes being read sit in the file: a YAML string embedded in another (a talhelper
    patch) is read with its own line numbers, shifted to the file's; a quoted one's nodes all point
    at the string itself."""

    path: str
    line_offset: int = 0
    column_offset: int = 0
    at: Origin | None = None

    def origin(self, node: Any) -> Origin:
        if self.at is not None:
            return self.at
        mark = node.start_mark
        return Origin(self.path, mark.line + 1 + self.line_offset, mark.column + 1 + self.column_offset)


@dataclass
class Reading:
    """What the readers found in one file."""

    path: str
    settings: list[Setting] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)

    def problem(self, origin: Origin, message: str, level: str = "warning") -> None:
        self.problems.append(Diagnostic(self.path, message, origin.line or None, level))

    # --- flags -------------------------------------------------------------------------------------

    def flag(self, component: str, text: str, origin: Origin, via: str) -> None:
        """One `name=value` flag (dashes optional) given to `component`, and what its value names."""
        name, _, value = text.strip().lstrip("-").partition("=")
        if not name or "{{" in text:
            return
        self.flag_value(component, name.strip(), value.strip(), origin, via)

    def flag_value(self, component: str, name: str, value: str, origin: Origin, via: str) -> None:
        found = sources()
        self.settings.append(Setting(component, FLAG, name, value, origin, via))
        if name == found.gates_flag:
            self.gate_list(component, value, origin, via)
        elif name in found.admission_flags:
            for plugin in filter(None, (p.strip() for p in value.split(","))):
                self.settings.append(Setting(component, ADMISSION_PLUGIN, plugin, name, origin, via))
        elif name == found.proxy_mode_flag:
            self.settings.append(Setting(component, CONFIG_FIELD, found.proxy_mode_field, value, origin, via))
        elif name == found.runtime_config_flag:
            for entry in filter(None, (e.strip() for e in value.split(","))):
                key, _, enabled = entry.partition("=")
                if key.count("/") in (1, 2) and not key.startswith("api/"):
                    group_version = "/".join(key.split("/")[:2])
                    self.settings.append(Setting(component, RUNTIME_CONFIG, group_version, enabled or "true",
                                                 origin, via))

    def gate_list(self, component: str, value: str, origin: Origin, via: str) -> None:
        """`A=true,B=false`, as component-base splits it."""
        for part in value.split(","):
            if not part.strip():
                continue
            gate, sep, setting = (s.strip() for s in part.partition("="))
            if not sep or setting not in _TRUE + _FALSE:
                self.problem(origin, f"{via}: feature gate entry {part.strip()!r} has no true or false value; "
                                     f"{component} refuses to start with it")
                continue
            self.gate(component, gate, setting in _TRUE, origin, via)

    def gate(self, component: str, gate: str, enabled: bool, origin: Origin, via: str) -> None:
        self.settings.append(Setting(component, FEATURE_GATE, gate, "true" if enabled else "false", origin, via))

    def gate_map(self, component: str, node: Any, place: Place, via: str) -> None:
        """A `featureGates` mapping: gate -> true/false."""
        if not isinstance(node, MappingNode):
            return
        for key, value in node.value:
            text = scalar(value)
            if not isinstance(key, ScalarNode) or text is None:
                continue
            if text not in _TRUE + _FALSE:
                self.problem(place.origin(key), f"{via}: featureGates {key.value!r} is {text!r}, not true or false")
                continue
            self.gate(component, key.value, text in _TRUE, place.origin(key), via)

    def extra_args(self, component: str, node: Any, place: Place, via: str) -> None:
        """A kubeadm / Talos `extraArgs`: a mapping of flag -> value, or (kubeadm v1beta4) a list of
        {name, value}."""
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    self.flag_value(component, key.value.lstrip("-"), scalar(value) or "", place.origin(key), via)
        for item in sequence_items(node):
            name = scalar(mapping_get(item, "name"))
            if name:
                self.flag_value(component, name.lstrip("-"), scalar(mapping_get(item, "value")) or "",
                                place.origin(item), via)

    # --- component configuration objects -------------------------------------------------------------

    def component_config(self, root: Any, place: Place, via: str | None = None) -> bool:
        """A KubeletConfiguration, KubeProxyConfiguration, KubeSchedulerConfiguration or kubeadm object."""
        found = sources()
        api_version, kind = scalar(mapping_get(root, "apiVersion")), scalar(mapping_get(root, "kind"))
        if not api_version or not kind:
            return False
        component = found.component_configs.get((api_version.rpartition("/")[0], kind))
        if component is None:
            return False
        via = via or kind
        self.settings.append(Setting(component, CONFIG_VERSION, api_version, kind,
                                     place.origin(mapping_get(root, "apiVersion")), via))
        self.gate_map(component, mapping_get(root, found.gates_field), place, f"{via} {found.gates_field}")
        mode = mapping_get(root, found.proxy_mode_field) if component == "kube-proxy" else None
        if scalar(mode):
            self.settings.append(Setting(component, CONFIG_FIELD, found.proxy_mode_field, scalar(mode),
                                         place.origin(mode), via))
        if kind == "KubeSchedulerConfiguration":
            self.scheduler_plugins(root, place, via)
        for path, target in found.kubeadm_extra_args.get(kind, ()):
            self.extra_args(target, value_at(root, *path), place, f"kubeadm {kind} {'.'.join(path)}")
        return True

    def scheduler_plugins(self, root: Any, place: Place, via: str) -> None:
        for profile in sequence_items(mapping_get(root, "profiles")):
            plugins = mapping_get(profile, "plugins")
            for point, entry in plugins.value if isinstance(plugins, MappingNode) else ():
                for state in ("enabled", "disabled"):
                    for item in sequence_items(mapping_get(entry, state)):
                        name = scalar(mapping_get(item, "name"))
                        if name and name != "*":
                            self.settings.append(Setting("kube-scheduler", SCHEDULER_PLUGIN, name, state,
                                                         place.origin(item), f"{via} plugins.{point.value}.{state}"))
            for item in sequence_items(mapping_get(profile, "pluginConfig")):
                name = scalar(mapping_get(item, "name"))
                if name:
                    self.settings.append(Setting("kube-scheduler", SCHEDULER_PLUGIN, name, "configured",
                                                 place.origin(item), f"{via} pluginConfig"))
