"""The files the tree's kustomizations apply as patches: partial objects, not objects of their own.

A file named under `patches[].path`, `patchesStrategicMerge` or `patchesJson6902[].path` holds only
the fields it changes; kustomize applies it to an object of a base, and the built object is what the
cluster gets (and what the checks judge in full). Read as a plain file, such an object is marked
`patch`: a check of completeness (a required field) leaves it to the build. Its apiVersion still
counts: a patch at a removed version no longer applies. A file that a kustomization also lists as a
resource is an object of its own, not marked.
"""

from __future__ import annotations

import os
from typing import Iterable

from scanner.model import Manifest
from scanner.sources.kustomize.refs import read_kustomization, references

_PATCH_FIELDS = frozenset({"patches.path", "patchesStrategicMerge", "patchesJson6902.path"})


def patch_files(folders: Iterable[str]) -> frozenset[str]:
    """The real paths of the files that the kustomizations in `folders` apply as patches only."""
    patches: set[str] = set()
    resources: set[str] = set()
    for folder in folders:
        kustomization = read_kustomization(folder)
        if kustomization.problem:
            continue  # the Kustomize source reports it
        for reference in references(kustomization.document):
            named = _real(folder, reference.value)
            if named is None:
                continue
            (patches if reference.field in _PATCH_FIELDS else resources).add(named)
    return frozenset(patches - resources)


def mark_patches(manifests: Iterable[Manifest], folders: Iterable[str]) -> None:
    """Mark the objects read from a file the kustomizations in `folders` apply as a patch."""
    files = patch_files(folders)
    if not files:
        return
    real: dict[str, str | None] = {}  # a file's objects share its path
    for manifest in manifests:
        path = manifest.origin.path
        if path not in real:
            real[path] = _real("", path)
        if manifest.line_map is None and real[path] in files:
            manifest.patch = True


def _real(folder: str, value: str) -> str | None:
    try:
        return os.path.realpath(os.path.join(folder, value.strip()))
    except (ValueError, OSError):  # a NUL in the name, a path the system refuses: names no file
        return None

