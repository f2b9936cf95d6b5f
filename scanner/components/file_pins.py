"""Component pins in files that hold no Kubernetes object: Chart.yaml (and Helm 2 requirements.yaml)
dependencies, vendored charts, remote Kustomize resources and helmCharts, `<component>_version`
variables. Each detection keeps the line where a person edits the pin.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Iterator, Sequence

from yaml.nodes import MappingNode

from scanner.components.catalog import Catalog
from scanner.components.cluster_pin import cluster_variables
from scanner.components.pins import ClusterPin, Detection, component_for_chart, detection, origin_of
from scanner.semver import parse_version
from scanner.components.values import kustomize_values
from scanner.guard import unexpected
from scanner.model import Diagnostic
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.sources.files.walk import KUSTOMIZATION_FILES

# Helm charts list their dependencies in Chart.yaml (Helm 3) or requirements.yaml (Helm 2).
_CHART_FILES = ("Chart.yaml", "requirements.yaml", "requirements.yml")
_REF_PARAM = re.compile(r"[?&](?:ref|version)=([^&#]+)")
_RELEASE_PATH = re.compile(r"/releases/download/([^/]+)/")
_VARIABLE = re.compile(r"^([A-Za-z0-9_-]+?)_version$")


def detect_in_documents(documents: Iterable[tuple[str, Any]], catalog: Catalog,
                        problems: list[Diagnostic] | None = None,
                        scanned: Sequence[str] = ()) -> tuple[list[Detection], list[ClusterPin]]:
    """Pins held by documents that are not objects: Chart.yaml, kustomizations, `*_version` variables.

    `documents` are (path, root node) pairs, as the sources keep them (ScanInput.documents). With
    `problems`, a document kubehop fails on (a bug) is an input problem there instead of an exception.
    `scanned`: the paths scanned, where the values files a kustomization names may be read from."""
    detections: list[Detection] = []
    cluster: list[ClusterPin] = []
    for path, node in documents:
        if not isinstance(node, MappingNode):
            continue
        name = os.path.basename(path)
        try:
            detections.extend(_pins_in_document(node, name, path, catalog, scanned))
            if name not in _CHART_FILES + KUSTOMIZATION_FILES and scalar(mapping_get(node, "kind")) is None:
                cluster.extend(cluster_variables(node, path))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None:
                raise
            problems.append(unexpected(path, err, node.start_mark.line + 1))
    return detections, cluster


def _pins_in_document(node: MappingNode, name: str, path: str, catalog: Catalog,
                      scanned: Sequence[str]) -> Iterator[Detection]:
    if name == "Chart.yaml":
        yield from _vendored_chart(node, path, catalog)
    if name in _CHART_FILES:
        yield from _chart_entries(sequence_items(mapping_get(node, "dependencies")), "repository", path, catalog,
                                  f"{name} dependency", scanned)
    elif name in KUSTOMIZATION_FILES:
        yield from _kustomize_remotes(node, path, catalog)
        yield from _chart_entries(sequence_items(mapping_get(node, "helmCharts")), "repo", path, catalog,
                                  "kustomization helmCharts", scanned)
    elif scalar(mapping_get(node, "kind")) is None:
        yield from _version_variables(node, path, catalog)


def _chart_entries(entries: list[Any], repo_key: str, path: str, catalog: Catalog,
                   what: str, scanned: Sequence[str]) -> Iterator[Detection]:
    """Chart lists with name, version and repository: Chart.yaml dependencies, kustomize helmCharts."""
    for entry in entries:
        chart = scalar(mapping_get(entry, "name"))
        component = component_for_chart(catalog, chart, scalar(mapping_get(entry, repo_key)))
        version = mapping_get(entry, "version")
        if component is not None:
            # A kustomization gives its chart values; a Chart.yaml dependency gets its umbrella's, not read here.
            values = kustomize_values(entry, path, scanned) if repo_key == "repo" else None
            yield detection(component, scalar(version) or "*", True,
                             origin_of(path, version if version is not None else entry), "chart", f"{what} {chart}",
                             values)


def _vendored_chart(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """A copy of a component's own chart kept in the tree: its Chart.yaml name and version."""
    chart, version = scalar(mapping_get(node, "name")), mapping_get(node, "version")
    if any(scalar(mapping_get(d, "name")) == chart for d in sequence_items(mapping_get(node, "dependencies"))):
        return  # a wrapper around the component's own chart (a dependency of the same name): that pin counts
    component = component_for_chart(catalog, chart, None)
    if component is not None and scalar(version):
        yield detection(component, scalar(version), True, origin_of(path, version), "chart", f"vendored chart {chart}")


def _kustomize_remotes(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    for key in ("resources", "bases", "components"):
        for item in sequence_items(mapping_get(node, key)):
            url = scalar(item) or ""
            component = next((c for c in catalog.components.values()
                              if any(fragment in url for fragment in c.kustomize_urls)), None)
            version = remote_version(url)
            if component is not None and version:
                yield detection(component, version, False, origin_of(path, item), "kustomize",
                                 f"remote resource {url}")


def remote_version(url: str) -> str | None:
    """The release a remote Kustomize resource names: ?ref=v8.2.0 or /releases/download/v1.9.0/."""
    for pattern in (_REF_PARAM, _RELEASE_PATH):
        m = pattern.search(url)
        if m and parse_version(m.group(1)) is not None:
            return m.group(1)
    return None


def _version_variables(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """`gateway_api_version: v1.2.1` in Ansible defaults or values files."""
    for key, value in node.value:
        m = _VARIABLE.match(scalar(key) or "")
        version = scalar(value)
        if not m or version is None or parse_version(version) is None:
            continue
        stem = m.group(1).replace("_", "-").lower()
        component = catalog.components.get(stem) or component_for_chart(catalog, stem, None)
        if component is not None:
            yield detection(component, version, False, origin_of(path, value), "variable",
                             f"variable {key.value}")
