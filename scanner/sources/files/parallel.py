"""Plain files read in worker processes when a tree holds many of them.

Parsing is most of a scan of plain YAML, and one process parses on one core. From PARALLEL_FROM files
on (below, starting the workers costs more than they save), the files are shared out, in order, among
worker processes forked from the scan (one per core, at most MAX_WORKERS): each reads a file as the
scan would itself (`read`: the file's objects and problems, and what the scan's hook answered for
them: sources.FileHook), and sends back what it gave, without the composed nodes, which do not
cross processes: an object's node is composed again from its file if a later reader asks for it
(retention.py). Elsewhere than Linux, or with one core, files are read in the scan's own process.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Iterator, Sequence

from scanner.guard import unexpected
from scanner.sources.files.walk import ManifestFile

PARALLEL_FROM = 256
MAX_WORKERS = 4
_SWITCH_INTERVAL = 0.0005  # seconds; Python's default is 0.005

_read: Callable | None = None  # what a worker does with each file; set before the workers are forked


def read_all(files: Sequence[ManifestFile], read: Callable) -> Iterator:
    """`read(file)` for each file, in order: (what the file gave, the hook's answers: for each document,
    the objects it took and what it keeps); in worker processes when there are many files."""
    workers = min(MAX_WORKERS, _cores())
    if workers < 2 or len(files) < PARALLEL_FROM or not sys.platform.startswith("linux"):
        yield from map(read, files)
        return
    import multiprocessing

    global _read
    _read = read
    switching = sys.getswitchinterval()
    # The pool's thread that takes in the workers' results waits for the interpreter lock while this
    # thread files the results before them; a worker whose results are not taken in cannot send more.
    sys.setswitchinterval(min(switching, _SWITCH_INTERVAL))
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            chunk = max(8, len(files) // (workers * 16))
            for file, crossed in zip(files, pool.imap(_in_worker, files, chunksize=chunk)):
                yield read(file) if crossed is None else _received(*crossed)
    finally:
        _read = None
        sys.setswitchinterval(switching)


def _in_worker(file: ManifestFile):
    """In a worker: what the file gave, ready to cross; None to have the scan read it itself (documents
    that pin versions, and objects Flux's substitution filled in, keep their nodes, which do not cross
    processes)."""
    try:
        found, answers = _read(file)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        from scanner.sources.scan_input import ScanInput

        return ScanInput(diagnostics=[unexpected(file.path, err)], files_read=1), []
    filled = any(m.filled for m in found.manifests) or any(m.filled for answer in answers for m in answer[0])
    return None if found.documents or filled else (found, answers)


def _received(found, answers):
    from scanner.sources.files.retention import recompose, recomposable

    taken = [manifest for answer in answers for manifest in answer[0]]
    for manifest in (*found.manifests, *taken):  # they came without their nodes (Manifest.__reduce__)
        if recomposable(manifest):
            manifest.release(recompose)
    return found, answers


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
