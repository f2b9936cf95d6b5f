"""Plain files that no root of the tree reaches: not deployed by GitOps.

The roots are what is applied from outside the tree's own builds:
- known ones: a folder Flux is bootstrapped into (and the folder its sync names), a `flux-system`
  Kustomization, a FluxInstance, a Flux Kustomization that builds its own file (applied once by hand,
  then managing itself);
- and, so that nothing applied by hand is missed, every other Flux Kustomization, FluxInstance, Argo CD
  Application or ApplicationSet that nothing reaches, unless it is itself not deployed:
  in a file no kustomization lists (kustomize/unreferenced.py), in a folder a known root's builds read
  without reaching it, or in an archive folder (`archive`, `.archive`, `_archive`, `archived`) nothing
  reaches, or a template (its name holds a variable: the API server takes no such name as written).

The tree is judged only when it says how it is deployed: a known root, a Flux Kustomization of the
bootstrap's source (Flux is bootstrapped from this repository, whatever applied the sync), or an Argo
CD Application; a tree without (plain folders, one chart, a Flux tree bootstrapped by Terraform with a
source of its own) is read as before. A file is then not deployed when no build reaches it and it lies
in a folder those builds read (its folder's kustomization, or one above it, is built without it: only
the builds deploy there; a file elsewhere -- a bootstrap folder applied by hand, Talos' inline
manifests -- may be applied another way, and is not judged), or in an archive folder nothing reaches.
Never judged: a file given on the command line by name, a file beside a kustomization that renders
`helmCharts` or cannot be read, and every file of a tree whose reach cannot be known (a chart of the
tree whose templates make Applications or Kustomizations: graph.py `opaque`).
"""

from __future__ import annotations

import os
from typing import Sequence

from scanner.containment import within
from scanner.model import Manifest
from scanner.paths import repo_path
from scanner.sources.reach import roots
from scanner.sources.reach.graph import Reach, Tree, Walk, build_of, pointer_kind

ARCHIVE_NAMES = frozenset({"archive", ".archive", "_archive", "archived", ".archived", "_archived"})
WHY = "no Flux Kustomization or Argo CD Application of the tree reaches this folder"


def unreached_files(manifests: Sequence[Manifest], scanned: Sequence[str], unreferenced: dict[str, str],
                    named: Sequence[str] = (), folders: Sequence[str] = ()) -> dict[str, str]:
    """Path of each plain file (as read) that no root of the tree reaches -> why, in words; and of the
    kustomization file of each of `folders` (the kustomizations the walk met) none reaches, whose pins
    (a remote base's ref) are not the tree's either. `named`: real paths of the files the user named,
    never judged."""
    if not scanned or "-" in scanned:
        return {}
    tree = Tree(manifests, scanned)
    dead = {os.path.realpath(p) for p in unreferenced}
    known = _known_roots(tree, dead)
    if not known and not _says_how_it_is_deployed(tree, dead):
        return {}
    archives = _archives(tree.top)
    blocked = set(archives)
    while True:
        reach, dead_pointers = _reach(tree, known, dead, blocked)
        alive = {a for a in blocked if _touches(reach, a)}
        if not alive:
            break
        blocked -= alive
    if reach.opaque:
        return {}
    given = {*named, *(os.path.realpath(p) for p in scanned if os.path.isfile(p))}
    areas = reach.areas()
    found: dict[str, str] = {}
    files = [m.origin.path for m in manifests if m.line_map is None and m.origin.path != "-" and not _build_file(m)]
    for path in [*files, *filter(None, map(_kustomization_file, folders))]:
        if path in found or path in unreferenced:
            continue
        real = os.path.realpath(path)
        if real in given or reach.deploys(real) or os.path.dirname(real) in reach.built or _kept(real, tree.top):
            continue
        archive = next((a for a in blocked if within(real, a)), None)
        if archive is not None:
            found[path] = f"{WHY} (it lies in {repo_path(archive)}, an archive folder nothing reaches)"
        elif reach.governs(real, areas):
            found[path] = f"{WHY} ({_governed(real, areas, dead_pointers)})"
    return found


def _kustomization_file(folder: str) -> str | None:
    from scanner.sources.kustomize.refs import kustomization_file

    found = kustomization_file(folder)
    return os.path.join(folder, os.path.basename(found)) if found else None


def _build_file(manifest: Manifest) -> bool:
    from scanner.sources.files.walk import build_file

    return build_file(manifest.origin)


def _known_roots(tree: Tree, dead: set[str]) -> list[tuple[str, str]]:
    """The starts of the known roots: ("folder", real) and ("file", real) (a file applied as it is)."""
    starts: list[tuple[str, str]] = []
    for folder in roots.bootstrap_folders([tree.top]):
        starts.append(("folder", os.path.realpath(folder)))
    for file, manifest in tree.pointers():
        if file in dead:
            continue
        kind = pointer_kind(manifest)
        if kind == "instance" or (kind == "flux" and roots.is_sync(manifest)):
            starts.append(("file", file))
        elif kind == "flux" and tree.sources.kind_of(manifest) != roots.OTHER:
            target = roots.kustomization_target(manifest, tree.top, tree.artifacts, tree.sources)
            # (the repository's top builds everything: that says nothing of the source)
            if target.folder not in (None, tree.top) and file in build_of(target.folder, tree.top).files:
                starts.append(("file", file))  # it builds itself: applied once, then managing itself
                tree.sources.learn_source_of(manifest)
    return starts


def _says_how_it_is_deployed(tree: Tree, dead: set[str]) -> bool:
    """Does the tree hold a Flux Kustomization of the bootstrap's source, or an Argo CD Application?"""
    for file, manifest in tree.pointers():
        kind = pointer_kind(manifest)
        if file in dead:
            continue
        if kind == "argo" or (kind == "flux" and tree.sources.kind_of(manifest) == roots.THIS):
            return True
    return False


def _reach(tree: Tree, known: list[tuple[str, str]], dead: set[str],
           blocked: set[str]) -> tuple[Reach, dict[str, str]]:
    """The reach of every root, and the folders pointed at by objects that are not deployed themselves
    (real folder -> their file)."""
    walk = Walk(tree)
    for kind, value in known:
        walk.start(kind, value)
    known_area = walk.run().areas()
    dead_pointers: dict[str, str] = {}
    for file, manifest in sorted(tree.pointers(), key=lambda p: p[0]):
        if file in walk.reach.files:
            continue
        if pointer_kind(manifest) == "values":
            continue  # a HelmRelease is deployed by what reaches it, not applied on its own
        if roots.has_placeholder(str(manifest.name)):
            continue  # a template (`name: apps-${APP}`): the API server takes no such name as written
        if file in dead or _under(file, known_area) or any(within(file, a) for a in blocked):
            if pointer_kind(manifest) == "flux":
                target = roots.kustomization_target(manifest, tree.top, tree.artifacts, tree.sources)
                if target.folder is not None:
                    dead_pointers.setdefault(target.folder, file)
            continue
        walk.start("file", file)  # maybe applied by hand: a root
    return walk.run(), dead_pointers


def _under(real: str, areas: frozenset[str]) -> bool:
    here = os.path.dirname(real)
    while here not in areas:
        if os.path.dirname(here) == here:
            return False
        here = os.path.dirname(here)
    return True


def _touches(reach: Reach, folder: str) -> bool:
    """Does the reach deploy anything in `folder`?"""
    return any(within(f, folder) for f in reach.files) or any(within(f, folder) for f in reach.pointed)


def _archives(top: str) -> list[str]:
    """The outermost archive folders of the tree."""
    from scanner.sources.files.walk import SKIPPED_DIRS

    found = []
    for folder, names, _ in os.walk(top):
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
        for name in list(names):
            if name.lower() in ARCHIVE_NAMES:
                found.append(os.path.realpath(os.path.join(folder, name)))
                names.remove(name)
    return found


def _kept(real: str, top: str) -> bool:
    """Is the file beside (or below) a kustomization that renders a Helm chart or cannot be read (its
    output may be applied another way; what it lists is unknown)?"""
    from scanner.sources.kustomize.refs import kustomization_file, read_kustomization

    here = os.path.dirname(real)
    while within(here, top):
        if kustomization_file(here):
            kustomization = read_kustomization(here)
            return bool(kustomization.problem or kustomization.document.get("helmCharts")
                        or kustomization.document.get("helmChartInflationGenerator"))
        if here == top:
            return False
        here = os.path.dirname(here)
    return False


def _governed(real: str, areas: frozenset[str], dead_pointers: dict[str, str]) -> str:
    """Why a file in a folder the builds read is not deployed, in words."""
    here, between = os.path.dirname(real), []
    while here not in areas and os.path.dirname(here) != here:
        between.append(here)
        here = os.path.dirname(here)
    said = f"{repo_path(here)} is built without it"
    pointer = next((dead_pointers[f] for f in between if f in dead_pointers), None)
    if pointer is not None:
        said += f"; {repo_path(pointer)}, whose Flux Kustomization points here, is not deployed itself"
    return said
