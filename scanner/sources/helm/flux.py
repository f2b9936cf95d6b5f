"""Flux HelmReleases in the tree: which chart each one deploys, with which values.

A HelmRelease whose chart is a path in a GitRepository is matched to a chart folder of the scan (or
found from the top of the repository, as Flux reads it: a leading `/` is that top too) and rendered
as that release; a path that leaves the repository is an input problem, and nothing outside is read
(scanner.containment). It renders with its `valuesFrom` ConfigMaps/Secrets (when they are in the
tree) and then its `spec.values`, the order Flux merges them in. A chart from a HelmRepository or an
OCIRepository (found in the tree) is downloaded by helm only with --allow-network; without it the
release is listed as not rendered. A Flux v1 HelmRelease (helm.fluxcd.io, the helm-operator archived
in 2022) names its chart itself, `spec.chart.{repository, name, version}`: downloaded the same way,
with its `spec.values`; one from Git (`spec.chart.git`) is listed as not rendered.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Iterable

import yaml

from scanner.containment import git_top, leaves, repository_root
from scanner.crds import as_dict, as_list, as_str
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest, object_ref
from scanner.nodes import locate
from scanner.sources.helm.generated_values import GeneratedValues
from scanner.sources.helm.render import ChartRelease, RemoteChart, describe_chart, release_problem
from scanner.sources.yaml.yamldoc import substitution_placeholder

_GROUP = "helm.toolkit.fluxcd.io"
_OPERATOR_GROUP = "helm.fluxcd.io"  # Flux v1's helm-operator
_SOURCE_GROUP = "source.toolkit.fluxcd.io"
_LOCAL_SOURCES = ("GitRepository", "Bucket")
_RELEASE_NAME_MAX = 53
_DEFAULT_VALUES_KEY = "values.yaml"


@dataclass
class FluxCharts:
    releases: list[ChartRelease] = field(default_factory=list)
    charts_used: set[str] = field(default_factory=set)  # chart folders a HelmRelease deploys
    not_rendered: list[Diagnostic] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)


def is_helm_release(manifest: Manifest) -> bool:
    return manifest.group == _GROUP and manifest.kind == "HelmRelease"


def flux_releases(manifests: list[Manifest], chart_dirs: list[str], allow_network: bool = False,
                  scanned: tuple[str, ...] = (), documents: Iterable[tuple[str, Any]] = ()) -> FluxCharts:
    """The releases the HelmReleases among `manifests` make; `scanned` are the paths the scan was given,
    `documents` the scan's documents that are no objects (the kustomizations whose generators may make
    a release's valuesFrom ConfigMap: generated_values)."""
    found = FluxCharts()
    generated = GeneratedValues(documents, scanned)
    objects = {(m.kind, m.namespace, m.name): m for m in manifests
               if m.kind in ("ConfigMap", "Secret") or m.group == _SOURCE_GROUP}
    for manifest in manifests:
        operator = manifest.group == _OPERATOR_GROUP and manifest.kind == "HelmRelease"
        if (is_helm_release(manifest) or operator) and not manifest.patch:  # a patch changes its base's release
            try:
                if operator:
                    _add_operator_release(manifest, found, allow_network)
                else:
                    _add(manifest, chart_dirs, objects, found, allow_network, scanned, generated)
            except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
                found.notes.append(unexpected(manifest.origin.path, err, manifest.origin.line))
    return found


def _add(release: Manifest, chart_dirs: list[str], objects: dict, found: FluxCharts, allow_network: bool,
         scanned: tuple[str, ...], generated: GeneratedValues) -> None:
    spec = as_dict(release.body.get("spec"))
    chart = as_dict(as_dict(spec.get("chart")).get("spec"))
    namespace = release.namespace or "default"
    label = f"Flux HelmRelease {namespace}/{release.name}"
    where = release.origin.path
    as_release = {"release": _release_name(release, spec),
                  "namespace": as_str(spec.get("targetNamespace")) or namespace}

    def rendered(**chart) -> ChartRelease:
        """Its values, looked up and written out only for a release that is rendered: a valuesFrom
        object missing from the tree is said only where the render goes without it."""
        looked_up = [_values_from(ref, namespace, objects, label, where, found, generated)
                     for ref in as_list(spec.get("valuesFrom"))]
        inline = (yaml.safe_dump(spec["values"]),) if isinstance(spec.get("values"), dict) else ()
        return ChartRelease(**chart, **as_release, values=(*(v for v in looked_up if v is not None), *inline))

    if _refused(release, label, as_release["release"], as_release["namespace"], found):
        return
    chart_path = as_str(chart.get("chart"))
    if as_dict(chart.get("sourceRef")).get("kind") in _LOCAL_SOURCES and chart_path:
        relative = chart_path.lstrip("/")  # Flux reads the path from the top of the source, a leading / too
        root = repository_root(os.path.dirname(where) or ".", scanned)
        why = leaves(relative, root, root)
        if why:
            key = locate(release.node, ("spec", "chart", "spec", "chart"))
            found.notes.append(Diagnostic(where, f"{label}: spec.chart.spec.chart {chart_path} {why}; not read "
                                                 "(kubehop reads nothing outside the repository)",
                                          release.origin_at(key).line if key is not None else release.origin.line))
            return
        chart_dir = _matching_chart(relative, chart_dirs) or _in_repository(relative, root)
        if chart_dir is None:
            found.not_rendered.append(Diagnostic(
                where, f"{label}: chart path {chart_path} (spec.chart.spec.chart, from the repository's top as Flux "
                       "reads it) is neither among the scanned charts nor in the repository holding this HelmRelease",
                level="notice"))
            return
        found.charts_used.add(chart_dir)
        found.releases.append(rendered(chart_dir=chart_dir, via=f"{label} ({describe_chart(chart_dir)})"))
        return
    remote, problem = _remote_chart(release, spec, chart, objects)
    if remote is not None and not allow_network:
        problem = f"chart {remote} is remote; not downloaded without --allow-network"
    if problem:
        found.not_rendered.append(Diagnostic(where, f"{label}: {problem}", level="notice"))
        return
    found.releases.append(rendered(chart_dir="", via=f"{label} (chart {remote})", remote=remote))


def _add_operator_release(release: Manifest, found: FluxCharts, allow_network: bool) -> None:
    spec = as_dict(release.body.get("spec"))
    chart = as_dict(spec.get("chart"))
    namespace = release.namespace or "default"
    label = f"Flux v1 HelmRelease {namespace}/{release.name}"
    where = release.origin.path
    name, repository = as_str(chart.get("name")), as_str(chart.get("repository"))
    if chart.get("git") is not None:
        problem = f"chart from Git ({as_str(chart.get('git')) or '?'}, path {as_str(chart.get('path')) or '?'}) is not rendered"
    elif not name or not repository:
        problem = "spec.chart names no chart repository and name"
    elif not allow_network:
        problem = f"chart {name} from {repository} is remote; not downloaded without --allow-network"
    else:
        problem = None
    if problem:
        found.not_rendered.append(Diagnostic(where, f"{label}: {problem}", level="notice"))
        return
    remote = RemoteChart(name, repository, _version(chart.get("version")), release.origin)
    values = (yaml.safe_dump(spec["values"]),) if isinstance(spec.get("values"), dict) else ()
    release_name = as_str(spec.get("releaseName")) or str(release.name)
    target_namespace = as_str(spec.get("targetNamespace")) or namespace
    if _refused(release, label, release_name, target_namespace, found):
        return
    found.releases.append(ChartRelease("", release_name, target_namespace, values,
                                       via=f"{label} (chart {remote})", remote=remote))


def _release_name(release: Manifest, spec: dict) -> str:
    """The release name helm-controller gives a HelmRelease: spec.releaseName, else
    `[targetNamespace-]name`, shortened past helm's 53 characters to its first 40 and 12 hex digits of
    its SHA-256 (helm-controller's ShortenName)."""
    given = as_str(spec.get("releaseName"))
    if given:
        return given
    target = as_str(spec.get("targetNamespace"))
    name = f"{target}-{release.name}" if target else str(release.name)
    if len(name) <= _RELEASE_NAME_MAX:
        return name
    return f"{name[:40]}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"


def _refused(release: Manifest, label: str, name: str, namespace: str, found: FluxCharts) -> bool:
    """A release name or namespace helm would refuse (so would Flux): an input problem, never a helm argument.
    One that holds a `${VAR}` is filled in when the object is applied (a Flux Kustomization's postBuild):
    not rendered, and no problem of the tree's."""
    for what, value in (("release name", name), ("namespace", namespace)):
        variable = substitution_placeholder(value)
        if variable:
            found.not_rendered.append(Diagnostic(
                release.origin.path, f"{label}: {what} {value!r} holds {variable}, a variable substituted when the "
                                     "object is applied (Flux postBuild); not rendered", level="notice"))
            return True
    problem = release_problem(name, namespace)
    if problem:
        found.notes.append(Diagnostic(release.origin.path, f"{label}: {problem}", release.origin.line))
    return problem is not None


def _remote_chart(release: Manifest, spec: dict, chart: dict, objects: dict) -> tuple[RemoteChart | None, str | None]:
    """The chart to download, from the HelmRepository/OCIRepository the release names (in the tree)."""
    chart_ref = as_dict(spec.get("chartRef"))
    source_ref = as_dict(chart.get("sourceRef")) or chart_ref
    kind, name = as_str(source_ref.get("kind")), as_str(source_ref.get("name"))
    namespace = as_str(source_ref.get("namespace")) or release.namespace
    source = objects.get((kind, namespace, name)) or objects.get((kind, None, name))
    if source is None and namespace is None:  # where the release lives is not known: the one source of that name
        named = [m for (k, _, n), m in objects.items() if k == kind and n == name]
        source = named[0] if len(named) == 1 else None
    if kind not in ("HelmRepository", "OCIRepository"):
        return None, f"chart source kind {kind} is not supported"
    if source is None:
        return None, f"chart source {object_ref(kind or '?', namespace, name)} is not in the scanned tree"
    source_spec = as_dict(source.body.get("spec"))
    url = as_str(source_spec.get("url")) or ""
    if kind == "OCIRepository":
        reference = as_dict(source_spec.get("ref"))
        version = _version(reference.get("tag")) or _version(reference.get("semver"))
        return RemoteChart(url, None, version, release.origin), None
    version, name = _version(chart.get("version")), as_str(chart.get("chart"))
    if name is None:
        return None, "spec.chart.spec.chart does not name a chart"
    if url.startswith("oci://"):
        return RemoteChart(f"{url.rstrip('/')}/{name}", None, version, release.origin), None
    return RemoteChart(name, url, version, release.origin), None


def _version(value: Any) -> str | None:
    """A chart version or range as written (YAML may read 1.2 as a number); None for anything else."""
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) and value != "" else None


def _matching_chart(chart_path: str, chart_dirs: list[str]) -> str | None:
    """The scanned chart folder a repository-relative path like ./charts/web names."""
    wanted = os.path.normpath(chart_path).split(os.sep)
    for chart_dir in chart_dirs:
        parts = os.path.normpath(os.path.abspath(chart_dir)).split(os.sep)
        if parts[-len(wanted):] == wanted:
            return chart_dir
    return None


def _in_repository(chart_path: str, root: str) -> str | None:
    """The chart at `chart_path` (checked to stay inside) from the top of the Git work tree `root`, when
    the scan was pointed at the releases only (a Flux GitRepository path starts at the repository top)."""
    if git_top(root) != root:
        return None
    chart_dir = os.path.normpath(os.path.join(root, chart_path))
    if not os.path.isfile(os.path.join(chart_dir, "Chart.yaml")):
        return None
    relative = os.path.relpath(chart_dir)
    return chart_dir if relative.startswith("..") else relative


def _values_from(ref: Any, namespace: str, objects: dict, label: str, where: str, found: FluxCharts,
                 generated: GeneratedValues) -> str | None:
    ref = as_dict(ref)
    kind, name = as_str(ref.get("kind")), as_str(ref.get("name"))
    key = as_str(ref.get("valuesKey")) or _DEFAULT_VALUES_KEY
    source = objects.get((kind, namespace, name)) or objects.get((kind, None, name))
    text, missing = (_data_value(source, key) if source else None), "is not in the scanned tree"
    if source is None:
        made = generated.lookup(kind, name, where)  # made by the kustomization beside the release
        if made is not None and made.data is not None:
            text = made.data.get(key)
            missing = f"is not among the keys {made.where} generates"
        elif made is not None:
            missing = f"is not read: {made.where} {made.why}"
    if text is None:
        if not ref.get("optional"):
            found.notes.append(Diagnostic(where, f"{label}: valuesFrom {kind} {name} key {key} {missing}; "
                                                 "rendered without it", level="notice"))
        return None
    target_path = as_str(ref.get("targetPath"))
    if target_path:
        value: Any = text
        for part in reversed(str(target_path).split(".")):
            value = {part: value}
        return yaml.safe_dump(value)
    return text


def _data_value(source: Manifest, key: str) -> str | None:
    body = source.body
    value = as_dict(body.get("stringData")).get(key)
    if value is None:
        value = as_dict(body.get("data")).get(key)
        if value is not None and source.kind == "Secret":
            try:
                value = base64.b64decode(str(value)).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
    return str(value) if value is not None else None
