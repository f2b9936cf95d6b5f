"""Component pins in files that hold no Kubernetes object: Chart.yaml (and Helm 2 requirements.yaml)
dependencies, vendored charts, remote Kustomize resources and helmCharts, `<component>_version`
variables. Each detection keeps the line where a person edits the pin.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Iterator, Sequence

from yaml.nodes import MappingNode

from scanner.components.catalog import Catalog, placeholder
from scanner.components.clients import client_stem, host_binary_only
from scanner.components.cluster_pin import cluster_variables
from scanner.components.pins import ClusterPin, Detection, component_for_chart, detection, origin_of
from scanner.semver import parse_version
from scanner.components.unlisted import known_url, remote_ref
from scanner.components.values import kustomize_values
from scanner.guard import unexpected
from scanner.model import Diagnostic, Origin
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.sources.files.walk import KUSTOMIZATION_FILES

# Helm charts list their dependencies in Chart.yaml (Helm 3) or requirements.yaml (Helm 2).
_CHART_FILES = ("Chart.yaml", "requirements.yaml", "requirements.yml")
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
            if _holds_variables(name, node):
                cluster.extend(cluster_variables(node, path))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None:
                raise
            problems.append(unexpected(path, err, node.start_mark.line + 1))
    return detections, cluster


def cluster_variables_in(documents: Iterable[tuple[str, Any]]) -> list[ClusterPin]:
    """The cluster version variables among `documents`, without the component pins detect_in_documents
    reads beside them: what says the cluster's minor before anything renders (scanner.analysis). A
    document kubehop fails on gives none here; detect_in_documents says what failed."""
    cluster: list[ClusterPin] = []
    for path, node in documents:
        if isinstance(node, MappingNode) and _holds_variables(os.path.basename(path), node):
            try:
                cluster.extend(cluster_variables(node, path))
            except Exception:  # noqa: BLE001 - said once, where the pins are read
                continue
    return cluster


def _holds_variables(name: str, node: MappingNode) -> bool:
    """A document that may set cluster version variables: no object, chart list or kustomization."""
    return name not in _CHART_FILES + KUSTOMIZATION_FILES and scalar(mapping_get(node, "kind")) is None


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
    """Chart lists with name, version and repository: Chart.yaml dependencies, kustomize helmCharts.
    A `file://` dependency is a chart of the tree's own, whatever its name (mmalyska/home-ops keeps a
    `volsync` chart of VolSync custom resources): the component it is a copy of, if any, is read from
    that chart's own Chart.yaml (appVersion), as unlisted.unlisted_charts leaves it out too."""
    for entry in entries:
        chart, repository = scalar(mapping_get(entry, "name")), scalar(mapping_get(entry, repo_key))
        if (repository or "").startswith("file://"):
            continue
        component = component_for_chart(catalog, chart, repository)
        version = mapping_get(entry, "version")
        if component is not None:
            # A kustomization gives its chart values; a Chart.yaml dependency gets its umbrella's, not read here.
            values = kustomize_values(entry, path, scanned) if repo_key == "repo" else None
            yield detection(component, scalar(version) or "*", True,
                             origin_of(path, version if version is not None else entry), "chart", f"{what} {chart}",
                             values)


def _vendored_chart(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """A copy of a component's own chart kept in the tree: the release is its Chart.yaml `appVersion`.
    The chart's own `version` is not (a wrapper or a local chart versions itself: 0.0.0, 0.1.0)."""
    chart, app = scalar(mapping_get(node, "name")), mapping_get(node, "appVersion")
    if any(scalar(mapping_get(d, "name")) == chart for d in sequence_items(mapping_get(node, "dependencies"))):
        return  # a wrapper around the component's own chart (a dependency of the same name): that pin counts
    component = component_for_chart(catalog, chart, None)
    version = scalar(app)
    if component is not None and version and parse_version(version) is not None and not placeholder(version):
        yield detection(component, version, False, origin_of(path, app), "vendored",
                         f"vendored chart {chart} (appVersion)")


def _kustomize_remotes(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    for key in ("resources", "bases", "components"):
        for item in sequence_items(mapping_get(node, key)):
            url = scalar(item) or ""
            component = known_url(url, catalog) if url else None
            version = remote_version(url)
            if component is not None and version:
                yield detection(component, version, False, origin_of(path, item), "kustomize",
                                 f"remote resource {url}")


def remote_version(url: str) -> str | None:
    """The release a remote Kustomize resource names: ?ref=v8.2.0, /releases/download/v1.9.0/, or the
    tag of a raw.githubusercontent.com path."""
    ref = remote_ref(url)
    return ref if ref is not None and parse_version(ref) is not None else None


def _version_variables(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """`gateway_api_version: v1.2.1` in Ansible defaults or values files, and the release URLs such a
    file lists (`gateway_api_crd_urls: [.../releases/download/v1.2.1/standard-install.yaml]`); a client's
    version (a `*_cli_version`, a role's variable its tasks use only to fetch a binary for the host) is none."""
    for key, value in node.value:
        yield from _release_urls(key, value, path, catalog)
        m = _VARIABLE.match(scalar(key) or "")
        version = scalar(value)
        if not m or version is None or parse_version(version) is None or client_stem(m.group(1)):
            continue
        stem = m.group(1).replace("_", "-").lower()
        component = catalog.components.get(stem) or component_for_chart(catalog, stem, None) or \
            _named_first(stem, catalog)
        if component is not None and not host_binary_only(key.value, path):
            yield detection(component, version, False, origin_of(path, value), "variable",
                             f"variable {key.value}")


def _named_first(stem: str, catalog: Catalog):
    """`cilium_bootstrap_chart_version`: a variable named after a component first, for a version of it
    (a chart version only where the chart is numbered as the component is)."""
    names = [n for n in catalog.components if stem.startswith(n + "-")]
    component = catalog.components[max(names, key=len)] if names else None
    if component is not None and "chart" in stem.split("-") and component.chart_lines is not None:
        return None
    return component


def manifest_url_pins(urls: Iterable[tuple[str, Origin]], catalog: Catalog,
                      what: str = "Talos extraManifests URL") -> Iterator[Detection]:
    """The components whose release URLs Talos is given to apply (a machine-configuration template's
    cluster.extraManifests): each URL's version is a pin, as a kustomization's remote resource is."""
    for url, origin in urls:
        found = _url_pin(url, origin, catalog, f"{what} {url}")
        if found is not None:
            yield found


def _release_urls(key: Any, value: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """A variable holding a component's release URL (or a list of them): each URL's version is a pin."""
    for item in [value] if scalar(value) is not None else sequence_items(value):
        found = _url_pin(scalar(item) or "", origin_of(path, item), catalog, f"URL in variable {scalar(key)}")
        if found is not None:
            yield found


def _url_pin(url: str, origin: Origin, catalog: Catalog, what: str) -> Detection | None:
    """The pin a release URL of a component's repository makes (…/releases/download/v1.2.1/…, the tag of a
    raw.githubusercontent.com file), or None."""
    version = remote_version(url) if "://" in url else None
    component = known_url(url, catalog) if version else None
    return detection(component, version, False, origin, "url", what) if component is not None else None
