"""Sources: everything that turns what the user points at into Manifests.

`collect` is the one entry point: the paths are walked (files/walk.py) and each kind of input goes
to the source that claims it (registry.py: the registered sources, in their order), read by that
sub-package's `source.py`:

- files/      every plain file of the tree, read first (in worker processes when there are many);
- helm/       chart folders and Flux HelmReleases, rendered by helm or read as text;
- kustomize/  kustomizations, built as Flux builds them;
- releases/   Helm's release Secrets (--helm-releases);
- postbuild/  Flux Kustomizations' post-build substitution: which of them build each file, what their
              variables are (read from the plain files first), each object filled in as they apply it;
- cluster/    what the plain files hand the cluster's components (flags, feature gates, Talos and
              kubeadm configuration) and the client tools the tree pins, read as files/ reads each
              file, and the tool files no manifest walk reads (walked by the analysis).

They stand on yaml/ (YAML text into Manifests) and tools/ (the outside tools, kept from the network);
every source returns a ScanInput (scan_input.py); hazards.py holds back from the tools a chart or
kustomization that would read a file kubehop refused. A source's module is imported only when a
scan has such input. What collect keeps for itself: the walk, the exclusions, the cluster dumps met
in the tree, the hooks (`on_file`, `before_render`), the post-build plan every source reads with
(`Reading.postbuild`; what its reading read of the plain files is kept for their main read,
`Reading.kept`) and the last line of defence around each read.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Protocol

from scanner import per_scan
from scanner.containment import within
from scanner.guard import unexpected
from scanner.model import STDIN_PATH, Diagnostic, Manifest
from scanner.sources import registry
from scanner.sources.files.kept import Kept
from scanner.sources.files.parallel import read_all
from scanner.sources.files.walk import MANIFEST_SUFFIXES, KustomizeFolder, ManifestFile, walk
from scanner.sources.hazards import hazardous_files, held_back
from scanner.sources.postbuild import FLUX
from scanner.sources.registry import PLAIN, RENDERED, Reading, Source, module_of, path_of
from scanner.sources.scan_input import ScanInput
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.options import ScanOptions


class FileHook(Protocol):
    """A later stage that looks at the objects of each document of a plain file as soon as it is read,
    while they hold their nodes (scanner.analysis: the per-object checks and the component pins), and
    keeps what it found itself: the sources hold none of it. The next document is composed only after
    it has answered, so a hook that lets the nodes go holds one document's at a time, not a file's.

    It is called in whichever process read the file (sources/files/parallel.py), may take objects
    out of `found.manifests` (cluster state met in the tree), and answers (the objects it took,
    anything else it keeps, picklable). The answers cross back with the file, their objects composed
    again as the file's are, and are handed to `keep` in the scan's own process, in order. (A file
    read again whole, a YAML error in it, is seen once, whole; what was answered before is dropped.)"""

    def __call__(self, found: ScanInput) -> tuple[list[Manifest], Any]: ...

    def keep(self, taken: list[Manifest], kept: Any) -> None: ...


@per_scan.scope()  # what an earlier scan in this process cached of the tree is forgotten
def collect(paths: list[str], target: Minor | None = None, options: "ScanOptions | None" = None,
            on_file: FileHook | None = None,
            before_render: Callable[[ScanInput], None] | None = None) -> ScanInput:
    """Everything under `paths`, charts rendered for `target` (default: the newest minor known).

    `on_file` sees what each plain file gave, a document at a time, as it is read; those objects come
    first in the result, in that order. Only then may files be read by worker processes: nothing else
    needs every node. `before_render` sees what the plain files gave before any chart is rendered or kustomization
    built (it may raise to stop there)."""
    from scanner.options import ScanOptions

    options = options or ScanOptions()
    # What the repository spans: the paths, and (a fleet's cluster reading part of it) its top.
    scanned = [*paths, *(r for r in options.repository_roots if r not in paths)]
    result = ScanInput(diagnostics=list(options.config_problems), scanned=scanned)
    reading = Reading(target, options, scanned, sys.stdin.buffer.read() if "-" in paths else None)
    sources = registry.SOURCES
    items, met = _walked(paths, sources, options, result)
    kept = Kept()  # what the post-build plan reads of the plain files, taken by their main read
    reading = dataclasses.replace(reading, postbuild=_postbuild(items, reading, kept, result), kept=kept)
    for source in (s for s in sources if s.stage == PLAIN and items[s.name]):
        _read_plain(source, items[source.name], reading, on_file, result)
    kept.clear()  # what worker processes read is still here
    for source in (s for s in sources if s.prepare and items[s.name]):  # before anything renders
        result.extend(_guarded(path_of(items[source.name][0]), _prepared, source, items[source.name], result,
                               reading))
    if options.not_deployed:  # what the whole repository's reading found no root reaches (scanner.fleet)
        told = dict(options.not_deployed)
        result.unreached.update({path: told[real] for path in {*(m.origin.path for m in result.manifests),
                                                               *(path for path, _ in result.documents)}
                                 if (real := os.path.realpath(path)) in told})
    if before_render is not None:
        before_render(result)
    _read_rendered([source for source in sources if source.stage == RENDERED], items, reading, result)
    result.notices.extend(f"{dump}: a kubectl dump inside the scanned paths: read as what the cluster holds "
                          "(--cluster-state, --helm-releases), not as manifests" for dump in sorted(met))
    return result


def _walked(paths: list[str], sources: tuple[Source, ...], options: "ScanOptions",
            result: ScanInput) -> tuple[dict[str, list[Any]], set[str]]:
    """Each source's items (what the walk found that it claims, or its option's paths), and the cluster
    dumps met in the tree; the walk's problems and the files left out go to `result`."""
    items: dict[str, list[Any]] = {source.name: list(getattr(options, source.given)) if source.given else []
                                   for source in sources}
    claimed_by = {source.claims: source.name for source in sources if source.claims is not None}
    dumps, met = _dumps(options), set()
    for item in walk(paths):
        if any(e.matches(item.path) for e in options.exclude):
            result.excluded += isinstance(item, ManifestFile)
            continue
        dump = _dump_of(item.path, dumps) if dumps else None
        if dump is not None:  # what a cluster holds (--cluster-state, --helm-releases), never desired state
            met.add(dump)
            continue
        if isinstance(item, Diagnostic):
            result.diagnostics.append(item)
        elif not (isinstance(item, ManifestFile) and _tool_file_given(item.path)):
            items[claimed_by[type(item)]].append(item)
    return items, met


def _postbuild(items: dict[str, list[Any]], reading: Reading, kept: Kept, result: ScanInput):
    """Which Flux Kustomizations build each file and what their post-build substitution sets, read from
    the plain files first (sources/postbuild): every source then reads objects as Flux applies them.
    What it read of the files goes to `kept`, for their main read."""
    walked = [item for found in items.values() for item in found]
    files = [i.path for i in walked if isinstance(i, ManifestFile) and i.path != "-" and not i.chart_template]
    if not files:
        return None
    try:
        if not any(FLUX in (kept.read(path)[0] or "") for path in files):  # each file's one read (files/kept.py)
            return None  # no file names a Flux Kustomization: nothing of sources/postbuild's reading is imported
        from scanner.sources.postbuild.read import read_flux

        found = read_flux(files, kept)
        if found is None:  # no Flux Kustomization substitutes: nothing of the builds is imported
            return None
        from scanner.sources.postbuild.plan import make_plan

        plan = make_plan(found, [i.path for i in walked if isinstance(i, KustomizeFolder)], reading.scanned)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard): read as written
        result.diagnostics.append(unexpected(files[0], err))
        return None
    result.diagnostics.extend(plan.diagnostics)
    return plan


def _read_rendered(sources: list[Source], items: dict[str, list[Any]], reading: Reading,
                   result: ScanInput) -> None:
    """The sources read after `before_render`, in their order: first a folder that would hand its tool
    a hazardous file is held back, and a source takes what it declares it takes from another."""
    hazards = hazardous_files(result.diagnostics)
    for source in (s for s in sources if hazards and s.hazard and items[s.name]):
        items[source.name], held = held_back(items[source.name], source.hazard, source.held_back, hazards,
                                             reading.scanned)
        result.unrendered.extend(held)
    for source in (s for s in sources if s.takes_from and items[s.name] and items[s.takes_from]):
        items[source.takes_from] = module_of(source).claim(items[source.name], items[source.takes_from], reading)
    for source in sources:
        wanted = items[source.name]
        if not wanted and not (source.also_for_kinds
                               and any(m.kind in source.also_for_kinds for m in result.manifests)):
            continue
        read = module_of(source).read
        if source.each:
            for item in wanted:
                result.extend(_guarded(path_of(item), read, [item], result, reading))
        else:
            result.extend(_all_or_each([path_of(item) for item in wanted], read, wanted, result, reading))


def _read_plain(source: Source, items: list[Any], reading: Reading, on_file: FileHook | None,
                result: ScanInput) -> None:
    """Each item on its own, seen by `on_file` as soon as it is read (a source that reads an item a part
    at a time hands the hook each part: its module's read_streamed, the files source's a document at a
    time); in worker processes when there is a hook (and no standard input) and many items
    (files/parallel.py)."""
    module = module_of(source)
    streamed = getattr(module, "read_streamed", None) if on_file is not None else None

    def read(item: Any) -> tuple[ScanInput, list[tuple[list[Manifest], Any]]]:
        if streamed is None:
            found = _guarded(path_of(item), module.read, [item], None, reading)
            return found, ([on_file(found)] if on_file is not None else [])
        try:
            return streamed(item, reading, on_file)
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            shown = STDIN_PATH if path_of(item) == "-" else path_of(item)
            return ScanInput(diagnostics=[unexpected(shown, err)]), []  # and what the hook was answered goes

    in_workers = on_file is not None and reading.stdin_bytes is None
    for found, answers in (read_all(items, read) if in_workers else map(read, items)):
        for answer in answers:
            on_file.keep(*answer)
        result.extend(found)


def _prepared(source: Source, items: list[Any], so_far: ScanInput, reading: Reading) -> ScanInput:
    """A source's step over the plain files' objects before anything renders (kustomize: patches marked)."""
    importlib.import_module(source.prepare).prepare(items, so_far, reading)
    return ScanInput()


def _tool_file_given(path: str) -> bool:
    """A .tool-versions, env file or Dockerfile given by name (as pre-commit gives the files a commit
    changed): the tool files' reader reads it, as in a folder's walk; read as YAML it would be a problem."""
    from scanner.sources.cluster.tool_pins import tool_file

    return path != "-" and not path.endswith(MANIFEST_SUFFIXES) and tool_file(os.path.basename(path))


def _dumps(options: "ScanOptions") -> dict[str, str]:
    """Real path -> the path given, of what --cluster-state and --helm-releases read."""
    return {os.path.realpath(p): p for p in (*options.cluster_state, *options.helm_releases)}


def _dump_of(path: str, dumps: dict[str, str]) -> str | None:
    real = os.path.realpath(path)
    return next((given for dump, given in dumps.items() if within(real, dump)), None)


def _guarded(path: str, read, *args) -> ScanInput:
    """`read(*args)`, or, should kubehop fail on this input, an input problem for `path`."""
    try:
        return read(*args)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        return ScanInput(diagnostics=[unexpected(STDIN_PATH if path == "-" else path, err)])


def _all_or_each(folders: list[str], read, *args) -> ScanInput:
    """`read(*args)` for all `folders` at once; should kubehop fail there, an input problem for each."""
    try:
        return read(*args)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        return ScanInput(diagnostics=[unexpected(folder, err) for folder in folders] or [unexpected("", err)])
