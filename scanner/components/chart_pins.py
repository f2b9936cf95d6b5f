"""Where a tree pins chart versions, and what a chart version states: the facts of components.charts.

Every chart version the tree pins is kept, of a known component or not: a HelmRelease's chart,
an Argo CD source, a HelmChart, a Chart.yaml dependency, a kustomization's helmCharts (the pins in
objects are read by components.detect). A chart kept in the tree states its own constraint in
its Chart.yaml. A library chart (`type: library`) is kept too, marked: it deploys nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from yaml.nodes import MappingNode, SequenceNode

from scanner.components.library import known_library, library_charts_in_tree, library_type, vendored_library
from scanner.model import Origin
from scanner.nodes import mapping_get, scalar


@dataclass(frozen=True)
class ChartVersion:
    """One version of a chart, as an index or its Chart.yaml states it."""

    chart: str
    version: str
    kube_version: str | None  # the constraint as written; None: the chart states none
    source: str  # where it was read: an index URL, a file in helm's cache, a Chart.yaml in the tree
    released: str | None = None  # YYYY-MM, from the index's `created`
    library: bool = False  # its Chart.yaml says `type: library` (components.library): it deploys nothing


@dataclass(frozen=True)
class ChartPin:
    """Where the tree pins a chart version."""

    chart: str
    repository: str | None  # https://..., oci://...; "tree:<folder>" for a chart kept in the tree
    pin: str  # as written
    origin: Origin  # the line to edit
    what: str
    library: bool = False  # a library chart (components.library): no component of its own
    git: bool = False  # a chart in a Git repository at `repository`: no Helm repository, no index

    @property
    def key(self) -> tuple[str, str]:
        return (repository_key(self.repository), self.chart)


def repository_key(url: str | None) -> str:
    return (url or "").strip().rstrip("/")


def _origin(path: str, node: Any) -> Origin:
    return Origin(path, node.start_mark.line + 1, node.start_mark.column + 1)


def chart_pins_in_documents(documents: Iterable[tuple[str, Any]]
                            ) -> tuple[list[ChartPin], list[tuple[ChartPin, ChartVersion]]]:
    """Chart pins of Chart.yaml dependencies and kustomization helmCharts, and the charts kept in the
    tree that state a kubeVersion (each its own pin, at the kubeVersion line, with its one version)."""
    documents = list(documents)
    libraries = library_charts_in_tree(documents)
    pins: list[ChartPin] = []
    local: list[tuple[ChartPin, ChartVersion]] = []
    for path, node in documents:
        if not isinstance(node, MappingNode):
            continue
        name = os.path.basename(path)
        if name in ("Chart.yaml", "requirements.yaml", "requirements.yml"):
            pins.extend(_entries(node, "dependencies", "repository", path, f"{name} dependency", libraries))
        elif name.startswith("kustomization"):
            pins.extend(_entries(node, "helmCharts", "repo", path, "kustomization helmCharts", set()))
        if name == "Chart.yaml":
            found = _local_chart(node, path)
            if found is not None:
                local.append(found)
    return pins, local


def _entries(node: MappingNode, key: str, repo_key: str, path: str, what: str,
             libraries: set[tuple[str, str]]) -> Iterator[ChartPin]:
    items = mapping_get(node, key)
    for entry in items.value if isinstance(items, SequenceNode) else ():
        chart, version = scalar(mapping_get(entry, "name")), mapping_get(entry, "version")
        # No repository: the chart is in the tree (charts/, a kustomization's chartHome).
        repository = scalar(mapping_get(entry, repo_key)) or f"tree:{os.path.dirname(path)}"
        if chart and scalar(version):
            library = known_library(chart, repository) or vendored_library(path, chart, libraries)
            yield ChartPin(chart, repository, scalar(version), _origin(path, version), f"{what} {chart}", library)


def _local_chart(node: MappingNode, path: str) -> tuple[ChartPin, ChartVersion] | None:
    chart, version, constraint = (scalar(mapping_get(node, k)) for k in ("name", "version", "kubeVersion"))
    if not (chart and version and constraint) or library_type(scalar(mapping_get(node, "type"))):
        return None  # a library chart's kubeVersion judges nothing: helm installs no library chart
    where = _origin(path, mapping_get(node, "kubeVersion"))
    repository = f"tree:{os.path.dirname(path)}"
    return (ChartPin(chart, repository, version, where, f"chart {chart} {version} kept in the tree"),
            ChartVersion(chart, version, constraint, path))
