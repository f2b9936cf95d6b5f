"""The namespace an object read from its own file is deployed in, when the kustomizations that reach
its file say it.

A kustomization's `namespace:` puts every namespaced object of its build in that namespace, over what
the object's file says (kustomize's namespace transformer; the outermost kustomization that sets one
wins, as its transformer runs last), and a Flux Kustomization's `spec.targetNamespace` does the same
over the folder it builds (kustomize-controller writes it as the namespace of that folder's
kustomization, or of the one it generates for a folder that has none). kubehop reads each file's
objects once, as written, before anything renders; an object whose file every build that reaches it
puts in one namespace is given that namespace there (the builds are those of the kustomizations no
other one uses, and of every folder a Flux Kustomization builds: a folder only a larger build uses is
deployed as part of it), so that a HelmRelease is named and rendered in
the namespace it is deployed in, and finds its OCIRepository and valuesFrom objects there as
Flux does. A file that two builds put in two namespaces, or one build in a namespace and another in
none (a base and its overlay), keeps what it says; so does a cluster-scoped kind (rules/cluster-scoped.yaml,
and the tree's own CustomResourceDefinitions of scope Cluster). What a build makes that no file holds
(a generated ConfigMap) gets its folder's Flux targetNamespace when it is built (`in_flux_namespace`).
"""

from __future__ import annotations

import functools
import os
from typing import Iterable

from scanner import data
from scanner.containment import within
from scanner.model import Manifest
from scanner.sources.files.walk import MANIFEST_SUFFIXES, SKIPPED_DIRS
from scanner.sources.kustomize.refs import is_remote, kustomization_file, read_kustomization

_OBJECT_FIELDS = ("resources", "bases", "components")  # what a kustomization takes objects from
_UNSET = ""  # a build that sets no namespace on the file's objects: they keep their own


@functools.cache
def _built_in_cluster_scoped() -> frozenset[tuple[str, str]]:
    document = data.load("rules/cluster-scoped.yaml")
    return frozenset(("" if entry["group"] == "core" else entry["group"], kind)
                     for entry in document["kinds"] for kind in entry["kinds"])


def cluster_scoped(manifests: Iterable[Manifest]) -> frozenset[tuple[str, str]]:
    """(group, kind) of every kind that has no namespace: the built-in ones, and those the tree's
    CustomResourceDefinitions declare of scope Cluster."""
    found = set(_built_in_cluster_scoped())
    for manifest in manifests:
        if manifest.kind != "CustomResourceDefinition" or manifest.group != "apiextensions.k8s.io":
            continue
        spec = manifest.body.get("spec") if isinstance(manifest.body, dict) else None
        names = spec.get("names") if isinstance(spec, dict) else None
        if isinstance(spec, dict) and spec.get("scope") == "Cluster" and isinstance(names, dict) \
                and isinstance(spec.get("group"), str) and isinstance(names.get("kind"), str):
            found.add((spec["group"], names["kind"]))
    return frozenset(found)


def assign(manifests: list[Manifest], folders: list[str], flux_targets: dict[str, str], root_of) -> None:
    """Give each object read from its own file the namespace every build reaching the file puts it in.

    `folders` are the kustomization folders kubehop builds, `flux_targets` the real folders a Flux
    Kustomization builds with a targetNamespace (scanner.sources.kustomize.flux), `root_of(folder)`
    the real path of the repository holding a folder: nothing outside it is followed."""
    reached: dict[str, set[str]] = {}
    walked: set[tuple[str, str]] = set()
    built = [os.path.realpath(f) for f in folders]
    used = {child for folder in built for child in _children(folder)}
    roots = [folder for folder in built if folder not in used or folder in flux_targets]
    roots += [folder for folder in flux_targets if folder not in built and os.path.isdir(folder)]
    for folder in roots:
        target = flux_targets.get(folder, _UNSET)
        kustomization = read_kustomization(folder)
        if kustomization.path is None:  # a Flux path with no kustomization file: Flux generates one
            _generated(folder, target, root_of(folder), reached, walked)
        elif not kustomization.problem and kustomization.document.get("kind") != "Component":
            _walk(folder, target, root_of(folder), reached, walked)
    if not any(_UNSET not in namespaces for namespaces in reached.values()):
        return
    no_namespace = cluster_scoped(manifests)
    for manifest in manifests:
        if manifest.origin.via is not None or manifest.line_map is not None or not manifest.origin.line:
            continue  # not read from its own file
        namespaces = reached.get(os.path.realpath(manifest.origin.path))
        if namespaces is None or len(namespaces) != 1 or _UNSET in namespaces:
            continue
        if (manifest.group, manifest.kind) not in no_namespace:
            manifest.namespace = next(iter(namespaces))


def in_flux_namespace(manifests: Iterable[Manifest], namespace: str, no_namespace: frozenset[tuple[str, str]]) -> None:
    """Put what a Flux Kustomization's build makes in its targetNamespace, as kustomize-controller does."""
    for manifest in manifests:
        if (manifest.group, manifest.kind) not in no_namespace:
            manifest.namespace = namespace


def _children(folder: str) -> list[str]:
    """The real kustomization folders `folder`'s kustomization takes objects from."""
    kustomization = read_kustomization(folder)
    found = []
    for field in _OBJECT_FIELDS if not kustomization.problem else ():
        values = kustomization.document.get(field)
        for value in values if isinstance(values, list) else ():
            if isinstance(value, str) and value.strip() and "\0" not in value and not is_remote(value):
                path = os.path.realpath(os.path.join(folder, value.strip()))
                if os.path.isdir(path) and kustomization_file(path):
                    found.append(path)
    return found


def _walk(folder: str, outer: str, root: str, reached: dict[str, set[str]], walked: set[tuple[str, str]]) -> None:
    if (folder, outer) in walked:
        return
    walked.add((folder, outer))
    kustomization = read_kustomization(folder)
    if kustomization.problem:
        return
    own = kustomization.document.get("namespace")
    namespace = outer or (own if isinstance(own, str) and own and "$" not in own else _UNSET)
    for field in _OBJECT_FIELDS:
        values = kustomization.document.get(field)
        for value in values if isinstance(values, list) else ():
            if not isinstance(value, str) or not value.strip() or "\0" in value or is_remote(value):
                continue
            path = os.path.realpath(os.path.join(folder, value.strip()))
            if not within(path, root):
                continue
            if os.path.isdir(path):
                if kustomization_file(path):
                    _walk(path, namespace, root, reached, walked)
            elif os.path.isfile(path) and field != "components":
                reached.setdefault(path, set()).add(namespace)


def _generated(folder: str, target: str, root: str, reached: dict[str, set[str]], walked: set[tuple[str, str]]) -> None:
    """The kustomization Flux generates for a folder without one: its manifests, and the nearest
    folders below it that hold a kustomization (fluxcd/pkg kustomize_generator.go)."""
    for current, names, files in os.walk(folder):
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
        if current != folder and kustomization_file(current):
            names[:] = []
            _walk(os.path.realpath(current), target, root, reached, walked)
            continue
        for name in files:
            if name.lower().endswith(MANIFEST_SUFFIXES):
                reached.setdefault(os.path.realpath(os.path.join(current, name)), set()).add(target)
