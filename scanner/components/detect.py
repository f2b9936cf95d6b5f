"""What a GitOps tree pins: component versions and the cluster's own Kubernetes version.

Pins are read from Flux HelmReleases (chart version or chartRef), Argo CD Applications and
ApplicationSets, Chart.yaml (and Helm 2 requirements.yaml) dependencies, vendored charts, remote
Kustomize resources, `<component>_version` variables, `app.kubernetes.io/*` labels and images. Each detection keeps the line
where a person edits the pin, read from the composed YAML nodes.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import data
from scanner.components.catalog import Catalog, Component, Release
from scanner.components.chart_pins import ChartPin
from scanner.components.semver import floats, parse_version
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest, Origin
from scanner.orders.read import cluster_pins, read_orders
from scanner.orders.version import distro_of
from scanner.sources.files import KUSTOMIZATION_FILES, read_file
from scanner.nodes import mapping_get, scalar
from scanner.sources.yamldoc import DocumentProblem, TemplateSyntax, compose_documents
from scanner.versions import Minor, parse_minor

# How much a kind of pin is trusted to say which release runs: the chart or manifest a tree
# installs from wins over a variable, which wins over labels and images (often sidecars).
PIN_RANK = {"chart": 0, "kustomize": 0, "variable": 1, "label": 2, "image": 3}

# Helm charts list their dependencies in Chart.yaml (Helm 3) or requirements.yaml (Helm 2).
_CHART_FILES = ("Chart.yaml", "requirements.yaml", "requirements.yml")
_REF_PARAM = re.compile(r"[?&](?:ref|version)=([^&#]+)")
_RELEASE_PATH = re.compile(r"/releases/download/([^/]+)/")
_VARIABLE = re.compile(r"^([A-Za-z0-9_-]+?)_version$")
_PART_OF = ("app.kubernetes.io/part-of", "app.kubernetes.io/name")
_VERSION_LABEL = "app.kubernetes.io/version"
# Objects whose `image` keys are no container's: a CRD's schema, RBAC, notes kept as data.
_NO_IMAGES = frozenset({"CustomResourceDefinition", "ConfigMap", "Secret", "Role", "ClusterRole", "RoleBinding",
                        "ClusterRoleBinding", "ServiceAccount", "Service", "Namespace", "NetworkPolicy"})


@dataclass(frozen=True)
class Detection:
    component: str
    pin: str  # as written: "1.16.5", ">=1.7.0 <1.8.0", "3.3.x"
    # The known releases the pin can install, oldest first; empty when none is known.
    releases: tuple[Release, ...]
    origin: Origin  # the line to edit
    source: str  # what kind of pin (a PIN_RANK key)
    what: str  # "HelmRelease flux-system/cilium (chart cilium)"

    @property
    def rank(self) -> int:
        return PIN_RANK[self.source]

    @property
    def floating(self) -> bool:
        return floats(self.pin)


@dataclass(frozen=True)
class ClusterPin:
    version: str
    minor: Minor
    distro: str | None
    origin: Origin
    what: str


def by_component(detections: Iterable[Detection]) -> dict[str, list[Detection]]:
    grouped: dict[str, list[Detection]] = {}
    for detection in detections:
        grouped.setdefault(detection.component, []).append(detection)
    return grouped


class ObjectPins:
    """Label and image pins taken from each object as it is read, while its node is held (a scan lets
    the nodes of plain files go early: sources/retention.py)."""

    def __init__(self, catalog: Catalog):
        self.finder = _Finder(catalog, ())

    def of(self, manifests: Sequence[Manifest], problems: list[Diagnostic]) -> list[Detection]:
        found: list[Detection] = []
        for manifest in manifests:
            try:
                found.extend(self.finder.object_pins(manifest))
            except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
                problems.append(unexpected(manifest.origin.path, err, manifest.origin.line, "read this object"))
        return found


def detect_in_manifests(manifests: Sequence[Manifest], catalog: Catalog, problems: list[Diagnostic] | None = None,
                        early: tuple[Sequence[Detection], int] = ((), 0),
                        charts: list[ChartPin] | None = None) -> list[Detection]:
    """Pins held by Kubernetes objects (the part a scan's checks can use). With `problems`, an object
    kubehop fails on (a bug) is an input problem there instead of an exception. `early`: the object
    pins of the first objects, taken as they were read (ObjectPins), and how many objects those are.
    `charts`, when given, receives every chart version pinned, of a known component or not
    (components.charts)."""
    finder = _Finder(catalog, manifests, charts)
    found: list[Detection] = list(early[0])
    done = early[1]
    for number, manifest in enumerate(manifests):
        try:
            found.extend(finder.deployed_charts(manifest) if number < done else finder.in_manifest(manifest))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None:
                raise
            problems.append(unexpected(manifest.origin.path, err, manifest.origin.line, "read this object"))
    # A label that names no known release is some other version (a sub-chart's, a controller of its
    # own numbering): it says nothing about the component's release, unless the component's installer
    # stamps its own release on every object (Flux: `flux install` labels them all with the Flux
    # version). An image listed for a component carries the component's own version, so its tag stands
    # even when the data lists no such release (an old controller pinned only by its image is planned
    # from that version). Either stands unless the same file names a known release of the component
    # (then the odd version is a sidecar's).
    known = {(d.component, d.origin.path) for d in found if d.releases}
    stamped = {c.name for c in catalog.components.values() if c.release_label}
    return unique(d for d in found if d.releases or d.source not in ("label", "image") or (
        (d.source == "image" or d.component in stamped) and (d.component, d.origin.path) not in known))


def unique(detections: Iterable[Detection]) -> list[Detection]:
    """One detection per component, pin and file: a chart's 20 objects with one label are one pin."""
    seen: dict[tuple[str, str, str, str], Detection] = {}
    for d in sorted(detections, key=lambda d: (d.origin.path, d.origin.line, d.origin.column)):
        seen.setdefault((d.component, d.pin, d.origin.path, d.source), d)
    return sorted(seen.values(), key=lambda d: (d.component, d.rank, d.origin.path, d.origin.line))


def _origin(path: str, node: Any) -> Origin:
    return Origin(path, node.start_mark.line + 1, node.start_mark.column + 1)


def _located(manifest: Manifest, node: Any) -> Origin:
    """A node of an object, at its line in the file the object came from (a render's line map)."""
    found = manifest.origin_at(node)
    return Origin(found.path, found.line, found.column)


def _at(node: Any, *keys: str) -> Any:
    for key in keys:
        node = mapping_get(node, key)
    return node


def _items(node: Any) -> list[Any]:
    return list(node.value) if isinstance(node, SequenceNode) else []


class _Finder:
    """Detections in Kubernetes objects; knows the tree's objects to follow a chartRef."""

    def __init__(self, catalog: Catalog, manifests: Sequence[Manifest], charts: list[ChartPin] | None = None):
        self.catalog = catalog
        self.charts = charts
        self.objects = {(m.kind, m.namespace, m.name): m for m in manifests}
        self.by_image: dict[str, Component] = {}
        for component in catalog.components.values():
            for image in component.images:
                self.by_image.setdefault(normalize_image(image), component)

    def in_manifest(self, manifest: Manifest) -> Iterator[Detection]:
        yield from self.deployed_charts(manifest)
        yield from self.object_pins(manifest)

    def deployed_charts(self, manifest: Manifest) -> Iterator[Detection]:
        """Charts a HelmRelease, an Argo CD Application or a k3s HelmChart deploys (may follow its sources)."""
        group = manifest.group
        if manifest.kind == "HelmRelease" and group == "helm.toolkit.fluxcd.io":
            yield from self._helm_release(manifest)
        elif manifest.kind in ("Application", "ApplicationSet") and group == "argoproj.io":
            yield from self._argo(manifest)
        elif manifest.kind == "HelmChart" and group == "helm.cattle.io":
            yield from self._k3s_helm_chart(manifest)

    def object_pins(self, manifest: Manifest) -> Iterator[Detection]:
        """Version labels and image tags: the object's own tree, nothing else."""
        yield from self._labels(manifest)
        yield from self._images(manifest)

    def _helm_release(self, manifest: Manifest) -> Iterator[Detection]:
        spec = _at(manifest.node, "spec")
        what = manifest.object_ref
        chart_spec = _at(spec, "chart", "spec")
        if chart_spec is not None:
            chart = scalar(_at(chart_spec, "chart"))
            repo = self._repository_url(_at(chart_spec, "sourceRef"), manifest.namespace)
            yield from self._chart_pin(chart, repo, _at(chart_spec, "version"), _at(chart_spec, "chart"),
                                       manifest.origin.path, f"{what} (chart {chart})")
            return
        ref = _at(spec, "chartRef")
        target = self.objects.get((scalar(_at(ref, "kind")), scalar(_at(ref, "namespace")) or manifest.namespace,
                                   scalar(_at(ref, "name"))))
        if target is not None:
            yield from self._chart_ref(target, what)

    def _chart_ref(self, target: Manifest, what: str) -> Iterator[Detection]:
        spec = _at(target.node, "spec")
        via = f"{what} via {target.object_ref}"
        if target.kind == "OCIRepository":
            url = scalar(_at(spec, "url")) or ""
            chart = url.rstrip("/").rpartition("/")[2]
            version = _at(spec, "ref", "tag") or _at(spec, "ref", "semver")
            yield from self._chart_pin(chart, url.rpartition("/")[0], version, _at(spec, "url"),
                                       target.origin.path, f"{via} (chart {chart})")
        elif target.kind == "HelmChart":
            chart = scalar(_at(spec, "chart"))
            repo = self._repository_url(_at(spec, "sourceRef"), target.namespace)
            yield from self._chart_pin(chart, repo, _at(spec, "version"), _at(spec, "chart"),
                                       target.origin.path, f"{via} (chart {chart})")

    def _repository_url(self, source_ref: Any, namespace: str | None) -> str | None:
        kind, name = scalar(_at(source_ref, "kind")), scalar(_at(source_ref, "name"))
        source = self.objects.get((kind, scalar(_at(source_ref, "namespace")) or namespace, name))
        return scalar(_at(source.node, "spec", "url")) if source is not None else None

    def _argo(self, manifest: Manifest) -> Iterator[Detection]:
        spec = _at(manifest.node, "spec")
        if manifest.kind == "ApplicationSet":
            spec = _at(spec, "template", "spec")
        sources = [_at(spec, "source"), *_items(_at(spec, "sources"))]
        for source in sources:
            chart = scalar(_at(source, "chart"))
            if chart:
                yield from self._chart_pin(chart, scalar(_at(source, "repoURL")), _at(source, "targetRevision"),
                                           _at(source, "chart"), manifest.origin.path,
                                           f"{manifest.object_ref} (chart {chart})")

    def _k3s_helm_chart(self, manifest: Manifest) -> Iterator[Detection]:
        """The Helm controller K3s and RKE2 bundle: spec.chart, spec.version, spec.repo."""
        spec = _at(manifest.node, "spec")
        chart = scalar(_at(spec, "chart"))
        yield from self._chart_pin(chart, scalar(_at(spec, "repo")), _at(spec, "version"), _at(spec, "chart"),
                                   manifest.origin.path, f"{manifest.object_ref} (chart {chart})")

    def _chart_pin(self, chart: str | None, repo: str | None, version_node: Any, fallback_node: Any,
                   path: str, what: str) -> Iterator[Detection]:
        pin = scalar(version_node) or "*"  # no version: the newest chart, whichever it is
        node = version_node if version_node is not None else fallback_node
        if self.charts is not None and chart and node is not None:
            self.charts.append(ChartPin(chart, repo, pin, _origin(path, node), what))
        component = component_for_chart(self.catalog, chart, repo)
        if component is not None:
            yield _detection(component, pin, True, _origin(path, node), "chart", what)

    def _labels(self, manifest: Manifest) -> Iterator[Detection]:
        labels = _at(manifest.node, "metadata", "labels")
        version = mapping_get(labels, _VERSION_LABEL)
        if scalar(version) is None:
            return
        for key in _PART_OF:
            component = self.catalog.components.get(scalar(mapping_get(labels, key)) or "")
            if component is not None:
                yield _detection(component, scalar(version), False, _located(manifest, version),
                                 "label", f"label {key}={component.name} on {manifest.object_ref}")
                return

    def _images(self, manifest: Manifest) -> Iterator[Detection]:
        if manifest.kind in _NO_IMAGES:
            return
        for node in _image_nodes(manifest.node):
            name, _, tag = split_image(node.value)
            component = self._component_for_image(name)
            if component is not None and tag and parse_version(tag) is not None:
                yield _detection(component, tag, False, _located(manifest, node), "image",
                                 f"image {name} in {manifest.object_ref}")

    def _component_for_image(self, name: str) -> Component | None:
        return self.by_image.get(normalize_image(name))


def _detection(component: Component, pin: str, chart_version: bool, origin: Origin, source: str,
               what: str) -> Detection:
    releases = component.releases_admitted(pin, chart_version)
    return Detection(component.name, pin, releases or (), origin, source, what)


def component_for_chart(catalog: Catalog, chart: str | None, repo: str | None) -> Component | None:
    """The component a chart installs; the repository decides when two share a chart name."""
    if not chart:
        return None
    candidates = [c for c in catalog.components.values() if c.has_chart(chart)]
    if len(candidates) > 1 and repo:
        wanted = repo.rstrip("/")
        by_repo = [c for c in candidates
                   if any(r.rstrip("/") == wanted for chart_ in c.charts if chart_.name == chart
                          for r in chart_.repositories)]
        candidates = by_repo or candidates
    return candidates[0] if len(candidates) == 1 else None


def _image_nodes(root: Any) -> Iterator[ScalarNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not isinstance(value, ScalarNode):
                    stack.append(value)
                elif key.value == "image" and isinstance(key, ScalarNode) and scalar(value):
                    yield value
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)


def split_image(reference: str) -> tuple[str, str | None, str | None]:
    """'quay.io/cilium/cilium:v1.16.5@sha256:...' -> (name, digest, tag)."""
    reference, _, digest = reference.partition("@")
    name, tag = reference, None
    slash = reference.rfind("/")
    colon = reference.rfind(":")
    if colon > slash:
        name, tag = reference[:colon], reference[colon + 1:]
    return name, digest or None, tag


def normalize_image(name: str) -> str:
    """Docker Hub names are written with or without their registry."""
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.removeprefix("library/")


# --- files that hold no Kubernetes object ---------------------------------------------------------

def detect_in_documents(documents: Iterable[tuple[str, Any]], catalog: Catalog,
                        problems: list[Diagnostic] | None = None) -> tuple[list[Detection], list[ClusterPin]]:
    """Pins held by documents that are not objects: Chart.yaml, kustomizations, `*_version` variables.

    `documents` are (path, root node) pairs, as the sources keep them (ScanInput.documents). With
    `problems`, a document kubehop fails on (a bug) is an input problem there instead of an exception."""
    detections: list[Detection] = []
    cluster: list[ClusterPin] = []
    for path, node in documents:
        if not isinstance(node, MappingNode):
            continue
        name = os.path.basename(path)
        try:
            detections.extend(_pins_in_document(node, name, path, catalog))
            if name not in _CHART_FILES + KUSTOMIZATION_FILES and scalar(mapping_get(node, "kind")) is None:
                cluster.extend(_cluster_variables(node, path))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None:
                raise
            problems.append(unexpected(path, err, node.start_mark.line + 1))
    return detections, cluster


def _pins_in_document(node: MappingNode, name: str, path: str, catalog: Catalog) -> Iterator[Detection]:
    if name == "Chart.yaml":
        yield from _vendored_chart(node, path, catalog)
    if name in _CHART_FILES:
        yield from _chart_entries(_items(mapping_get(node, "dependencies")), "repository", path, catalog,
                                  f"{name} dependency")
    elif name in KUSTOMIZATION_FILES:
        yield from _kustomize_remotes(node, path, catalog)
        yield from _chart_entries(_items(mapping_get(node, "helmCharts")), "repo", path, catalog,
                                  "kustomization helmCharts")
    elif scalar(mapping_get(node, "kind")) is None:
        yield from _version_variables(node, path, catalog)


def _documents(path: str) -> list[Any]:
    """The trusted documents of a file; problems were reported by the manifest pass already."""
    text, problem = read_file(path)
    if problem is not None:
        return []
    try:
        return compose_documents(text, path)[0]
    except (DocumentProblem, TemplateSyntax):
        return []


def _chart_entries(entries: list[Any], repo_key: str, path: str, catalog: Catalog,
                   what: str) -> Iterator[Detection]:
    """Chart lists with name, version and repository: Chart.yaml dependencies, kustomize helmCharts."""
    for entry in entries:
        chart = scalar(mapping_get(entry, "name"))
        component = component_for_chart(catalog, chart, scalar(mapping_get(entry, repo_key)))
        version = mapping_get(entry, "version")
        if component is not None:
            yield _detection(component, scalar(version) or "*", True,
                             _origin(path, version if version is not None else entry), "chart", f"{what} {chart}")


def _vendored_chart(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    """A copy of a component's own chart kept in the tree: its Chart.yaml name and version."""
    chart, version = scalar(mapping_get(node, "name")), mapping_get(node, "version")
    if any(scalar(mapping_get(d, "name")) == chart for d in _items(mapping_get(node, "dependencies"))):
        return  # a wrapper around the component's own chart (a dependency of the same name): that pin counts
    component = component_for_chart(catalog, chart, None)
    if component is not None and scalar(version):
        yield _detection(component, scalar(version), True, _origin(path, version), "chart", f"vendored chart {chart}")


def _kustomize_remotes(node: Any, path: str, catalog: Catalog) -> Iterator[Detection]:
    for key in ("resources", "bases", "components"):
        for item in _items(mapping_get(node, key)):
            url = scalar(item) or ""
            component = next((c for c in catalog.components.values()
                              if any(fragment in url for fragment in c.kustomize_urls)), None)
            version = remote_version(url)
            if component is not None and version:
                yield _detection(component, version, False, _origin(path, item), "kustomize",
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
            yield _detection(component, version, False, _origin(path, value), "variable",
                             f"variable {key.value}")


# --- the cluster's own version ---------------------------------------------------------------------

@functools.cache
def _cluster_version_rules() -> dict:
    return data.load("rules/cluster-version.yaml")


def _cluster_pin(version: str, origin: Origin, what: str) -> ClusterPin | None:
    try:
        minor = parse_minor(version)
    except ValueError:
        return None
    return ClusterPin(version, minor, distro_of(version), origin, what)


def cluster_pins_in_manifests(manifests: Sequence[Manifest]) -> Iterator[ClusterPin]:
    """The upgrade orders' answer (scanner.orders.read.cluster_pins): the one place it is inferred."""
    for order in cluster_pins(read_orders(manifests)):
        field = ".".join(order.kind.version if order.version is not None else order.kind.channel or ())
        yield ClusterPin(order.version_text, order.minor, order.distro if order.distro != "kubernetes" else None,
                         order.origin, f"{order.what} {field}")


def _cluster_variables(node: Any, path: str) -> Iterator[ClusterPin]:
    names = {v["name"] for v in _cluster_version_rules()["variables"]}
    for key, value in node.value:
        if scalar(key) in names and scalar(value):
            pin = _cluster_pin(scalar(value), _origin(path, value), f"variable {key.value}")
            if pin:
                yield pin


def cluster_pin_from_version_json(path: str) -> ClusterPin | None:
    """`kubectl version -o json` saved to a file: its serverVersion.gitVersion."""
    for node in _documents(path):
        version = _at(node, "serverVersion", "gitVersion")
        if scalar(version):
            return _cluster_pin(scalar(version), _origin(path, version), "kubectl version serverVersion.gitVersion")
    return None

