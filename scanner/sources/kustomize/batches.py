"""Kustomizations built together, several to one kustomize run.

A GitOps tree holds hundreds of kustomizations, and nearly all of a small build's time is the start of
kustomize itself (kubectl's ~70 ms). Kustomizations that read no file in common are built in one run
of a wrapper listing them all: kustomize builds each resource folder as the kustomization it is and
lists their objects together, each naming its file (`config.kubernetes.io/origin`), so every object
goes back to the one kustomization of the batch that reads that file, as if built alone. Where that
cannot be told for sure (an object naming no file of the batch, a kustomization built with helm's
output, another load restrictor), each is built on its own, as before. A kustomization that names a
file that is not there is built alone from the start; when a run fails anyway, the kustomization
kustomize names is built alone and the rest together again, and a run that names none (two objects
with one id) is tried again in halves, down to one. What is reported is what a build of each alone
gives.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from scanner.sources.kustomize.origins import DOCUMENT_SEPARATOR
from scanner.sources.kustomize.refs import is_remote, kustomization_file, read_kustomization, references

MAX_BATCH = 24  # kustomizations in one run: a failed run is built again one by one
_ORIGIN = re.compile(r"^    config\.kubernetes\.io/origin: \|\n((?:      .*\n)+)", re.MULTILINE)
_ORIGIN_FILE = re.compile(r"^      (?:path|configuredIn): (\S+)$", re.MULTILINE)
_ACCUMULATING = re.compile(r"accumulating resources from '([^'\n]+)'")


@dataclass
class Batch:
    plans: list = field(default_factory=list)  # build._Plan, in the order given
    files: dict[str, int] = field(default_factory=dict)  # real path of a file read -> index of its plan


def batches(plans: Sequence, batchable: Callable[[object], bool]) -> tuple[list[Batch], list]:
    """(the batches, the plans built alone): a plan joins the first batch of its kind (load restrictor,
    how its folder is named) that reads none of its files."""
    open_batches: dict[tuple, list[Batch]] = {}
    alone = []
    for plan in plans:
        files = _files_read(plan) if batchable(plan) else None
        if not files:
            alone.append(plan)
            continue
        kind = (plan.unrestricted, os.path.isabs(plan.folder), plan.root)
        for batch in open_batches.setdefault(kind, []):
            if len(batch.plans) < MAX_BATCH and not any(path in batch.files for path in files):
                break
        else:
            batch = Batch()
            open_batches[kind].append(batch)
        batch.files.update(dict.fromkeys(files, len(batch.plans)))
        batch.plans.append(plan)
    found = [batch for kind in open_batches.values() for batch in kind]
    alone += [batch.plans[0] for batch in found if len(batch.plans) == 1]
    return [batch for batch in found if len(batch.plans) > 1], alone


def halves(batch: Batch) -> tuple[Batch, Batch]:
    """The batch in two, each keeping what its kustomizations read: a run that failed is tried again in
    halves, so one kustomization that does not build costs a few runs, not one per kustomization."""
    middle = len(batch.plans) // 2
    first, second = Batch(batch.plans[:middle]), Batch(batch.plans[middle:])
    for path, index in batch.files.items():
        if index < middle:
            first.files[path] = index
        else:
            second.files[path] = index - middle
    return first, second


def failing(stderr: str, batch: Batch, wrapper: str) -> int | None:
    """The index of the kustomization kustomize names as the one that failed the run ("accumulating
    resources from '../x'", its path from the wrapper), or None (two of them clash, or it names none):
    that one is built alone and the others together again, a run per kustomization that does not build."""
    named = _ACCUMULATING.search(stderr)
    if named is None:
        return None
    path = os.path.realpath(os.path.join(wrapper, named.group(1)))
    return next((index for index, plan in enumerate(batch.plans) if os.path.realpath(plan.folder) == path), None)


def without(batch: Batch, index: int) -> Batch:
    """The batch less its kustomization at `index`, each other keeping what it reads."""
    rest = Batch(batch.plans[:index] + batch.plans[index + 1:])
    rest.files = {path: owner - (owner > index) for path, owner in batch.files.items() if owner != index}
    return rest


def split(output: str, batch: Batch, wrapper: str) -> list[str] | None:
    """The batch's output as each of its kustomizations' own, in order; None where an object names no
    file of exactly one of them."""
    parts: list[list[str]] = [[] for _ in batch.plans]
    for document in DOCUMENT_SEPARATOR.split(output):
        if not document.strip():
            continue
        origin = _ORIGIN.search(document)
        named = _ORIGIN_FILE.findall(origin.group(1)) if origin else []
        if len(named) != 1:
            return None
        owner = batch.files.get(os.path.realpath(os.path.join(wrapper, named[0].strip("'\""))))
        if owner is None:
            return None
        parts[owner].append(document)
    # Each part laid out as kustomize prints a build of its own ("doc\n---\ndoc\n"): the lines that map
    # a built object back to its file are counted from its start.
    return ["---\n".join(document.lstrip("\n") for document in documents) for documents in parts]


def _files_read(plan) -> set[str] | None:
    """Real paths of the kustomization files of every folder the plan reaches and of every file they
    name; None when one cannot be read, or names a local path that is not there (its build fails, and
    in a batch it would fail the run: built alone, it costs one run instead of a run per halving)."""
    files: set[str] = set()
    for folder in plan.reach.folders:
        kustomization = read_kustomization(folder)
        path = kustomization_file(folder)
        if kustomization.problem or path is None or _empty(kustomization.document):
            return None
        files.add(os.path.realpath(path))
        for reference in references(kustomization.document):
            named = os.path.join(folder, reference.value.strip())
            if os.path.isfile(named):
                files.add(os.path.realpath(named))
            elif not os.path.isdir(named) and not is_remote(reference.value):
                return None
    return files


def _empty(document: dict) -> bool:
    """Nothing but apiVersion and kind (`resources:` left with every entry commented out): kustomize
    refuses to build it."""
    return not any(value for key, value in document.items() if key not in ("apiVersion", "kind"))
