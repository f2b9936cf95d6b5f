"""The cluster configuration a file of the tree holds: what it tells kube-apiserver, the kubelet and
the other components (scanner.cluster_config.Setting), at the line and column of each flag or field.

Read from the documents of a plain file as it is read (sources/files/source.py):
- K3s and RKE2 `config.yaml` (and config.yaml.d/) `*-arg` lists, the same keys in Ansible variables
  (`k3s_server: {kubelet-arg: ...}`), and `--kubelet-arg=...` CLI flags in any string value
  (`extra_server_args`, INSTALL_K3S_EXEC, k3d's `extraArgs`);
- kubeadm's ClusterConfiguration / InitConfiguration / JoinConfiguration `extraArgs`;
- KubeletConfiguration, KubeProxyConfiguration and KubeSchedulerConfiguration objects;
- Talos machine configs and talhelper's talconfig.yaml patches (sources/cluster/talos.py).
Which keys and paths mean what is data: rules/cluster-config/config-sources.yaml. A part kubehop
cannot read (a patch that does not parse, a gate list it cannot split) is a Diagnostic there.
"""

from __future__ import annotations

import shlex
from typing import Any, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.cluster_config import Setting
from scanner.model import Diagnostic
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.sources.cluster import talos
from scanner.sources.cluster.reading import Place, Reading, sources

_MAX_DEPTH = 12  # how deep a plain document is searched for `*-arg` keys and flags


def arg_lists(reading: Reading, root: Any, place: Place) -> None:
    """`*-arg` keys at any depth (a config.yaml, Ansible variables), and `--*-arg` CLI flags in any
    string value (extra args, INSTALL_K3S_EXEC, k3d's extraArgs)."""
    keys = sources().arg_keys
    for key, value, _ in _walk(root):
        component = keys.get(key.value) if key is not None else None
        if component is not None:
            _arg_values(reading, component, value, place, f"K3s/RKE2 {key.value}")
        elif isinstance(value, ScalarNode) and "-arg" in value.value and "--" in value.value:
            _cli_flags(reading, value, place)


def _arg_values(reading: Reading, component: str, node: Any, place: Place, via: str) -> None:
    items = sequence_items(node) if isinstance(node, SequenceNode) else [node]
    for item in items:
        text = scalar(item)
        if text:
            reading.flag(component, text, place.origin(item), via)


def _cli_flags(reading: Reading, node: ScalarNode, place: Place) -> None:
    keys = sources().arg_keys
    try:
        tokens = shlex.split(node.value, comments=False)
    except ValueError:
        tokens = node.value.split()
    for i, token in enumerate(tokens):
        name, eq, value = token.lstrip("-").partition("=")
        if not token.startswith("--") or name not in keys:
            continue
        if not eq and i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
            value = tokens[i + 1]  # `--kubelet-arg max-pods=200`
        if value:
            reading.flag(keys[name], value, place.origin(node), f"--{name}")


def _walk(root: Any) -> Iterator[tuple[ScalarNode | None, Any, int]]:
    """(key, value, depth) of every mapping entry and sequence item (key None) up to _MAX_DEPTH."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            continue
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    yield key, value, depth
                    if not isinstance(value, ScalarNode):
                        stack.append((value, depth + 1))
        elif isinstance(node, SequenceNode):
            for item in node.value:
                if isinstance(item, ScalarNode):
                    yield None, item, depth
                else:
                    stack.append((item, depth + 1))


def may_hold_config(text: str) -> bool:
    """Can a file of this text hold cluster configuration (it holds one of the data's markers)?"""
    return any(marker in text for marker in sources().markers)


def passed_over(root: Any) -> bool:
    """Is the document a Kubernetes object read_config reads nothing of, whatever the file's text (neither
    a component's configuration nor an object of a group whose args it reads)? Asked of each document
    before the file's text is searched for markers (may_hold_config): most of a tree's are such objects."""
    if not isinstance(root, MappingNode):
        return False
    kind_node = mapping_get(root, "kind")
    if kind_node is None:
        return False
    found = sources()
    api_version, kind = scalar(mapping_get(root, "apiVersion")), scalar(kind_node)
    group = (api_version or "").rpartition("/")[0]
    if api_version and kind and (group, kind) in found.component_configs:
        return False
    return group not in found.arg_object_groups


def read_config(path: str, text: str, documents: list[Any]) -> tuple[list[Setting], list[Diagnostic]]:
    """The cluster configuration settings of documents of a file whose text may_hold_config let
    through (asked once for a file read a document at a time), and what could not be read."""
    found = sources()
    reading, place = Reading(path), Place(path)
    for root in documents:
        if reading.component_config(root, place):
            continue
        if isinstance(root, MappingNode) and mapping_get(root, "kind") is not None:
            group = (scalar(mapping_get(root, "apiVersion")) or "").rpartition("/")[0]
            if group in found.arg_object_groups:
                arg_lists(reading, root, place)
            continue  # another Kubernetes object: its flags (a Pod's args) are not the cluster's
        if not talos.read_talos(reading, root, place, text):
            arg_lists(reading, root, place)
    return reading.settings, reading.problems
