"""The clusters a repository declares, and what each one deploys.

A fleet repository keeps several clusters side by side (`clusters/dev`, `clusters/prod`, sharing bases
through their own overlays). A cluster is an entry point the repository declares:

- `clusters:` in the configuration (name, paths, optionally `from`): the repository's own word;
- Flux: a folder Flux is bootstrapped into (it holds `flux-system/gotk-components.yaml` or
  `gotk-sync.yaml`, as `flux bootstrap` writes them); the cluster deploys that folder, the folder its
  `flux-system` Kustomization syncs, and every folder the Flux Kustomizations its builds deploy point
  at, in turn (those of this repository's own source: another GitRepository is another repository; a
  Kustomization in a file no kustomization lists deploys nothing). The walk is the one that tells which
  files no root reaches (scanner.sources.reach), taking here only what a cluster certainly deploys.

With fewer than two, the tree is one cluster, as before. Each cluster is then analysed on its own
(scanner.fleet): its current minor from its own pins, its own components.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

from scanner.containment import within
from scanner.model import Manifest
from scanner.versions import Minor


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


def flux_clusters(manifests: Sequence[Manifest], scanned: Sequence[str],
                  unreferenced: Iterable[str] = ()) -> list[Cluster]:
    """The clusters Flux is bootstrapped into under `scanned`, each with the folders it deploys (the
    builds of its bootstrap folder, scanner.sources.reach; `unreferenced`: files no kustomization lists,
    whose Kustomizations deploy nothing)."""
    if not scanned or "-" in scanned or not any(os.path.isdir(p) for p in scanned):
        return []  # a bootstrap folder is looked for under the folders scanned (roots.bootstrap_folders)
    from scanner.sources.reach import roots
    from scanner.sources.reach.graph import Tree, Walk

    folders = roots.bootstrap_folders(scanned)
    if not folders:  # no cluster is bootstrapped here: the tree's objects need not be looked at
        return []
    tree = Tree(manifests, scanned)
    top, dead = tree.top, {os.path.realpath(p) for p in unreferenced}
    tree.by_file = {file: found for file, found in tree.by_file.items() if file not in dead}
    syncs = [m for _, m in tree.pointers() if m.group == roots.FLUX_KUSTOMIZE and roots.is_sync(m)]
    entries: dict[str, tuple[str, set[str]]] = {}  # name -> (how it was found, real folders it starts from)
    for folder in folders:
        real = os.path.realpath(folder)
        starts = {real}
        for sync in syncs:  # the bootstrap's own sync may point elsewhere: the same cluster
            if within(os.path.realpath(sync.origin.path), real):
                path = roots.kustomization_target(sync, top, tree.artifacts, tree.sources).folder
                if path is not None:
                    starts.add(path)
        entries[real] = (f"the Flux bootstrap folder {shown(folder, top)}", starts)
    clusters, seen = [], set()
    for entry, (declared_by, starts) in sorted(entries.items()):
        walk = Walk(tree, may=False)  # what it certainly deploys
        for start in sorted(starts):
            walk.start("folder", start)
        reached = walk.run().pointed
        # A folder inside another reached folder is read with it.
        kept = tuple(shown(f, top) for f in reached if not any(f != other and within(f, other) for other in reached))
        if kept not in seen:
            seen.add(kept)
            clusters.append(Cluster(os.path.basename(entry), kept, declared_by))
    return named_apart(clusters)


def named_apart(clusters: list[Cluster]) -> list[Cluster]:
    """Two entry folders of one name (`a/prod`, `b/prod`) are named by their paths."""
    names = [c.name for c in clusters]
    return [Cluster(c.paths[0] if names.count(c.name) > 1 else c.name, c.paths, c.declared_by, c.current)
            for c in clusters]


def shown(path: str, top: str) -> str:
    """A real path as the scan names files: relative to the working folder when inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
