"""Plain files that no kustomization lists, in folders a kustomization governs: not what a build deploys.

A folder holding a kustomization file is built from that file, whoever builds it (a parent's
`resources`, a Flux Kustomization's `spec.path`, an Argo CD Application's path): kustomize applies what
it lists, and nothing else of the folder. A manifest file beside it (or in a folder below it that has
no kustomization of its own) that no kustomization of the tree lists is therefore not deployed by
GitOps: an app commented out of its list, a file left after a rename. Its findings are notices, not
blockers (scanner.policy), and its component pins are not the tree's (components/reading.py).

Kept apart, as deployed after all:
- a file in a folder below its kustomization that a Flux Kustomization or an Argo CD Application
  points at (or above it, up to the kustomization): Flux generates a kustomization of every manifest
  there, Argo CD applies a plain folder's files; when some Application's path cannot be read (a
  template), only files beside their kustomization file are judged; a folder without a kustomization
  that a kustomization names (kustomize refuses it: an input problem) counts as meant to be deployed;
- the files beside a kustomization that renders `helmCharts`: often its output, built by hand and
  applied another way (Talos inline manifests, a URL);
- every file under a kustomization that cannot be read (kustomize reports it).
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

from scanner.containment import nearest_folder, repository_root, within
from scanner.model import Manifest
from scanner.sources.files.walk import build_file
from scanner.sources import argo
from scanner.sources.kustomize import flux as kustomize_flux
from scanner.sources.kustomize.refs import is_remote, kustomization_file, read_kustomization, references


def unreferenced_files(manifests: Sequence[Manifest], folders: Iterable[str], scanned: list[str]) -> dict[str, str]:
    """Path of each plain file (as read) that no kustomization lists -> the kustomization file (as
    displayed) that governs its folder."""
    governing: dict[str, tuple[str, bool]] = {}  # real folder -> (its kustomization file shown, judged)
    listed: set[str] = set()
    for folder in folders:
        kustomization = read_kustomization(folder)
        real = os.path.realpath(folder)
        file = kustomization_file(folder)
        if file is None:
            continue
        governing[real] = (os.path.join(folder, os.path.basename(file)),
                           not kustomization.problem and not kustomization.document.get("helmCharts"))
        if kustomization.problem:
            continue
        for reference in references(kustomization.document):
            if not is_remote(reference.value):
                try:
                    listed.add(os.path.realpath(os.path.join(folder, reference.value.strip())))
                except (ValueError, OSError):  # a NUL in the name: names no file
                    continue
    if not governing:
        return {}
    pointed, all_known = _pointed_at(manifests, scanned)
    found: dict[str, str] = {}
    seen: set[str] = set()
    for manifest in manifests:
        path = manifest.origin.path
        if path in seen or manifest.line_map is not None or build_file(manifest.origin) or path == "-":
            continue
        seen.add(path)
        real = os.path.realpath(path)
        if real in listed:
            continue
        here = os.path.dirname(real)
        folder = nearest_folder(here, governing)
        if folder is None or not governing[folder][1]:
            continue
        if folder != here and (not all_known or any(within(here, p) and within(p, folder) and p != folder
                                                    for p in pointed | listed)):
            continue  # built whole by Flux or Argo CD (or named by a kustomization, which kustomize refuses)
        found[path] = governing[folder][0]
    return found


def _pointed_at(manifests: Sequence[Manifest], scanned: list[str]) -> tuple[set[str], bool]:
    """The real folders Flux Kustomizations and Argo CD Applications point at, and whether every
    Application's paths could be read."""
    paths, _ = kustomize_flux.flux_paths(list(manifests), scanned)
    pointed, all_known = set(paths), True
    for manifest in manifests:
        if manifest.group != argo.GROUP or manifest.kind not in ("Application", "ApplicationSet"):
            continue
        if manifest.kind == "ApplicationSet":
            all_known = False  # its generator decides the paths
            continue
        spec = manifest.body.get("spec")
        folder = os.path.dirname(manifest.origin.path) or "."
        top = repository_root(folder, scanned)
        for path, readable in argo.source_paths(spec if isinstance(spec, dict) else {}):
            real = argo.folder_of(path, folder, top) if readable else None
            if real is None:
                all_known = all_known and not readable
                continue
            pointed.add(real)
    return pointed, all_known
