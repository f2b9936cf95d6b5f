"""What a Flux Kustomization's build holds: the files whose objects it applies, read before any build.

The folder `spec.path` names is built from its kustomization file, or, without one, from the one Flux
generates: its `.yaml` and `.yml` files, and the nearest folders below it that hold a kustomization
file (fluxcd/pkg kustomize/kustomize_generator.go, `scanManifests`). A kustomization's objects come
from the files it and the kustomizations it reaches (bases, components) list as resources, and from
the patches they apply to them. A build that reaches a kustomization naming Flux's opt-out key
(`kustomize.toolkit.fluxcd.io/substitute`, in its annotations, labels, patches or transformers) may
switch substitution off for objects kubehop reads from their own files: such a build is not filled in;
one that patches a `postBuild` (a component adding a substituteFrom to every Flux Kustomization it
builds: budimanjojo/home-cluster) leaves the variables of those Kustomizations unknown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from scanner.containment import within
from scanner.sources.files.walk import SKIPPED_DIRS, read_file
from scanner.sources.kustomize.refs import closure, kustomization_file, read_kustomization, references

OPT_OUT = "kustomize.toolkit.fluxcd.io/substitute"
_GENERATED_SUFFIXES = (".yaml", ".yml")
_OBJECT_FIELDS = frozenset({"resources", "bases", "components", "patches.path", "patchesStrategicMerge",
                            "patchesJson6902.path"})
_PATCH_FIELDS = frozenset({"patches.path", "patchesStrategicMerge", "patchesJson6902.path"})
# What may put an annotation or label on the objects a kustomization takes from files (generatorOptions
# and a generator's options only touch the objects it generates, which kubehop reads from the build).
_TRANSFORMING = ("commonAnnotations", "commonLabels", "labels", "patches", "patchesStrategicMerge",
                 "patchesJson6902", "transformers", "replacements")


@dataclass
class Build:
    """What a Flux Kustomization's build holds, and what in it kubehop cannot read for sure."""

    files: set[str] = field(default_factory=set)  # real paths of the files whose objects it applies
    folders: set[str] = field(default_factory=set)  # real kustomization folders it builds
    opt_out: bool = False  # a kustomization it reaches names the opt-out key
    patches_post_build: bool = False  # a kustomization it reaches patches some object's `postBuild`


def build_of(path: str, top: str) -> Build:
    """What the build of the real folder `path` holds (nothing outside the repository `top`)."""
    found = Build()
    if not os.path.isdir(path) or not within(path, top):
        return found
    seeds = [path] if kustomization_file(path) else _generated(path, found)
    for seed in seeds:
        reached = closure(seed, top)
        for folder in reached.folders:
            real = os.path.realpath(folder)
            found.folders.add(real)
            _listed(folder, top, found)
    return found


def _generated(path: str, found: Build) -> list[str]:
    """The files Flux's generated kustomization lists (into `found`), and the kustomization folders below."""
    seeds = []
    for folder, names, files in os.walk(path):
        if folder != path and kustomization_file(folder):
            seeds.append(folder)
            names[:] = []
            continue
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS)
        found.files.update(os.path.realpath(os.path.join(folder, f)) for f in files if f.endswith(_GENERATED_SUFFIXES))
    return seeds


def _listed(folder: str, top: str, found: Build) -> None:
    kustomization = read_kustomization(folder)
    if kustomization.problem:
        return
    if any(OPT_OUT in repr(kustomization.document.get(name)) for name in _TRANSFORMING):
        found.opt_out = True
    if any("postBuild" in repr(kustomization.document.get(name)) for name in _TRANSFORMING):
        found.patches_post_build = True  # a Flux Kustomization it builds is not applied as its file says
    for reference in references(kustomization.document):
        if reference.field not in _OBJECT_FIELDS:
            continue
        named = os.path.realpath(os.path.join(folder, reference.value.strip()))
        if within(named, top) and os.path.isfile(named):
            found.files.add(named)
            if reference.field in _PATCH_FIELDS:
                text, problem = read_file(named)
                found.opt_out |= problem is None and OPT_OUT in text
                found.patches_post_build |= problem is None and "postBuild" in text
