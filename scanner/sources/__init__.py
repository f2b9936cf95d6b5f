"""Sources: everything that turns what the user points at into Manifests.

`collect` is the one entry point: the paths are walked (files/walk.py) and each kind of input goes
to the sub-package that reads it, through that sub-package's `source.py`:

- files/      every plain file of the tree, read first (in worker processes when there are many);
- helm/       chart folders and Flux HelmReleases, rendered by helm or read as text;
- kustomize/  kustomizations, built as Flux builds them;
- releases/   Helm's release Secrets (--helm-releases);
- cluster/    what the plain files hand the cluster's components (flags, feature gates, Talos and
              kubeadm configuration) and the client tools the tree pins, read as files/ reads each
              file, and the tool files no manifest walk reads (walked by the analysis).

They stand on yaml/ (YAML text into Manifests) and tools/ (the outside tools, kept from the network);
every source returns a ScanInput (scan_input.py); hazards.py holds back from the tools a chart or
kustomization that would read a file kubehop refused. helm/, kustomize/ and releases/ are imported
only when a scan has such input.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Protocol

from scanner import per_scan
from scanner.containment import within
from scanner.guard import unexpected
from scanner.model import STDIN_PATH, Diagnostic, Manifest
from scanner.sources.files.parallel import read_all
from scanner.sources.files.source import read_manifest_file_streamed
from scanner.sources.files.walk import ChartFolder, KustomizeFolder, ManifestFile, walk
from scanner.sources.hazards import hazardous_files, held_back
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

    `on_file` sees what each plain file gave as soon as it is read; those objects come first in the
    result, in that order. Only then may files be read by worker processes: nothing else needs every
    node. `before_render` sees what the plain files gave before any chart is rendered or kustomization
    built (it may raise to stop there)."""
    from scanner.options import ScanOptions

    options = options or ScanOptions()
    # What the repository spans: the paths, and (a fleet's cluster reading part of it) its top.
    scanned = [*paths, *(r for r in options.repository_roots if r not in paths)]
    result = ScanInput(diagnostics=list(options.config_problems), scanned=scanned)
    charts: list[str] = []
    kustomizations: list[str] = []
    files: list[ManifestFile] = []
    stdin_bytes = sys.stdin.buffer.read() if "-" in paths else None
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
        elif isinstance(item, ChartFolder):
            charts.append(item.path)
        elif isinstance(item, KustomizeFolder):
            kustomizations.append(item.path)
        else:
            files.append(item)

    def read(item: ManifestFile) -> tuple[ScanInput, list[tuple[list[Manifest], Any]]]:
        try:
            return read_manifest_file_streamed(item, stdin_bytes, on_file)
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            return ScanInput(diagnostics=[unexpected(STDIN_PATH if item.path == "-" else item.path, err)]), []

    in_workers = on_file is not None and stdin_bytes is None
    for found, answers in (read_all(files, read) if in_workers else map(read, files)):
        for answer in answers:
            on_file.keep(*answer)
        result.extend(found)
    if kustomizations:
        result.extend(_guarded(kustomizations[0], _mark_patches, result.manifests, kustomizations))
    if before_render is not None:
        before_render(result)
    hazards = hazardous_files(result.diagnostics)
    if hazards and (charts or kustomizations):
        charts, kustomizations, held = held_back(charts, kustomizations, hazards, scanned)
        result.unrendered.extend(held)
    if kustomizations and charts:
        from scanner.sources.kustomize.source import without_kustomize_charts

        charts = without_kustomize_charts(charts, kustomizations, options)
    if charts or any(m.kind == "HelmRelease" for m in result.manifests):
        from scanner.sources.helm.source import read_charts

        result.extend(_all_or_each(charts, read_charts, charts, result.manifests, target, options, scanned))
    if kustomizations:
        from scanner.sources.kustomize.errors import said_once
        from scanner.sources.kustomize.source import build_kustomizations

        built = _all_or_each(kustomizations, build_kustomizations, kustomizations, result.manifests, target,
                             options, scanned)
        result.diagnostics, built.diagnostics = said_once(result.diagnostics, built.diagnostics)
        result.extend(built)
    for dump in options.helm_releases:
        from scanner.sources.releases.source import read_releases

        result.extend(_guarded(dump, read_releases, dump))
    result.notices.extend(f"{dump}: a kubectl dump inside the scanned paths: read as what the cluster holds "
                          "(--cluster-state, --helm-releases), not as manifests" for dump in sorted(met))
    return result


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


def _mark_patches(manifests: list[Manifest], folders: list[str]) -> ScanInput:
    """Objects of the files the kustomizations apply as patches are partial (kustomize/patches.py): marked
    before anything is rendered, with nothing of the builds imported."""
    from scanner.sources.kustomize.patches import mark_patches

    mark_patches(manifests, folders)
    return ScanInput()
