"""What the builds of the roots deploy: from a folder, its build; from the objects of what it builds,
the folders they point at; in turn.

A folder holding a kustomization is built from it: the files it and every kustomization it reaches
list (scanner.sources.kustomize.refs.closure). A folder without one is built as Flux builds it (and
Argo CD, read as generously): every file in it and below, down to the nearest folders holding a
kustomization, which are built in turn. The objects of a file deployed point at more folders:
- a Flux Kustomization, its path and its `spec.components` (roots.kustomization_targets), a
  FluxInstance its sync path;
- an Argo CD Application its sources' paths, an ApplicationSet those of the Applications it makes
  (appsets.py), or, when the tree does not say them all, every folder its template's path may name;
- what a HelmRelease's values, a ResourceSet or an Argo CD Application's Helm values name that is a
  folder of the tree (a chart that makes Flux or Argo CD objects: flux-instance, argocd-apps, a
  ResourceSet's template), read as a path may be.
Where what is built cannot be read, the reach holds every file there (Reach.whole): a kustomization
kubehop cannot read, one that renders a Helm chart. A chart of the tree that an Application or a
HelmRelease renders and whose templates make Flux or Argo CD objects points where its values say:
the reach cannot be known (Reach.opaque).
"""

from __future__ import annotations

import functools
import os
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from scanner import per_scan
from scanner.containment import nearest_folder, repository_root, within
from scanner.model import Manifest
from scanner.sources import argo
from scanner.sources.reach import appsets, roots
from scanner.sources.reach.roots import Target

_ARGO_KINDS = ("Application", "ApplicationSet")
_HELM = "helm.toolkit.fluxcd.io"
_MAKES_POINTERS = re.compile(rb"argoproj\.io|kustomize\.toolkit\.fluxcd\.io|fluxcd\.controlplane\.io")
_MAX_STRING = 256


@dataclass
class Reach:
    files: set[str] = field(default_factory=set)  # real files the builds read
    built: set[str] = field(default_factory=set)  # real kustomization folders built
    pointed: list[str] = field(default_factory=list)  # real folders pointed at (and the roots'), in order
    plain: set[str] = field(default_factory=set)  # real folders built whole, without a kustomization
    whole: set[str] = field(default_factory=set)  # real folders whose every file counts as deployed
    opaque: list[str] = field(default_factory=list)  # why more may be deployed than read
    visited: set[str] = field(default_factory=set)  # real files whose objects were read

    def deploys(self, real: str) -> bool:
        """Is the file (a real path) deployed, as far as the reach read?"""
        return real in self.files or any(within(real, folder) for folder in self.whole)

    def areas(self) -> frozenset[str]:
        """The real folders the builds read: what is in and below them only the builds deploy."""
        return frozenset(self.built | self.plain | set(self.pointed))

    def governs(self, real: str, areas: frozenset[str] | None = None) -> bool:
        """Does the file lie in or below a folder the builds read (so that only they deploy it)?"""
        areas = self.areas() if areas is None else areas
        return nearest_folder(os.path.dirname(real), areas) is not None


class Tree:
    """The tree's objects that point at folders, by the real path of their file, and its folders."""

    def __init__(self, manifests: Sequence[Manifest], scanned: Sequence[str]):
        self.top = repository_root(scanned[0], list(scanned))
        self.sources = roots.Sources(manifests)
        self.artifacts = [m for m in manifests if m.group == roots.ARTIFACTS and m.kind == "ArtifactGenerator"]
        self._secrets = [m for m in manifests if m.kind == "Secret" and m.group == ""]
        self.by_file: dict[str, list[Manifest]] = {}
        for manifest in manifests:
            if pointer_kind(manifest) is not None and not manifest.patch:  # a patch is no object of its own
                self.by_file.setdefault(os.path.realpath(manifest.origin.path), []).append(manifest)
        self._folders: list[str] | None = None

    @functools.cached_property
    def secrets(self) -> list[Manifest]:
        """The Argo CD cluster Secrets, read when an ApplicationSet asks: a Secret's labels are read
        from its file again (sources/files/retention.py), so a tree without ApplicationSets never does."""
        return [m for m in self._secrets if appsets.is_cluster_secret(m)]

    def pointers(self) -> Iterator[tuple[str, Manifest]]:
        for file, found in self.by_file.items():
            for manifest in found:
                yield file, manifest

    def folders(self) -> list[str]:
        """Every real folder of the repository (what a pattern is matched against)."""
        if self._folders is None:
            from scanner.sources.files.walk import SKIPPED_DIRS

            self._folders = []
            for folder, names, _ in os.walk(self.top):
                names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
                self._folders.append(folder)
        return self._folders


def pointer_kind(manifest: Manifest) -> str | None:
    """"flux", "instance", "argo" or "values" for an object that points at folders; None otherwise."""
    if manifest.group == roots.FLUX_KUSTOMIZE and manifest.kind == "Kustomization":
        return "flux"
    if manifest.group == roots.FLUX_OPERATOR and manifest.kind == "FluxInstance":
        return "instance"
    if manifest.group == argo.GROUP and manifest.kind in _ARGO_KINDS:
        return "argo"
    if (manifest.group == _HELM and manifest.kind == "HelmRelease") or \
            (manifest.group == roots.FLUX_OPERATOR and manifest.kind in ("ResourceSet", "ResourceSetInputProvider")):
        return "values"
    return None


class Walk:
    """The reach of a set of starts (real folders, files treated as deployed), grown with `start` and `run`.

    `may`: what the roots may deploy (a source that may be this repository, a path's variables, what
    values name: nothing is taken as undeployed that may be deployed); else only what they certainly
    deploy: the exact paths of Flux Kustomizations of this repository's sources (the folders a cluster
    of a fleet is told by, scanner.clusters)."""

    def __init__(self, tree: Tree, may: bool = True):
        self.tree, self.reach, self.may = tree, Reach(), may
        self._seen: set[str] = set()
        self._queue: deque[tuple[str, str]] = deque()  # ("folder" | "file" | "pattern", value)
        self._patterns: set[str] = set()

    def start(self, kind: str, value: str) -> None:
        self._queue.append((kind, value))

    def target(self, target: Target) -> None:
        if target.folder is not None:
            self.start("folder", target.folder)
        elif target.pattern is not None and target.pattern not in self._patterns:
            self._patterns.add(target.pattern)
            self.start("pattern", target.pattern)

    def run(self) -> Reach:
        reach = self.reach
        while self._queue:
            kind, value = self._queue.popleft()
            if kind == "pattern":
                wanted = re.compile(value)
                for folder in self.tree.folders():
                    relative = os.path.relpath(folder, self.tree.top).replace(os.sep, "/")
                    if relative != "." and wanted.fullmatch(relative):
                        self.start("folder", folder)
                continue
            if kind == "folder":
                if value in self._seen:
                    continue
                self._seen.add(value)
                reach.pointed.append(value)
                built = build_of(value, self.tree.top)
                reach.built |= built.built
                reach.plain |= built.plain
                reach.whole |= built.whole
                reach.files |= built.files
                for file in sorted(built.files):
                    self._visit(file)
            else:
                reach.files.add(value)
                self._visit(value)
        return reach

    def _visit(self, file: str) -> None:
        if file in self.reach.visited:
            return
        self.reach.visited.add(file)
        for manifest in self.tree.by_file.get(file, ()):
            if self.may:
                for target in targets_of(manifest, self.tree, self.reach.opaque):
                    self.target(target)
            elif pointer_kind(manifest) == "flux" and self.tree.sources.kind_of(manifest) == roots.THIS:
                for found in roots.kustomization_targets(manifest, self.tree.top, self.tree.artifacts, self.tree.sources):
                    if found.folder is not None:
                        self.start("folder", found.folder)


def targets_of(manifest: Manifest, tree: Tree, opaque: list[str]) -> Iterator[Target]:
    """The folders an object points at; why it may point at more than that goes to `opaque`."""
    kind, folder = pointer_kind(manifest), os.path.dirname(manifest.origin.path) or "."
    spec = manifest.body.get("spec") if isinstance(manifest.body.get("spec"), dict) else {}
    if kind == "flux":
        yield from roots.kustomization_targets(manifest, tree.top, tree.artifacts, tree.sources)
    elif kind == "instance":
        yield roots.instance_sync(manifest, tree.top)
    elif kind == "values":
        yield from named_folders(spec.get("values") if manifest.kind == "HelmRelease" else spec, tree.top)
        yield from _chart_of_the_tree(manifest, spec, tree, opaque)
    elif kind == "argo":
        specs, complete = [spec], True
        if manifest.kind == "ApplicationSet":
            expansion = appsets.application_specs(manifest, tree.secrets, tree.top)
            specs, complete = expansion.specs, expansion.complete
            if not complete:  # what its template's paths may name
                specs.append(appsets.mapping(appsets.mapping(spec.get("template")).get("spec")))
        for one in specs:
            yield from _application_targets(manifest, one, folder, tree, opaque)


def _application_targets(manifest: Manifest, spec: dict, folder: str, tree: Tree, opaque: list[str]) -> Iterator[Target]:
    for path, readable in argo.source_paths(spec):
        if not readable:
            yield Target(pattern=roots.pattern_of(path))
            continue
        real = argo.folder_of(path, folder, tree.top)
        if real is None:
            continue
        if _makes_pointers(real):
            opaque.append(f"{manifest.object_ref} ({manifest.origin.path}) renders the chart {real}, whose "
                          "templates make Flux or Argo CD objects")
        yield Target(folder=real)
    sources = spec.get("sources") if isinstance(spec.get("sources"), list) else []
    for source in [spec.get("source"), *sources]:
        helm = appsets.mapping(appsets.mapping(source).get("helm"))
        for key in ("values", "valuesObject", "parameters"):
            yield from named_folders(helm.get(key), tree.top)


def _chart_of_the_tree(release: Manifest, spec: dict, tree: Tree, opaque: list[str]) -> Iterator[Target]:
    """A HelmRelease of a chart in this repository (a GitRepository's path): the chart's folder; opaque
    when its templates make Flux or Argo CD objects."""
    chart = appsets.mapping(appsets.mapping(spec.get("chart")).get("spec"))
    name, source = chart.get("chart"), appsets.mapping(chart.get("sourceRef"))
    if not isinstance(name, str) or source.get("kind") != "GitRepository":
        return
    target = roots.path_target(name, os.path.dirname(release.origin.path) or ".", tree.top)
    if target.folder is not None and _makes_pointers(target.folder):
        opaque.append(f"{release.object_ref} ({release.origin.path}) renders the chart {target.folder}, whose "
                      "templates make Flux or Argo CD objects")
    if target.folder is not None:
        yield target


def _makes_pointers(folder: str) -> bool:
    """Is `folder` a Helm chart whose templates make Flux Kustomizations or Argo CD Applications?"""
    templates = os.path.join(folder, "templates")
    if not os.path.isfile(os.path.join(folder, "Chart.yaml")) or not os.path.isdir(templates):
        return False
    for here, _, files in os.walk(templates):
        for name in files:
            try:
                with open(os.path.join(here, name), "rb") as handle:
                    if _MAKES_POINTERS.search(handle.read(1 << 20)):
                        return True
            except OSError:
                return True  # unreadable: it may
    return False


def named_folders(value: Any, top: str) -> Iterator[Target]:
    """The folders of the tree the strings of `value` name as paths from its top may (`kubernetes/apps/x`,
    `clusters/${CLUSTER}`: two parts at least, the first one written out): a chart's values or a template
    may make a Kustomization or an Application of them."""
    for text in _strings(value, 0):
        text = text.strip()
        if not 2 < len(text) <= _MAX_STRING or "/" not in text or "://" in text or any(c.isspace() for c in text):
            continue
        parts = text.lstrip("/").removeprefix("./").rstrip("/").split("/")
        if len(parts) < 2 or parts[0] in ("", ".", "..") or roots.has_placeholder(parts[0]) or ".." in parts:
            continue
        relative = "/".join(parts)
        if roots.has_placeholder(relative):
            yield Target(pattern=roots.pattern_of(relative).removeprefix("(?:.*/)?"))
        elif os.path.isdir(os.path.join(top, relative)) and within(os.path.realpath(os.path.join(top, relative)), top):
            yield Target(folder=os.path.realpath(os.path.join(top, relative)))


def _strings(value: Any, depth: int) -> Iterator[str]:
    if depth > 32:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


@dataclass
class Build:
    files: set[str] = field(default_factory=set)
    built: set[str] = field(default_factory=set)
    plain: set[str] = field(default_factory=set)
    whole: set[str] = field(default_factory=set)


def build_of(folder: str, top: str) -> Build:
    """What building `folder` (a real path) reads: the files, the kustomization folders, the plain ones."""
    return _build_of(folder, top)


@per_scan.cache(maxsize=4096)
def _build_of(folder: str, top: str) -> Build:
    from scanner.sources.kustomize.refs import kustomization_file

    found = Build()
    if kustomization_file(folder):
        _kustomization(folder, top, found)
    else:
        _generated(folder, top, found)
    return found


def _kustomization(folder: str, top: str, found: Build) -> None:
    from scanner.sources.kustomize.refs import closure, is_remote, kustomization_file, read_kustomization, references

    reached = closure(folder, top)
    found.whole.update(os.path.realpath(f) for f in reached.problems)
    for used in reached.folders:
        real = os.path.realpath(used)
        found.built.add(real)
        document = read_kustomization(used).document
        if document.get("helmCharts") or document.get("helmChartInflationGenerator"):
            found.whole.add(real)  # what it renders may be applied another way too
        for reference in references(document):
            value = reference.value.strip()
            if not value or is_remote(value):
                continue
            try:
                named = os.path.realpath(os.path.join(used, value))
            except (ValueError, OSError):
                continue
            if not within(named, top):
                continue
            if os.path.isfile(named):
                found.files.add(named)
            elif os.path.isdir(named) and not kustomization_file(named) and reference.folder_or_file:
                _generated(named, top, found)  # kustomize refuses it: read as meant to be deployed


def _generated(folder: str, top: str, found: Build) -> None:
    """A folder without a kustomization, as Flux builds it: its files, and the nearest folders below it
    that hold a kustomization, built in turn."""
    from scanner.sources.files.walk import SKIPPED_DIRS
    from scanner.sources.kustomize.refs import kustomization_file

    for here, names, files in os.walk(folder):
        real = os.path.realpath(here)
        if here != folder and kustomization_file(here):
            if real not in found.built:
                _kustomization(here, top, found)
            names[:] = []
            continue
        found.plain.add(real)
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
        found.files.update(os.path.join(real, name) for name in files)
