"""Which Flux Kustomizations build each file of the tree, and what their post-build substitution sets:
read from the plain files before any of them is read for the checks, so that each object is checked
as Flux applies it.

A Kustomization's variables (kustomize-controller, LoadVariables and SubstituteVariables): the
`substituteFrom` ConfigMaps and Secrets of its own namespace in order, a later one's value winning,
then the inline `substitute` map over them all. A reference the tree does not hold may be in the
cluster: what it may set is unknown, and said once. Substitution runs when at least one variable is
set (`substituteStrategy: Always`: whatever): a Kustomization whose sources kubehop cannot all read
may set none, so what it builds is not filled in. A Kustomization built by another is itself filled in
by that one first (a child's `substitute: {CLUSTER: ${CLUSTER}}`), a few levels deep.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.containment import leaves, repository_root
from scanner.model import Diagnostic, Manifest
from scanner.nodes import mapping_get, scalar, value_at
from scanner.paths import where
from scanner.sources.kustomize.flux import source_path
from scanner.sources.kustomize.refs import read_kustomization
from scanner.sources.postbuild.builds import Build, build_of
from scanner.sources.postbuild.envsubst import UNKNOWN, UNSET, Set, Value
from scanner.sources.postbuild.fill import fill_object
from scanner.sources.postbuild.patches import Unsure as PatchUnsure, patched
from scanner.sources.postbuild.read import Found, objects, patch_bodies
from scanner.sources.postbuild.variables import VARIABLE_NAME, Source, read_generators, read_inline, read_object

_ROUNDS = 4  # Kustomizations filled in by those that build them, this many levels deep


@dataclass
class Builder:
    """A Flux Kustomization as the build of the files it holds."""

    what: str  # "Flux Kustomization flux-system/apps"
    runs: bool | None  # its substitution runs (False: the objects are applied as written; None: cannot tell)
    at: str = ""  # its file and line, as notices show them
    why_unsure: str = ""
    inline: dict[str, Value] = field(default_factory=dict)
    chain: list[list[Source] | None] = field(default_factory=list)  # substituteFrom; None: not in the tree

    def lookup(self, name: str) -> Value:
        if name in self.inline:
            return self.inline[name]
        for sources in reversed(self.chain):
            if sources is None:
                return UNKNOWN
            values = [source.values.get(name) for source in sources]
            if all(value is None for value in values):
                continue
            first = values[0]
            if any(not isinstance(v, Set) or not isinstance(first, Set) or v.text != first.text for v in values):
                return UNKNOWN  # unreadable, or two objects of that name set it differently
            return first
        return UNSET


@dataclass
class Plan:
    """Which Flux Kustomizations build each file and folder of a scan (what the sources fill in with)."""

    files: dict[str, tuple[Builder, ...]]  # real path of a file -> the builds that hold it
    folders: dict[str, tuple[Builder, ...]]  # real kustomization folder -> the builds that build it
    diagnostics: list[Diagnostic]

    def for_file(self, path: str) -> tuple[Builder, ...]:
        return self.files.get(os.path.realpath(path), ())

    def for_folder(self, folder: str) -> tuple[Builder, ...]:
        return self.folders.get(os.path.realpath(folder), ())


@dataclass
class _Flux:
    """A Flux Kustomization of the tree: as written, and as the Kustomizations that build it apply it."""

    raw: Manifest
    file: str  # real path
    node: Any = None  # filled in
    filled: dict = field(default_factory=dict)
    build: Build = field(default_factory=Build)
    path: str | None = None
    unsure: str = ""  # why its variables cannot be told (a patch of its parent's kubehop does not read)


def make_plan(found: Found, folders: Sequence[str], scanned: list[str]) -> Plan:
    """The plan for the Flux Kustomizations of the plain files (read.py) and the kustomization `folders`."""
    fluxes = [_Flux(manifest, path, manifest.node) for manifest, path in found.kustomizations]
    diagnostics: list[Diagnostic] = []
    wanted = {scalar(mapping_get(item, "name")) for f in fluxes
              for node in (f.raw.node, *patch_bodies(f.raw.node)) for item in _references(node)}
    sources = _sources(found, folders, wanted - {None}, scanned)
    builders: dict[int, Builder] = {}
    for _ in range(_ROUNDS):
        for flux in fluxes:
            path = _path_of(flux, scanned)
            if path != flux.path:
                flux.path, flux.build = path, build_of(path, repository_root(path, scanned)) if path else Build()
        local = _local(fluxes)
        notes: list[Diagnostic] = []
        builders = {id(f): _builder(f, sources, notes) for f in local}
        holding = _holding(local)
        changed = False
        for flux in fluxes:
            unsure = flux.unsure
            node, filled = _applied(flux, [f for f in holding.get(flux.file, ()) if f is not flux], builders)
            changed |= (node is not flux.node and not _same(node, flux.node)) or flux.unsure != unsure
            flux.node, flux.filled = node, filled
        if not changed:
            break
    diagnostics.extend(dict.fromkeys(notes))  # a parent's patch said once, not for each child
    holding = _holding(local)
    by_folder: dict[str, list[_Flux]] = {}
    for flux in local:
        for folder in flux.build.folders:
            by_folder.setdefault(folder, []).append(flux)
    return Plan(_substituting(holding, builders), _substituting(by_folder, builders), diagnostics)


def _substituting(held: dict[str, list[_Flux]], builders: dict[int, Builder]) -> dict[str, tuple[Builder, ...]]:
    """The builds of each path, where one of them may substitute something (the others change nothing)."""
    found = {path: tuple(builders[id(f)] for f in fluxes) for path, fluxes in held.items()}
    return {path: by for path, by in found.items() if any(b.runs is not False for b in by)}


def _applied(flux: _Flux, parents: list[_Flux], builders: dict[int, Builder]) -> tuple[Any, dict]:
    """The Kustomization as those that apply it do: their patches to its postBuild, then their variables."""
    flux.unsure = ""
    try:
        base, origins = patched(flux.raw.node, [(parent.node, parent.raw.origin.path) for parent in parents])
    except PatchUnsure as err:
        base, origins, flux.unsure = flux.raw.node, {}, str(err)
    if any(parent.build.patches_post_build for parent in parents):
        flux.unsure = "a kustomization that builds it may patch its postBuild"
    node, filled = fill_object(base, [builders[id(p)] for p in parents if id(p) in builders], flux.raw.origin.path,
                               [], origin_of=lambda scalar_node: origins.get(id(scalar_node)))
    return (node, {**origins, **filled}) if filled else (base, origins)


def _sources(read: Found, folders: Sequence[str], wanted: set[str], scanned: list[str]) -> list[Source]:
    """The ConfigMaps and Secrets of the tree that a substituteFrom names: objects, and generated ones."""
    found = []
    for path in read.candidates:
        text, problem = read.kept.read(path)
        if problem is None and any(name in text for name in wanted):
            found.extend(s for s in map(read_object, objects(text, path, read.kept))
                         if s is not None and s.name in wanted)
    for folder in folders:
        kustomization = read_kustomization(folder)
        if kustomization.problem or not kustomization.path:
            continue
        if any(isinstance(kustomization.document.get(f), list) for f in ("configMapGenerator", "secretGenerator")):
            top = repository_root(folder, scanned)
            found.extend(s for s in read_generators(kustomization.path, kustomization.document, kustomization.node,
                                                    top) if s.name in wanted)
    return found


def _references(node: Any) -> list[Any]:
    items = value_at(node, "spec", "postBuild", "substituteFrom")
    return [item for item in items.value if isinstance(item, MappingNode)] if isinstance(items, SequenceNode) else []


def _path_of(flux: _Flux, scanned: list[str]) -> str | None:
    """The real folder the Kustomization builds (spec.path from the top of its source), if in the tree."""
    path = scalar(value_at(flux.node, "spec", "path"))
    if path is None or "$" in path:
        return None
    folder = os.path.dirname(flux.raw.origin.path) or "."
    top = repository_root(folder, scanned)
    if leaves(path.lstrip("/"), top, top):
        return None
    found = source_path(folder, path.lstrip("/"), top)
    return found if os.path.isdir(found) else None


def _local(fluxes: list[_Flux]) -> list[_Flux]:
    """The Kustomizations that build this repository's files: all but one that those applying it apply
    from another source than its own (a tenant's repository, Flux's own release manifests at `./`)."""
    holding = _holding(fluxes)
    local = []
    for flux in fluxes:
        parents = {_source(parent) for parent in holding.get(flux.file, ()) if parent is not flux}
        if not parents or _source(flux) in parents:
            local.append(flux)
    return local


def _source(flux: _Flux) -> tuple:
    ref = value_at(flux.node, "spec", "sourceRef")
    return scalar(mapping_get(ref, "kind")), scalar(mapping_get(ref, "name"))


def _holding(fluxes: list[_Flux]) -> dict[str, list[_Flux]]:
    held: dict[str, list[_Flux]] = {}
    for flux in fluxes:
        for path in flux.build.files:
            held.setdefault(path, []).append(flux)
    return held


def _builder(flux: _Flux, sources: list[Source], notes: list[Diagnostic]) -> Builder:
    manifest = Manifest(flux.raw.api_version, flux.raw.kind, flux.raw.name, flux.raw.namespace, flux.raw.origin,
                        flux.node)
    manifest.filled = flux.filled or None
    what = f"Flux Kustomization {flux.raw.namespace + '/' if flux.raw.namespace else ''}{flux.raw.name}"
    at = where(flux.raw.origin.path, flux.raw.origin.line)
    post_build = value_at(flux.node, "spec", "postBuild")
    if not isinstance(post_build, MappingNode):
        return Builder(what, False, at)
    if flux.build.opt_out:  # which objects a kustomization's transformers opt out is not guessed
        return Builder(what, None, at, "a kustomization it builds may switch substitution off")
    if flux.unsure:
        return Builder(what, None, at, flux.unsure)
    inline, refused = read_inline(manifest)
    if refused:
        notes.append(_note(manifest, post_build, f"{refused}: its objects are read as written"))
        return Builder(what, False, at)
    namespace = scalar(value_at(flux.node, "metadata", "namespace")) or flux.raw.namespace
    builder = Builder(what, None, at, inline=inline)
    for item in _references(flux.node):
        kind, name = scalar(mapping_get(item, "kind")), scalar(mapping_get(item, "name"))
        if kind not in ("ConfigMap", "Secret") or not name:
            continue  # Flux reads ConfigMaps and Secrets only
        held = [s for s in sources if s.kind == kind and s.name == name and
                (s.namespace is None or namespace is None or s.namespace == namespace)]
        unusable = [s for s in held if s.problem]
        if not held or unusable:
            why = f"{unusable[0].where}: {unusable[0].problem}" if unusable else "not in the scanned tree"
            notes.append(_note(manifest, item, f"substituteFrom {kind} {name}: {why}; the variables it may set "
                                               "are read as written"))
            builder.chain.append(None)
        else:
            builder.chain.append(held)
    names = set(inline) | {key for sources_ in builder.chain if sources_ for s in sources_ for key in s.values}
    invalid = sorted(n for n in names if not VARIABLE_NAME.match(n))
    if invalid:
        notes.append(_note(manifest, post_build, f"{invalid[0]!r} is no variable name, so Flux's post-build "
                                                 "substitution fails; its objects are read as written"))
        builder.runs = False
    elif names or scalar(mapping_get(post_build, "substituteStrategy")) == "Always":
        builder.runs = True
    elif None in builder.chain:
        builder.why_unsure = "its variables may all be unset, and then nothing is substituted"
    else:
        builder.runs = False  # no variable set: Flux substitutes nothing
    return builder


def _note(manifest: Manifest, node: Any, message: str) -> Diagnostic:
    """A notice at `node`: in the Kustomization's file, or in the parent's whose patch wrote it there."""
    at = manifest.origin_at(node)
    if at.path != manifest.origin.path:
        return Diagnostic(at.path, f"a patch to the Kustomizations applied from here: {message}", at.line,
                          level="notice")
    return Diagnostic(at.path, f"{manifest.object_ref}: {message}", at.line, level="notice")


def _same(a: Any, b: Any) -> bool:
    """Do two object nodes say the same (the fields a plan reads: path, namespace, postBuild)?"""
    def said(node: Any) -> tuple:
        return tuple(_text(value_at(node, *keys)) for keys in (("spec", "path"), ("metadata", "namespace"),
                                                                ("spec", "postBuild")))
    return said(a) == said(b)


def _text(node: Any) -> Any:
    if isinstance(node, ScalarNode):
        return node.value
    if isinstance(node, MappingNode):
        return tuple((_text(k), _text(v)) for k, v in node.value)
    if isinstance(node, SequenceNode):
        return tuple(_text(item) for item in node.value)
    return None
