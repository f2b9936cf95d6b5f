"""Which kustomizations Flux builds, so that kubehop builds them as Flux's kustomize-controller does.

Flux builds the folder a `Kustomization` object's `spec.path` names (from the top of its source: the
repository's, or the subfolder an OCI artifact was pushed from) with no load restrictor (a file
beside the kustomization's folder is fine) and no plugins. A path without a kustomization file gets
one generated, listing its manifests and, as resources, the nearest folders below it that hold a
kustomization file (fluxcd/pkg kustomize/kustomize_generator.go, `generateKustomization`). The load
restrictor holds for the whole build, so every kustomization such a build reaches is built without
it too. Nothing outside the repository is read either way (`kustomize_refs.py`).
"""

from __future__ import annotations

import os

from scanner.model import Manifest
from scanner.sources.files import SKIPPED_DIRS
from scanner.sources.kustomize_refs import Closure, kustomization_file, repository_root


def flux_paths(manifests: list[Manifest], scanned: list[str]) -> frozenset[str]:
    """Real paths of the folders Flux `Kustomization` objects in the tree point at (`spec.path`, from the
    top of the repository holding the object)."""
    found = set()
    for manifest in manifests:
        if manifest.kind != "Kustomization" or manifest.group != "kustomize.toolkit.fluxcd.io":
            continue
        spec = manifest.body.get("spec")
        path = spec.get("path") if isinstance(spec, dict) else None
        if not isinstance(path, str) or os.path.isabs(path) or "\0" in path:  # no folder has a NUL in its name
            continue
        found.add(_source_path(os.path.dirname(manifest.origin.path) or ".", path, scanned))
    return frozenset(found)


def _source_path(folder: str, path: str, scanned: list[str]) -> str:
    """The real folder `path` names, from the top of the source Flux reads: the repository's top, or,
    where that holds no such folder, the nearest folder above the object's own that does (an
    OCIRepository pushed from a subfolder with `flux push artifact --path=./kubernetes`)."""
    top = repository_root(folder, scanned)
    wanted = os.path.realpath(os.path.join(top, path))
    if os.path.isdir(wanted):
        return wanted
    here = os.path.realpath(folder)
    while here.startswith(os.path.join(top, "")):
        if os.path.isdir(os.path.join(here, path)):
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
