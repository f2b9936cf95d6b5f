"""Component pins that Kubernetes objects hold (the files that hold none: `file_pins`).

Pins are read from Flux HelmReleases (chart version or chartRef; Flux v1's too), Argo CD Applications and
ApplicationSets, K3s HelmCharts, `app.kubernetes.io/*` labels and images. Each detection keeps the
line where a person edits the pin, read from the composed YAML nodes.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Sequence

from scanner.components.catalog import Catalog, Component
from scanner.components.chart_pins import ChartPin
from scanner.components.images import normalize_image, split_image
from scanner.components.installed_by import field_pins, installers, values_pins
from scanner.components.pins import Detection, component_for_chart, detection, origin_of, unique
from scanner.semver import parse_version
from scanner.components.unlisted import known_url, remote_name
from scanner.components.values import (ReleaseValues, argo_values, flux_v1_values, flux_values, generated_name,
                                       k3s_values)
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest, Origin
from scanner.nodes import image_values, mapping_get, scalar, value_at

_PART_OF = ("app.kubernetes.io/part-of", "app.kubernetes.io/name")
_VERSION_LABEL = "app.kubernetes.io/version"
# Workloads whose image may be an operator's, the name endings that say it is one, and Kubernetes' own images.
_WORKLOADS = frozenset({"Deployment", "DaemonSet", "StatefulSet"})
_OPERATOR_SUFFIXES = ("-operator", "-controller")
_KUBERNETES_IMAGES = ("registry.k8s.io/kube-", "k8s.gcr.io/kube-")
# A chart repository's release tag: <chart>-<version> (kube-prometheus-stack-62.7.0, velero-7.2.2).
_TAGGED_CHART = re.compile(r"^([A-Za-z][A-Za-z0-9.-]*?)-(v?\d+\.\d+\.\d+\S*)$")
# Objects whose `image` keys are no container's: a CRD's schema, RBAC, notes kept as data.
_NO_IMAGES = frozenset({"CustomResourceDefinition", "ConfigMap", "Secret", "Role", "ClusterRole", "RoleBinding",
                        "ClusterRoleBinding", "ServiceAccount", "Service", "Namespace", "NetworkPolicy"})


class ObjectPins:
    """Label and image pins taken from each object as it is read, while its node is held (a scan lets
    the nodes of plain files go early: sources/files/retention.py)."""

    def __init__(self, catalog: Catalog):
        self.finder = PinFinder(catalog, ())

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
                        charts: list[ChartPin] | None = None,
                        unlisted: list[Detection] | None = None) -> list[Detection]:
    """Pins held by Kubernetes objects (the part a scan's checks can use). With `problems`, an object
    kubehop fails on (a bug) is an input problem there instead of an exception. `early`: the object
    pins of the first objects, taken as they were read (ObjectPins), and how many objects those are.
    `charts`, when given, receives every chart version pinned, of a known component or not
    (components.charts); `unlisted`, the pins of remote sources and operator images no data file names
    (components.unlisted)."""
    finder = PinFinder(catalog, manifests, charts)
    found: list[Detection] = list(early[0])
    done = early[1]
    for number, manifest in enumerate(manifests):
        try:
            found.extend(finder.deployed_charts(manifest) if number < done else finder.in_manifest(manifest))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None:
                raise
            problems.append(unexpected(manifest.origin.path, err, manifest.origin.line, "read this object"))
    if problems is not None:
        problems.extend(finder.notices)
    # A label that names no known release is some other version (a sub-chart's, a controller of its
    # own numbering): it says nothing about the component's release, unless the component's installer
    # stamps its own release on every object (Flux: `flux install` labels them all with the Flux
    # version). An image listed for a component carries the component's own version, so its tag stands
    # even when the data lists no such release (an old controller pinned only by its image is planned
    # from that version). Either stands unless the same file names a known release of the component
    # (then the odd version is a sidecar's).
    # An operator image no data names is a component of its own, unless its file installs a known
    # component (Flux's controllers, each of its own version, in gotk-components.yaml).
    installs_known = {d.origin.path for d in found if d.component in catalog.components}
    if unlisted is not None:
        unlisted.extend(unique(d for d in found if d.component not in catalog.components
                               and not (d.source == "image" and d.origin.path in installs_known)))
    found = [d for d in found if d.component in catalog.components]
    known = {(d.component, d.origin.path) for d in found if d.releases}
    stamped = {c.name for c in catalog.components.values() if c.release_label}
    return unique(d for d in found if d.releases or d.source not in ("label", "image") or (
        (d.source == "image" or d.component in stamped) and (d.component, d.origin.path) not in known))


_VERSION_PATH = ("spec", "chart", "spec", "version")  # as sources/kustomize/overlays.py keys it


def _version_origin(manifest: Manifest, node: Any) -> Origin | None:
    """Where a built object's chart version is edited: the overlay patch that set it, else its line in
    the object's file (a built object's nodes are lines of the build's output). None: read from its file."""
    filled = manifest.filled_at(node)  # a Flux Kustomization's variable: where it is set (`via`: its use)
    if filled is not None:
        return filled
    patched = manifest.patched_at.get(_VERSION_PATH)
    if patched is not None:
        return Origin(patched.path, patched.line, patched.column)
    if manifest.line_map is None or node is None:
        return None
    found = manifest.origin_at(node)
    return Origin(found.path, found.line, found.column)


def _located(manifest: Manifest, node: Any) -> Origin:
    """A node of an object, at its line in the file the object came from (a render's line map); a value
    a Flux Kustomization's variable filled in, where the variable is set (`via`: where it is used)."""
    found = manifest.origin_at(node)
    return found if manifest.filled_at(node) is not None else Origin(found.path, found.line, found.column)


class PinFinder:
    """Detections in Kubernetes objects; knows the tree's objects to follow a chartRef."""

    def __init__(self, catalog: Catalog, manifests: Sequence[Manifest], charts: list[ChartPin] | None = None):
        self.catalog = catalog
        self.charts = charts
        self.objects = {(m.kind, m.namespace, m.name): m for m in manifests}
        self.value_sources: dict[tuple[str, str | None], list[Manifest]] = {}  # ConfigMaps, Secrets for valuesFrom
        for m in manifests:
            if m.kind in ("ConfigMap", "Secret") and m.group == "":
                self.value_sources.setdefault((m.kind, m.namespace), []).append(m)
        self.fields, self.chart_values = installers(catalog)
        self.secrets: list[Manifest] | None = None  # the cluster Secrets, once an ApplicationSet asks
        self.notices: list[Diagnostic] = []  # what an ApplicationSet's generators leave unnamed (argo_pins)
        self.crd_labelled = {g: c for c in catalog.components.values() if c.crd_release_label for g in c.crd_groups}
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
            yield from self.helm_release(manifest)
        elif manifest.kind == "HelmRelease" and group == "helm.fluxcd.io":  # Flux v1's helm-operator
            chart = value_at(manifest.node, "spec", "chart")
            name = scalar(value_at(chart, "name"))
            yield from self._chart_pin(name, scalar(value_at(chart, "repository")), value_at(chart, "version"),
                                       value_at(chart, "name"), manifest.origin.path,
                                       f"{manifest.object_ref} (chart {name})", flux_v1_values(manifest))
        elif manifest.kind in ("Application", "ApplicationSet") and group == "argoproj.io":
            yield from self._argo(manifest)
        elif manifest.kind == "HelmChart" and group == "helm.cattle.io":
            yield from self._k3s_helm_chart(manifest)
        elif manifest.kind in ("OCIRepository", "GitRepository") and group == "source.toolkit.fluxcd.io":
            yield from self._manifest_source(manifest)
        elif manifest.kind == "Kustomization" and group == "kustomize.toolkit.fluxcd.io":
            yield from self._flux_source(manifest)
        yield from field_pins(self.fields, manifest)

    def object_pins(self, manifest: Manifest) -> Iterator[Detection]:
        """Version labels and image tags: the object's own tree, nothing else."""
        yield from self._labels(manifest)
        yield from self._images(manifest)

    def helm_release(self, manifest: Manifest) -> Iterator[Detection]:
        """The chart pins of a Flux HelmRelease (components.overlaid asks it for each overlay's build)."""
        spec = value_at(manifest.node, "spec")
        what = manifest.object_ref
        values = flux_values(manifest, self._values_source)
        chart_spec = value_at(spec, "chart", "spec")
        if chart_spec is not None and scalar(value_at(chart_spec, "sourceRef", "kind")) == "GitRepository":
            yield from self._git_chart(manifest, chart_spec, values)
            return
        if chart_spec is not None:
            chart = scalar(value_at(chart_spec, "chart"))
            repo = self._repository_url(value_at(chart_spec, "sourceRef"), manifest.namespace)
            yield from self._chart_pin(chart, repo, value_at(chart_spec, "version"), value_at(chart_spec, "chart"),
                                       manifest.origin.path, f"{what} (chart {chart})", values,
                                       at=_version_origin(manifest, value_at(chart_spec, "version") or value_at(chart_spec, "chart")))
            return
        ref = value_at(spec, "chartRef")
        target = self._object(scalar(value_at(ref, "kind")), scalar(value_at(ref, "namespace")) or manifest.namespace,
                              scalar(value_at(ref, "name")))
        if target is not None:
            yield from self._chart_ref(target, what, values)

    def _values_source(self, kind: str, namespace: str | None, name: str) -> Manifest | None:
        """The ConfigMap or Secret a valuesFrom names, also as kustomize's configMapGenerator names it
        (name-<hash>: the generator's name reference is not always rewritten in the release)."""
        found = self.objects.get((kind, namespace, name))
        if found is not None:
            return found
        generated = [m for m in self.value_sources.get((kind, namespace), ()) if generated_name(name, m.name or "")]
        return generated[0] if len(generated) == 1 else None

    def _chart_ref(self, target: Manifest, what: str, values: ReleaseValues) -> Iterator[Detection]:
        spec = value_at(target.node, "spec")
        via = f"{what} via {target.object_ref}"
        if target.kind == "OCIRepository":
            url = (scalar(value_at(spec, "url")) or "").rstrip("/")
            chart = url.rpartition("/")[2]
            version = value_at(spec, "ref", "tag") or value_at(spec, "ref", "semver")
            yield from self._chart_pin(chart, url.rpartition("/")[0], version, value_at(spec, "url"),
                                       target.origin.path, f"{via} (chart {chart})", values)
        elif target.kind == "HelmChart":
            chart = scalar(value_at(spec, "chart"))
            repo = self._repository_url(value_at(spec, "sourceRef"), target.namespace)
            yield from self._chart_pin(chart, repo, value_at(spec, "version"), value_at(spec, "chart"),
                                       target.origin.path, f"{via} (chart {chart})", values)

    def _git_chart(self, manifest: Manifest, chart_spec: Any, values: ReleaseValues) -> Iterator[Detection]:
        """A chart in a remote Git repository at a tag (Flux reads its version from the tag, not from
        spec.chart.spec.version); a chart in the tree's own repository is the tree's, rendered."""
        source = self._source(value_at(chart_spec, "sourceRef"), manifest.namespace)
        path = (scalar(value_at(chart_spec, "chart")) or "").strip("/")
        pinned = _git_pin(source) if source is not None else None
        if pinned is None or not path:
            return
        url, ref = pinned
        chart = path.rpartition("/")[2]
        version = (scalar(ref) or "").removeprefix(f"{chart}-")  # a chart repository's tags: <chart>-<version>
        yield from self._chart_pin(chart, url, ref, ref, source.origin.path,
                                   f"{manifest.object_ref} via {source.object_ref} (chart {chart})", values, version,
                                   git=True)

    def _tagged_chart(self, source: Manifest, ref: Any, what: str) -> Iterator[Detection]:
        """A chart repository's tag, `<chart>-<version>` (kube-prometheus-stack-62.7.0: the chart's CRDs
        applied from the tag), as a pin of that chart."""
        chart, version = _TAGGED_CHART.match(scalar(ref) or "").groups()
        component = component_for_chart(self.catalog, chart, None)
        origin = _located(source, ref)
        if component is not None:
            yield detection(component, version, True, origin, "kustomize", what)
        else:
            yield Detection(chart, version, (), origin, "kustomize", what)

    def _flux_source(self, manifest: Manifest) -> Iterator[Detection]:
        """The release of a remote Git repository or OCI artifact a Flux Kustomization applies, at its tag."""
        source = self._source(value_at(manifest.node, "spec", "sourceRef"), manifest.namespace)
        pinned = _git_pin(source) if source is not None and source.kind == "GitRepository" else \
            _oci_pin(source) if source is not None and source.kind == "OCIRepository" else None
        if pinned is None:
            return
        url, ref = pinned
        what = f"{manifest.object_ref} via {source.object_ref} ({url})"
        version = scalar(ref) or ""
        tagged = _TAGGED_CHART.match(version)
        component = known_url(url, self.catalog)
        if component is None and tagged:  # a charts repository (prometheus-community/helm-charts) at a chart's tag
            yield from self._tagged_chart(source, ref, what)
            return
        component = component or component_for_chart(self.catalog, url.rpartition("/")[2], None)
        if component is not None:
            version = tagged.group(2) if tagged else version  # kyverno-chart-v2.5.2: the version is v2.5.2
            if parse_version(version) is not None:
                yield detection(component, version, False, _located(source, ref), "kustomize", what)
            return
        name = remote_name(url) if source.kind == "GitRepository" else url.rstrip("/").rpartition("/")[2]
        if name:
            yield Detection(name, version, (), _located(source, ref), "kustomize", what)

    def _object(self, kind: str | None, namespace: str | None, name: str | None) -> Manifest | None:
        """The object a reference names; one whose namespace kubehop does not know (a file that builds
        put in several namespaces: scanner.sources.kustomize.namespaces) may be in any."""
        return self.objects.get((kind, namespace, name)) or self.objects.get((kind, None, name))

    def _source(self, source_ref: Any, namespace: str | None) -> Manifest | None:
        kind, name = scalar(value_at(source_ref, "kind")), scalar(value_at(source_ref, "name"))
        return self._object(kind, scalar(value_at(source_ref, "namespace")) or namespace, name)

    def _repository_url(self, source_ref: Any, namespace: str | None) -> str | None:
        kind, name = scalar(value_at(source_ref, "kind")), scalar(value_at(source_ref, "name"))
        source = self._object(kind, scalar(value_at(source_ref, "namespace")) or namespace, name)
        return scalar(value_at(source.node, "spec", "url")) if source is not None else None

    def _manifest_source(self, manifest: Manifest) -> Iterator[Detection]:
        """A Flux source of a component's own release manifests (Flux's flux-manifests): its ref is the pin."""
        url = scalar(value_at(manifest.node, "spec", "url")) or ""
        component = next((c for c in self.catalog.components.values()
                          if any(fragment in url for fragment in c.manifest_sources)), None)
        ref = value_at(manifest.node, "spec", "ref")
        version = value_at(ref, "tag") or value_at(ref, "semver")
        if component is not None and scalar(version):
            yield detection(component, scalar(version), False, _located(manifest, version), "source",
                            f"{manifest.object_ref} ({url})")

    def _argo(self, manifest: Manifest) -> Iterator[Detection]:
        from scanner.components.argo_pins import argo_charts, cluster_secrets

        if manifest.kind == "ApplicationSet" and self.secrets is None:  # its `clusters` generators read them
            self.secrets = cluster_secrets(v for (kind, _), v in self.value_sources.items() if kind == "Secret")
        for found in argo_charts(manifest, self.secrets or (), self.notices):
            yield from self._chart_pin(found.chart, found.repository, found.version_node, found.chart_node,
                                       manifest.origin.path, f"{manifest.object_ref} (chart {found.chart})",
                                       argo_values(found.source, manifest.object_ref), found.version, at=found.at)

    def _k3s_helm_chart(self, manifest: Manifest) -> Iterator[Detection]:
        """The Helm controller K3s and RKE2 bundle: spec.chart, spec.version, spec.repo."""
        spec = value_at(manifest.node, "spec")
        chart = scalar(value_at(spec, "chart"))
        config = self.objects.get(("HelmChartConfig", manifest.namespace, manifest.name))
        yield from self._chart_pin(chart, scalar(value_at(spec, "repo")), value_at(spec, "version"), value_at(spec, "chart"),
                                   manifest.origin.path, f"{manifest.object_ref} (chart {chart})",
                                   k3s_values(manifest, config), at=manifest.filled_at(value_at(spec, "version")))

    def _chart_pin(self, chart: str | None, repo: str | None, version_node: Any, fallback_node: Any,
                   path: str, what: str, values: ReleaseValues | None = None,
                   version: str | None = None, at: Origin | None = None, git: bool = False) -> Iterator[Detection]:
        """`at`: where the version is edited when it is not the node's own line (an overlay's patch).
        `git`: the chart is in the Git repository `repo`, which no data lists (matched by name)."""
        pin = version or scalar(version_node) or "*"  # no version: the newest chart, whichever it is
        node = version_node if version_node is not None else fallback_node
        origin = at if at is not None else origin_of(path, node) if node is not None else None
        if origin is None:
            return
        if self.charts is not None and chart:
            self.charts.append(ChartPin(chart, repo, pin, origin, what, git=git))
        component = component_for_chart(self.catalog, chart, None if git else repo)
        if component is not None:
            yield detection(component, pin, True, origin, "chart", what, values)
        yield from values_pins(self.chart_values.get(chart or "", ()), values, origin, what)

    def _labels(self, manifest: Manifest) -> Iterator[Detection]:
        labels = value_at(manifest.node, "metadata", "labels")
        version = mapping_get(labels, _VERSION_LABEL)
        if scalar(version) is None:
            return
        for key in _PART_OF:
            component = self.catalog.components.get(scalar(mapping_get(labels, key)) or "")
            if component is not None:
                yield detection(component, scalar(version), False, _located(manifest, version),
                                 "label", f"label {key}={component.name} on {manifest.object_ref}")
                return
        group = scalar(value_at(manifest.node, "spec", "group")) if manifest.kind == "CustomResourceDefinition" else None
        component = self.crd_labelled.get(group or "")
        if component is not None and not any(mapping_get(labels, k) is not None for k in _PART_OF) \
                and parse_version(scalar(version)) is not None:  # Flux 0.x's CRDs (catalog: crd_release_label)
            yield detection(component, scalar(version), False, _located(manifest, version), "label",
                            f"label {_VERSION_LABEL} on {manifest.object_ref}, a CRD of {component.title}")

    def _images(self, manifest: Manifest) -> Iterator[Detection]:
        if manifest.kind in _NO_IMAGES:
            return
        for node in image_values(manifest.node):
            if scalar(node) is None:  # `image: null`
                continue
            name, _, tag = split_image(node.value)
            if not tag or parse_version(tag) is None:
                continue
            component = self._component_for_image(name)
            if component is not None:
                yield detection(component, tag, False, _located(manifest, node), "image",
                                 f"image {name} in {manifest.object_ref}")
            elif operator_image(name, manifest):
                yield Detection(name.rpartition("/")[2], tag, (), _located(manifest, node), "image",
                                f"image {name} in {manifest.object_ref}")

    def _component_for_image(self, name: str) -> Component | None:
        return self.by_image.get(normalize_image(name))


def operator_image(name: str, manifest: Manifest) -> bool:
    """An image that names an operator or controller (`*-operator`, `*-controller`) run by a workload of a
    plain manifest: a component in its own right. Other images are apps, sidecars and tools (far too many
    to list), and a chart's objects are named by their chart."""
    return (manifest.kind in _WORKLOADS and manifest.origin.via is None
            and name.rpartition("/")[2].endswith(_OPERATOR_SUFFIXES) and not name.startswith(_KUBERNETES_IMAGES))


def _git_pin(source: Manifest) -> tuple[str, Any] | None:
    """(url, the ref node) of a GitRepository pinned to a tag, semver range or commit; None for a branch
    (the tree's own repository, or one that floats) and for the tree's own flux-system source."""
    if source.name == "flux-system":
        return None
    spec = value_at(source.node, "spec")
    url = scalar(value_at(spec, "url"))
    ref = next((n for k in ("tag", "semver", "commit") if scalar(n := value_at(spec, "ref", k))), None)
    return (url, ref) if url and ref is not None else None


def _oci_pin(source: Manifest) -> tuple[str, Any] | None:
    spec = value_at(source.node, "spec")
    url = scalar(value_at(spec, "url"))
    ref = next((n for k in ("tag", "semver") if scalar(n := value_at(spec, "ref", k))), None)
    return (url, ref) if url and ref is not None else None
