"""The clusters a repository declares, and what each one deploys.

A fleet repository keeps several clusters side by side (`clusters/dev`, `clusters/prod`, sharing bases
through their own overlays). A cluster is an entry point the repository declares:

- `clusters:` in the configuration (name, paths, optionally `from`): the repository's own word;
- Flux: a folder Flux is bootstrapped into (it holds `flux-system/gotk-components.yaml` or
  `gotk-sync.yaml`, as `flux bootstrap` writes them); the cluster deploys that folder, the folder its
  `flux-system` Kustomization syncs, and every folder the Flux Kustomizations it reaches point at, in
  turn (those of this repository's own source: another GitRepository is another repository).

With fewer than two, the tree is one cluster, as before. Each cluster is then analysed on its own
(scanner.fleet): its current minor from its own pins, its own components.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Iterable, Sequence

from scanner.containment import leaves, repository_root, within
from scanner.model import Manifest
from scanner.versions import Minor

_FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io"
_FLUX_BOOTSTRAP_FILES = ("gotk-components.yaml", "gotk-sync.yaml")
_ARTIFACTS = "source.extensions.fluxcd.io"


@dataclass(frozen=True)
class Cluster:
    """A cluster of the repository: its name, the paths it deploys and what declares it."""

    name: str
    paths: tuple[str, ...]  # the folders and files it deploys, as the scan names them
    declared_by: str  # for a person: "the Flux bootstrap folder clusters/prod", ".kubehop.yaml clusters[1]"
    current: Minor | None = None  # the configuration's `from` for it


def configured_clusters(entries: Sequence[dict], folder: str = ".") -> list[Cluster]:
    """`clusters:` of the configuration (validated by its schema); paths relative to `folder`."""
    from scanner.versions import parse_minor

    return [Cluster(str(entry["name"]), tuple(os.path.normpath(os.path.join(folder, p)) for p in entry["paths"]),
                    f"clusters[{i}] of the configuration",
                    parse_minor(entry["from"]) if entry.get("from") else None)
            for i, entry in enumerate(entries)]


def flux_clusters(manifests: Sequence[Manifest], scanned: Sequence[str]) -> list[Cluster]:
    """The clusters Flux is bootstrapped into under `scanned`, each with the folders it deploys."""
    if not scanned or "-" in scanned:
        return []
    top = repository_root(scanned[0], list(scanned))
    kustomizations = [m for m in manifests if m.group == _FLUX_KUSTOMIZE and m.kind == "Kustomization"]
    artifacts = [m for m in manifests if m.group == _ARTIFACTS and m.kind == "ArtifactGenerator"]
    syncs = [k for k in kustomizations if k.name == "flux-system" and k.namespace in (None, "flux-system")]
    entries: dict[str, tuple[str, set[str]]] = {}  # name -> (how it was found, real folders it starts from)
    for folder in _bootstrap_folders(scanned):
        real = os.path.realpath(folder)
        starts = {real}
        for sync in syncs:  # the bootstrap's own sync may point elsewhere: the same cluster
            if within(os.path.realpath(sync.origin.path), real):
                path = _path_of(sync, top, artifacts)
                if path and os.path.isdir(path):
                    starts.add(path)
        entries[real] = (f"the Flux bootstrap folder {shown(folder, top)}", starts)
    clusters, seen = [], set()
    for entry, (declared_by, starts) in sorted(entries.items()):
        reached = tuple(shown(p, top) for p in _reach(sorted(starts), kustomizations, artifacts, top))
        if reached not in seen:
            seen.add(reached)
            clusters.append(Cluster(os.path.basename(entry), reached, declared_by))
    return named_apart(clusters)


def _bootstrap_folders(scanned: Iterable[str]) -> list[str]:
    """Folders holding `flux-system/gotk-*.yaml` (what `flux bootstrap` writes), under the scanned paths."""
    from scanner.sources.files.walk import SKIPPED_DIRS

    found = []
    for path in scanned:
        if not os.path.isdir(path):
            continue
        for folder, names, files in os.walk(path):
            names[:] = sorted(n for n in names if n not in SKIPPED_DIRS and not n.startswith("."))
            if os.path.basename(folder) == "flux-system" and any(f in files for f in _FLUX_BOOTSTRAP_FILES):
                found.append(os.path.dirname(folder))
                names[:] = []
    return found


def _reach(starts: list[str], kustomizations: Sequence[Manifest], artifacts: Sequence[Manifest],
           top: str) -> list[str]:
    """`starts` and every folder the Flux Kustomizations read from the folders reached point at, in turn."""
    reached, stack = [], list(starts)
    files = [(kustomization, os.path.realpath(kustomization.origin.path)) for kustomization in kustomizations]
    while stack:
        folder = stack.pop(0)
        if folder in reached:
            continue
        reached.append(folder)
        for kustomization, file in files:
            if within(file, folder):
                path = _path_of(kustomization, top, artifacts)
                if path and os.path.isdir(path) and path not in reached:
                    stack.append(path)
    # A folder inside another reached folder is read with it.
    return [f for f in reached if not any(f != other and within(f, other) for other in reached)]


def _path_of(kustomization: Manifest, top: str, artifacts: Sequence[Manifest]) -> str | None:
    """The real folder a Flux Kustomization's spec.path names in this repository, or None."""
    spec = kustomization.body.get("spec")
    path = spec.get("path") if isinstance(spec, dict) else None
    if not isinstance(path, str):
        return None
    source = spec.get("sourceRef") if isinstance(spec.get("sourceRef"), dict) else {}
    if not _this_repository(source):
        return None  # a tenant's repository, another source: not a folder of this one
    path = posixpath.normpath(path.lstrip("/")) if path.strip("./") else "."
    if source.get("kind") == "ExternalArtifact":
        path = _artifact_origin(str(source.get("name")), path, artifacts) or path
    if leaves(path, top, top):
        return None
    from scanner.sources.kustomize.flux import source_path  # as Flux reads it: from the source's top

    return source_path(os.path.dirname(kustomization.origin.path) or ".", path, top)


def _this_repository(source: dict) -> bool:
    """Does a Flux sourceRef name the repository Flux was bootstrapped from (its `flux-system` source,
    or an artifact generated from it)? Another name is another repository (a tenant's, a chart's)."""
    if source.get("kind") == "ExternalArtifact":
        return True
    return source.get("kind") in ("GitRepository", "OCIRepository") and source.get("name") == "flux-system" \
        and source.get("namespace") in (None, "flux-system")


def _artifact_origin(name: str, path: str, artifacts: Sequence[Manifest]) -> str | None:
    """Where in the repository a path of an ArtifactGenerator's artifact comes from: `copy` entries map
    `@source/FROM/**` to `@artifact/TO/`."""
    for generator in artifacts:
        spec = generator.body.get("spec") if isinstance(generator.body.get("spec"), dict) else {}
        for artifact in spec.get("artifacts") or []:
            if not isinstance(artifact, dict) or artifact.get("name") != name:
                continue
            for copy in artifact.get("copy") or []:
                if not isinstance(copy, dict):
                    continue
                source, target = str(copy.get("from", "")), str(copy.get("to", ""))
                origin = source.partition("/")[2].removesuffix("**").rstrip("/")
                into = target.removeprefix("@artifact").strip("/")
                if not source.startswith("@") or not origin:
                    continue
                if path == into or path.startswith(f"{into}/") or not into:
                    rest = path[len(into):].lstrip("/") if into else path
                    return posixpath.normpath(posixpath.join(origin, rest))
    return None


def named_apart(clusters: list[Cluster]) -> list[Cluster]:
    """Two entry folders of one name (`a/prod`, `b/prod`) are named by their paths."""
    names = [c.name for c in clusters]
    return [Cluster(c.paths[0] if names.count(c.name) > 1 else c.name, c.paths, c.declared_by, c.current)
            for c in clusters]


def shown(path: str, top: str) -> str:
    """A real path as the scan names files: relative to the working folder when inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
