"""The kustomize source's step before anything renders (sources/registry.py), with nothing of the builds
imported: the plain files' objects that its kustomizations apply as patches are marked (patches.py),
the plain files none of them lists are named (unreferenced.py), so are those no root of the tree reaches
(sources/reach/unreached.py), and each object is given the
namespace its builds put it in (namespaces.py), so that the Helm source renders a Flux HelmRelease in
the namespace it is deployed in."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from scanner.containment import repository_root
from scanner.sources.kustomize import flux as kustomize_flux, namespaces
from scanner.sources.kustomize.patches import mark_patches
from scanner.sources.kustomize.unreferenced import unreferenced_files

if TYPE_CHECKING:
    from scanner.sources.files.walk import KustomizeFolder
    from scanner.sources.registry import Reading
    from scanner.sources.scan_input import ScanInput


def prepare(folders: list["KustomizeFolder"], so_far: "ScanInput", reading: "Reading") -> None:
    paths = [folder.path for folder in folders]
    mark_patches(so_far.manifests, paths)
    so_far.unreferenced.update(unreferenced_files(so_far.manifests, paths, reading.scanned))
    # The whole repository's reading may have said them already (scanner.fleet); files named one by one, with
    # no kustomization among them, are judged as they are, so the walk of the roots is not even imported.
    if reading.options.not_deployed is None and (paths or any(os.path.isdir(p) for p in reading.scanned)):
        from scanner.sources.reach.unreached import unreached_files

        so_far.unreached.update(unreached_files(so_far.manifests, reading.scanned, so_far.unreferenced,
                                                reading.options.named_files, paths))
    targets = kustomize_flux.target_namespaces(so_far.manifests, reading.scanned)
    namespaces.assign(so_far.manifests, paths, targets, lambda folder: repository_root(folder, reading.scanned))
