"""The cluster's own Kubernetes version as a tree pins it: upgrade orders (scanner.orders), version
variables (rules/cluster-version.yaml) and a saved `kubectl version -o json`. What reads the orders and
a Renovate comment is imported once a tree has some: a one-file run mostly has neither."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from yaml.nodes import MappingNode

from scanner import data
from scanner.components.pins import ClusterPin, origin_of
from scanner.model import Manifest, Origin
from scanner.nodes import mapping_get, scalar, value_at
from scanner.sources.cluster.talos import is_talconfig
from scanner.sources.files.walk import read_file
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents
from scanner.versions import parse_minor

if TYPE_CHECKING:
    from scanner.orders.read import UpgradeOrder


@functools.cache
def _cluster_version_rules() -> dict:
    return data.load("rules/cluster-version.yaml")


def version_pin(version: str, origin: Origin, what: str) -> ClusterPin | None:
    """A cluster pin of a version as written; None when it names no minor."""
    from scanner.orders.version import distro_of

    try:
        minor = parse_minor(version)
    except ValueError:
        return None
    return ClusterPin(version, minor, distro_of(version), origin, what)


def assigned_pins(assignments: Iterable[tuple[str, Origin, str]]) -> list[ClusterPin]:
    """The pins of versions as files assign them ((version, origin, what): a .tfvars assignment)."""
    return [pin for assignment in assignments if (pin := version_pin(*assignment)) is not None]


def cluster_pins_in_manifests(manifests: Sequence[Manifest],
                              orders: Sequence[UpgradeOrder] | None = None) -> Iterator[ClusterPin]:
    """The upgrade orders' answer (scanner.orders.read.cluster_pins): the one place it is inferred.
    `orders`: those of `manifests`, when they were read already."""
    if orders is not None and not orders:
        return  # nothing of scanner.orders is imported
    from scanner.orders.read import cluster_pins, read_orders

    for order in cluster_pins(read_orders(manifests) if orders is None else orders):
        field = ".".join(order.kind.version if order.version is not None else order.kind.channel or ())
        yield ClusterPin(order.version_text, order.minor, order.distro if order.distro != "kubernetes" else None,
                         order.origin, f"{order.what} {field}")


def cluster_variables(node: Any, path: str) -> Iterator[ClusterPin]:
    """Cluster version variables of a variables file (`k3s_version: v1.30.2+k3s1`, talconfig.yaml's
    `kubernetesVersion`, a Taskfile's `vars: {KUBERNETES_VERSION: ...}`; the names, the files some are read
    in, the keys some sit under and the Renovate comment some need: rules/cluster-version.yaml)."""
    rules = variable_rules(os.path.basename(path), node)
    lines: list[str] | None = None
    for rule in rules:
        for mapping in [mapping_get(node, k) for k in rule["under"]] if rule.get("under") else [node]:
            for key, value in getattr(mapping, "value", ()) if isinstance(mapping, MappingNode) else ():
                if scalar(key) != rule["name"] or not scalar(value):
                    continue
                if rule.get("tracked_by"):
                    from scanner.sources.cluster.version_lines import renovate_tracks

                    lines = _lines(path) if lines is None else lines
                    if not renovate_tracks(lines, key.start_mark.line, rule["tracked_by"]):
                        continue  # not kept current by the repository: a leftover, not the cluster's version
                pin = version_pin(scalar(value), origin_of(path, value), f"variable {key.value}")
                if pin:
                    yield pin


def variable_rules(file_name: str, node: Any = None) -> list[dict]:
    """The cluster version variables a file of this name (whose document is `node`) may hold, as the
    rules state them: those read in any file, those of its name, those of a file shaped as they say."""
    return [v for v in _cluster_version_rules()["variables"]
            if file_name in v.get("files", (file_name,))
            or (v.get("shape") == "talconfig" and node is not None and is_talconfig(node))]


def _lines(path: str) -> list[str]:
    text, problem = read_file(path)
    return [] if text is None or problem is not None else text.splitlines()




def cluster_pin_from_version_json(path: str) -> ClusterPin | None:
    """`kubectl version -o json` saved to a file: its serverVersion.gitVersion."""
    for node in _documents(path):
        version = value_at(node, "serverVersion", "gitVersion")
        if scalar(version):
            return version_pin(scalar(version), origin_of(path, version), "kubectl version serverVersion.gitVersion")
    return None


def _documents(path: str) -> list[Any]:
    """The trusted documents of a file; problems were reported by the manifest pass already."""
    text, problem = read_file(path)
    if problem is not None:
        return []
    try:
        return compose_documents(text, path)[0]
    except (DocumentProblem, TemplateSyntax):
        return []
