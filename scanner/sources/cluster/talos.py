"""Talos machine configuration as the tree holds it: whole machine configs and strategic-merge
patches (`machine:` / `cluster:` documents), RFC 6902 patch lists (`- op: add, path:
/machine/kubelet/extraArgs`), and talhelper's talconfig.yaml, whose `patches` hold either, inline or
as YAML strings (read with their own line numbers, shifted to the file's).

What each path gives which component is data (rules/cluster-config/config-sources.yaml, `talos`).
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.cluster_config import CONFIG_FIELD, MANIFEST_URL
from scanner.model import Diagnostic
from scanner.nodes import mapping_get, scalar, sequence_items, value_at
from scanner.cluster_config import Setting
from scanner.sources.cluster.reading import Place, Reading, sources

_TALCONFIG_KEYS = ("clusterName", "talosVersion", "kubernetesVersion")
_PATCH_OPS = ("add", "replace")


def is_talconfig(root: Any) -> bool:
    """talhelper's configuration, whatever the file's name (talhelper reads any file given with -c): a
    `nodes` list beside clusterName, talosVersion or kubernetesVersion."""
    return isinstance(root, MappingNode) and isinstance(mapping_get(root, "nodes"), SequenceNode) \
        and any(mapping_get(root, key) is not None for key in _TALCONFIG_KEYS)


def read_talos(reading: Reading, root: Any, place: Place, text: str) -> bool:
    """Read `root` if it is Talos configuration; whether it was."""
    if is_talconfig(root):
        _talconfig(reading, root, place, text)
        return True
    if _is_json_patch(root):
        _json_patch(reading, root, place, "Talos patch")
        return True
    return machine_config(reading, root, place, "Talos machine config")


def machine_config(reading: Reading, root: Any, place: Place, via: str) -> bool:
    """The Talos paths of a machine config or strategic-merge patch; whether it held any."""
    if not isinstance(root, MappingNode) or (mapping_get(root, "machine") is None
                                             and mapping_get(root, "cluster") is None):
        return False
    found, held = sources(), False
    for path, component in found.talos_extra_args.items():
        node = value_at(root, *path)
        if scalar(mapping_get(value_at(root, *path[:-1]), found.talos_disabled)) == "true":
            continue  # Talos does not run it
        if node is not None:
            held = True
            reading.extra_args(component, node, place, f"{via} {'.'.join(path)}")
    held = _extra_manifests(reading, value_at(root, *found.talos_extra_manifests), place, via) or held
    held = _kubelet_config(reading, value_at(root, *found.talos_kubelet_config), place, via) or held
    held = _scheduler_config(reading, value_at(root, *found.talos_scheduler_config), place, via) or held
    return _proxy_mode(reading, value_at(root, *found.talos_proxy_mode), place, via) or held


def _kubelet_config(reading: Reading, node: Any, place: Place, via: str) -> bool:
    if not isinstance(node, MappingNode):
        return False
    found = sources()
    reading.gate_map("kubelet", mapping_get(node, found.gates_field), place,
                     f"{via} {'.'.join(found.talos_kubelet_config)}.{found.gates_field}")
    return True


def _scheduler_config(reading: Reading, node: Any, place: Place, via: str) -> bool:
    if not isinstance(node, MappingNode):
        return False
    reading.component_config(node, place, f"{via} {'.'.join(sources().talos_scheduler_config)}")
    return True


def _proxy_mode(reading: Reading, node: Any, place: Place, via: str) -> bool:
    mode = scalar(node)
    if not mode:
        return False
    reading.settings.append(Setting("kube-proxy", CONFIG_FIELD, sources().proxy_mode_field, mode, place.origin(node),
                                    f"{via} {'.'.join(sources().talos_proxy_mode)}"))
    return True


def _is_json_patch(root: Any) -> bool:
    items = sequence_items(root)
    return bool(items) and all(isinstance(item, MappingNode) and scalar(mapping_get(item, "op"))
                               and (scalar(mapping_get(item, "path")) or "").startswith(("/machine", "/cluster"))
                               for item in items)


def _json_patch(reading: Reading, root: Any, place: Place, via: str) -> None:
    """RFC 6902 operations: each `add`/`replace` at (or inside) a path kubehop reads is read as if
    its value sat there in a machine config."""
    found = sources()
    targets = {**{path: ("args", component) for path, component in found.talos_extra_args.items()},
               found.talos_kubelet_config: ("kubelet", ""), found.talos_scheduler_config: ("scheduler", ""),
               found.talos_proxy_mode: ("mode", "")}
    for item in sequence_items(root):
        if scalar(mapping_get(item, "op")) not in _PATCH_OPS:
            continue
        steps = tuple(_unescape(s) for s in (scalar(mapping_get(item, "path")) or "").strip("/").split("/"))
        value = mapping_get(item, "value")
        for path, (what, component) in targets.items():
            if steps[:len(path)] != path:
                continue
            inner, where = steps[len(path):], f"{via} {'/'.join(('', *steps))}"
            if what == "args":
                if not inner:
                    reading.extra_args(component, value, place, where)
                elif len(inner) == 1:
                    reading.flag_value(component, inner[0], scalar(value) or "", place.origin(item), where)
            elif what == "kubelet":
                if not inner:
                    _kubelet_config(reading, value, place, where)
                elif inner == (found.gates_field,):
                    reading.gate_map("kubelet", value, place, where)
            elif what == "scheduler" and not inner:
                _scheduler_config(reading, value, place, where)
            elif what == "mode" and not inner:
                _proxy_mode(reading, value, place, where)


def _extra_manifests(reading: Reading, node: Any, place: Place, via: str) -> bool:
    """The URLs Talos applies (cluster.extraManifests): each a component pin where it is a release URL."""
    urls = [(url, item) for item in sequence_items(node) if (url := scalar(item))]
    for url, item in urls:
        reading.settings.append(Setting("talos", MANIFEST_URL, url, url, place.origin(item),
                                        f"{via} {'.'.join(sources().talos_extra_manifests)}"))
    return bool(urls)


def _unescape(step: str) -> str:
    return step.replace("~1", "/").replace("~0", "~")


def _talconfig(reading: Reading, root: Any, place: Place, text: str) -> None:
    """talconfig.yaml: the patch fields at the top, in controlPlane and worker, and in each node."""
    holders = [("", root)]
    for group in ("controlPlane", "worker"):
        holders.append((f"{group}.", mapping_get(root, group)))
    holders += [(f"nodes[{i}].", node) for i, node in enumerate(sequence_items(mapping_get(root, "nodes")))]
    for prefix, holder in holders:
        for field in sources().talhelper_patches:
            value = mapping_get(holder, field)
            for i, patch in enumerate(sequence_items(value) if isinstance(value, SequenceNode) else [value]):
                if patch is not None:
                    _patch(reading, patch, place, text, f"talconfig {prefix}{field}" + (
                        f"[{i}]" if isinstance(value, SequenceNode) else ""))


def _patch(reading: Reading, patch: Any, place: Place, text: str, via: str) -> None:
    if isinstance(patch, MappingNode):
        machine_config(reading, patch, place, via)
    elif _is_json_patch(patch):
        _json_patch(reading, patch, place, via)
    elif isinstance(patch, ScalarNode) and patch.value.strip() and not patch.value.lstrip().startswith("@"):
        _embedded(reading, patch, place, text, via)


def _embedded(reading: Reading, node: ScalarNode, place: Place, text: str, via: str) -> None:
    """A patch written as a YAML string (`- |-` then the patch): composed on its own, its lines
    shifted to the file's when it is a literal block (elsewhere every node points at the string)."""
    from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

    inner = place
    if node.style == "|" and place.at is None:
        first = node.start_mark.line + 1  # the block starts on the line after its indicator
        lines = text.splitlines()
        body = next((line for line in lines[first:first + 50] if line.strip()), "")
        inner = Place(place.path, place.line_offset + first, place.column_offset + len(body) - len(body.lstrip()))
    elif place.at is None:
        inner = Place(place.path, at=place.origin(node))
    try:
        documents, problems = compose_documents(node.value, place.path)
    except (DocumentProblem, TemplateSyntax) as problem:
        reading.problem(place.origin(node), f"{via}: the patch cannot be read ({problem or 'template syntax'})",
                        level="error")
        return
    for problem in problems:
        line = (problem.line or 1) + inner.line_offset if inner.at is None else place.origin(node).line
        reading.problems.append(Diagnostic(place.path, f"{via}: the patch does not parse: {problem.message}", line))
    for document in documents:
        _patch(reading, document, inner, text, via)
