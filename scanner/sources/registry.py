"""The registered sources: what each kind of input is, and which module reads it. `collect` loops
over them; nothing else names a source.

A source is declared here, in SOURCES, by a `Source` (what it claims: a kind of item the walk finds,
or the values of an option; the module that reads them; its stage), and read by its module's

    def read(items, so_far: ScanInput, reading: Reading) -> ScanInput

`items` are what it claims (the walk's ManifestFile, ChartFolder or KustomizeFolder; an option's
paths), `so_far` what the sources before it gave (a source may take back a problem an earlier one
said: kustomize says a broken file once), `reading` the scan's target, options and scanned paths.
The module is imported only when a scan has such input, so that a scan of plain YAML stays light.

PLAIN sources are read first, one item at a time (maybe in a worker process: `so_far` is None),
each item seen by collect's `on_file` hook as soon as it is read (a module that also has
`read_streamed(item, reading, on_objects) -> (ScanInput, answers)` hands the hook each part of an
item as it reads it, and is read so when there is a hook: the files source, a document at a time);
RENDERED sources are read after `before_render`, in the order of SOURCES, all their items at once (or
one at a time: `each`). What a source reads that kubehop fails on is an input problem of that item
(or of each item read at once).

What one source does about another is declared on it, not special-cased in collect: kustomize
`takes_from` helm the chart folders its kustomizations inflate (its module's `claim`), helm reads
`also_for_kinds` HelmRelease objects among the plain files' objects even with no chart folder, and
a source whose tool would expand a hazardous file names the `hazard` test that holds a folder back.

Adding a source: its sub-package with a `source.py` exposing `read`, its `Source` here, its test.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

from scanner.sources.files.walk import ChartFolder, KustomizeFolder, ManifestFile
from scanner.sources.hazards import in_chart, in_kustomization

if TYPE_CHECKING:
    from scanner.options import ScanOptions
    from scanner.sources.files.kept import Kept
    from scanner.sources.postbuild.plan import Plan
    from scanner.versions import Minor

PLAIN = "plain"  # read first, file by file, before anything is rendered
RENDERED = "rendered"  # read after `before_render`: rendered, built, or what a cluster holds


@dataclass(frozen=True)
class Source:
    """A source as the registry knows it: what it claims, the module that reads it, its stage."""

    name: str
    module: str  # whose read(items, so_far, reading) reads what it claims
    stage: str  # PLAIN or RENDERED
    claims: type | None = None  # the kind of item of the walk it reads
    given: str | None = None  # or the ScanOptions field whose paths it reads (never walked)
    each: bool = False  # read one item at a time: a failure is that item's alone
    also_for_kinds: frozenset[str] = frozenset()  # read, even with no item, when the plain files hold these kinds
    takes_from: str | None = None  # the source whose items its module's claim(items, theirs, reading) may take
    prepare: str | None = None  # a light module whose prepare(items, so_far, reading) runs before render
    hazard: Callable[[str, frozenset[str], list[str]], str | None] | None = None  # a hazardous file an item hands its tool
    held_back: str = ""  # the notice's words for an item held back for it


@dataclass(frozen=True)
class Reading:
    """What every source reads with: the target its charts render for, the scan's options, the paths
    the repository spans, and the standard input when `-` is scanned."""

    target: "Minor | None"
    options: "ScanOptions"
    scanned: list[str]
    stdin_bytes: bytes | None = None
    # Which Flux Kustomizations build each file, and what their post-build substitution sets
    # (sources/postbuild/plan.py): the objects are read as they fill them in. None: none substitutes.
    postbuild: "Plan | None" = None
    # What the post-build plan's reading read of the plain files, for the files source to take (files/kept.py).
    kept: "Kept | None" = None


SOURCES: tuple[Source, ...] = (
    Source("files", "scanner.sources.files.source", PLAIN, claims=ManifestFile, each=True),
    Source("helm", "scanner.sources.helm.source", RENDERED, claims=ChartFolder,
           also_for_kinds=frozenset({"HelmRelease"}), hazard=in_chart, held_back="Helm chart not rendered"),
    Source("kustomize", "scanner.sources.kustomize.source", RENDERED, claims=KustomizeFolder, takes_from="helm",
           prepare="scanner.sources.kustomize.prepare", hazard=in_kustomization,
           held_back="kustomization not built"),
    Source("releases", "scanner.sources.releases.source", RENDERED, given="helm_releases", each=True),
)


class RegistryError(Exception):
    """A source declared wrong: a bug in kubehop, found by tests/test_source_registry.py."""


def module_of(source: Source) -> ModuleType:
    module = importlib.import_module(source.module)
    if not callable(getattr(module, "read", None)):
        raise RegistryError(f"source {source.name}: {source.module} has no read(items, so_far, reading)")
    return module


def validate(sources: tuple[Source, ...]) -> None:
    names = [source.name for source in sources]
    claimed = [source.claims for source in sources if source.claims is not None]
    for source in sources:
        if source.stage not in (PLAIN, RENDERED):
            raise RegistryError(f"source {source.name}: stage must be {PLAIN} or {RENDERED}")
        if (source.claims is None) == (source.given is None):
            raise RegistryError(f"source {source.name}: it claims a kind of walked item or is given an option")
        if source.stage == PLAIN and not source.each:
            raise RegistryError(f"source {source.name}: a plain source reads one item at a time")
        if source.takes_from is not None and source.takes_from not in names:
            raise RegistryError(f"source {source.name}: it takes from {source.takes_from}, which is not registered")
    if len(set(names)) != len(names) or len(set(claimed)) != len(claimed):
        raise RegistryError("two sources share a name or claim the same kind of item")


def path_of(item: Any) -> str:
    """The path an item is shown at: a walked item's, or an option's value."""
    return item if isinstance(item, str) else item.path
