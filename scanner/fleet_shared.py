"""Which other clusters of a fleet deploy a file one cluster's change set edits.

A window's change set is made for one cluster (`plan --cluster NAME --window N`); an edit to a shared
base moves every cluster that deploys it, on its next reconcile. A cluster deploys the files under its
paths and those of every kustomization it reaches from them (its bases, its components): read from
the kustomization files alone, nothing rendered.
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

from scanner.clusters import Cluster
from scanner.containment import within


def deployed_elsewhere(files: Iterable[str], others: Sequence[Cluster], root: str) -> dict[str, tuple[str, ...]]:
    """file -> the names of the clusters among `others` that deploy it too; files none does are left out."""
    folders = {cluster.name: deployed_folders(cluster.paths, root) for cluster in others}
    found = {}
    for path in files:
        real = os.path.realpath(path)
        names = tuple(name for name, reached in folders.items() if any(within(real, f) for f in reached))
        if names:
            found[path] = names
    return found


def deployed_folders(paths: Sequence[str], root: str) -> list[str]:
    """The real folders a cluster's paths hold, with every kustomization folder reached from them."""
    from scanner.sources.files.walk import KUSTOMIZATION_FILES, SKIPPED_DIRS
    from scanner.sources.kustomize.refs import closure

    root = os.path.realpath(root)  # closure's bound is a real path
    reached: dict[str, None] = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        reached[os.path.realpath(path)] = None
        if not os.path.isdir(path):
            continue
        for folder, names, files in os.walk(path):
            names[:] = sorted(n for n in names if n not in SKIPPED_DIRS and not n.startswith("."))
            if any(f in files for f in KUSTOMIZATION_FILES):
                for used in closure(folder, root).folders:
                    reached[os.path.realpath(used)] = None
    return list(reached)
