"""Which kustomizations Flux builds, so that kubehop builds them as Flux's kustomize-controller does.

Flux builds the folder a `Kustomization` object's `spec.path` names (from the top of its source: the
repository's, or the subfolder an OCI artifact was pushed from) with no load restrictor (a file
beside the kustomization's folder is fine) and no plugins. A path without a kustomization file gets
one generated, listing its manifests and, as resources, the nearest folders below it that hold a
kustomization file (fluxcd/pkg kustomize/kustomize_generator.go, `generateKustomization`). The load
restrictor holds for the whole build, so every kustomization such a build reaches is built without
it too. Nothing outside the repository is read either way (`refs.py`): a `spec.path` that
leaves it is an input problem (scanner.containment); a leading `/` is the top, as Flux reads it.
"""

from __future__ import annotations

import os

from scanner.model import Diagnostic, Manifest
from scanner.nodes import locate
from scanner.sources.files.walk import SKIPPED_DIRS
from scanner.containment import leaves, repository_root, within
from scanner.sources.kustomize.refs import Closure, kustomization_file


def flux_paths(manifests: list[Manifest], scanned: list[str]) -> tuple[frozenset[str], list[Diagnostic]]:
    """Real paths of the folders Flux `Kustomization` objects in the tree point at (`spec.path`, from the
    top of the repository holding the object), and an input problem for each path that leaves it."""
    found, problems = set(), []
    for _, path, problem in _pointed_at(manifests, scanned):
        if problem is not None:
            problems.append(problem)
        else:
            found.add(path)
    return frozenset(found), problems


def target_namespaces(manifests: list[Manifest], scanned: list[str]) -> dict[str, str]:
    """Real folder -> the `spec.targetNamespace` the Flux Kustomizations that build it put it in; a folder
    two of them build in two namespaces (or one in none), or whose namespace holds a `${VAR}` that
    postBuild fills in, is left out: kubehop builds a folder once."""
    said: dict[str, set[str | None]] = {}
    for manifest, path, problem in _pointed_at(manifests, scanned):
        if problem is None:
            spec = manifest.body.get("spec")
            namespace = spec.get("targetNamespace") if isinstance(spec, dict) else None
            said.setdefault(path, set()).add(namespace if isinstance(namespace, str) and namespace else None)
    return {path: next(iter(namespaces)) for path, namespaces in said.items()
            if len(namespaces) == 1 and None not in namespaces and "$" not in next(iter(namespaces))}


def _pointed_at(manifests: list[Manifest], scanned: list[str]):
    """(the Flux Kustomization, the real folder its spec.path names, None) for each Kustomization in the
    tree; (it, "", the input problem) for one whose path leaves the repository."""
    for manifest in manifests:
        if manifest.kind != "Kustomization" or manifest.group != "kustomize.toolkit.fluxcd.io":
            continue
        spec = manifest.body.get("spec")
        path = spec.get("path") if isinstance(spec, dict) else None
        if not isinstance(path, str):
            continue
        folder = os.path.dirname(manifest.origin.path) or "."
        top = repository_root(folder, scanned)
        why = leaves(path.lstrip("/"), top, top)
        if why:
            key = locate(manifest.node, ("spec", "path"))
            yield manifest, "", Diagnostic(manifest.origin.path, f"{manifest.object_ref}: spec.path {path} {why}; not "
                                           "read (kubehop reads nothing outside the repository)",
                                           manifest.origin_at(key).line if key is not None else manifest.origin.line)
            continue
        yield manifest, source_path(folder, path.lstrip("/"), top), None


def source_path(folder: str, path: str, top: str) -> str:
    """The real folder `path` names, from the top of the source Flux reads: the repository's top, or,
    where that holds no such folder, the nearest folder above the object's own that does (an
    OCIRepository pushed from a subfolder with `flux push artifact --path=./kubernetes`), inside `top`."""
    wanted = os.path.realpath(os.path.join(top, path))
    if os.path.isdir(wanted):
        return wanted
    here = os.path.realpath(folder)
    while within(here, top) and here != top:
        if os.path.isdir(os.path.join(here, path)) and not leaves(path, here, top):
            return os.path.realpath(os.path.join(here, path))
        here = os.path.dirname(here)
    return wanted


def built_by_flux(paths: frozenset[str], reach: dict[str, Closure]) -> set[str]:
    """The real kustomization folders Flux builds, from the `paths` it is pointed at; `reach` holds what
    each kustomization the scan builds reaches (real folder -> its closure)."""
    children: dict[str, list[str]] = {}
    for found in reach.values():
        children.update(found.children)
    stack = [seed for path in paths for seed in _generated_resources(path)]
    built: set[str] = set()
    while stack:
        folder = stack.pop()
        if folder not in built:
            built.add(folder)
            stack.extend(children.get(folder, ()))
    return built


def _generated_resources(path: str) -> list[str]:
    """`path` when it holds a kustomization file, else the nearest folders below it that do."""
    if not os.path.isdir(path):
        return []
    if kustomization_file(path):
        return [path]
    found = []
    for folder, names, _ in os.walk(path):
        if folder != path and kustomization_file(folder):
            found.append(os.path.realpath(folder))
            names[:] = []
            continue
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
    return found
