"""Find the manifest files under the paths a user gives, and read them safely."""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from typing import Any, Iterator

from scanner.containment import within
from scanner.model import Diagnostic

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# Version control, dependency and tool caches: never a GitOps source.
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "_darcs", "CVS",
    "node_modules", "vendor", "bower_components", ".terraform", ".venv", "venv",
    "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".idea", ".vscode",
})
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_FILE_BYTES = 20 * 1024 * 1024
_BINARY_PROBE = 8192


def build_file(origin) -> bool:
    """A kustomization file's own object: kustomize reads it, the cluster never sees it (what a build
    generates from it, a ConfigMap, carries the build in `origin.via`)."""
    return origin.via is None and os.path.basename(origin.path) in KUSTOMIZATION_FILES


@dataclass(frozen=True, slots=True)
class ManifestFile:
    """A YAML or JSON file the walk found, as the user is shown it."""

    path: str  # as shown to the user: the argument joined with the relative path
    chart_template: bool = False  # under a Helm chart's templates/ (rendered by the Helm source)


@dataclass(frozen=True, slots=True)
class ChartFolder:
    """A Helm chart (a folder with Chart.yaml, not inside another chart): the Helm source renders it."""

    path: str


@dataclass(frozen=True, slots=True)
class KustomizeFolder:
    """A folder holding a kustomization: the Kustomize source builds it."""

    path: str


def walk(paths: list[str]) -> Iterator[ManifestFile | ChartFolder | KustomizeFolder | Diagnostic]:
    """Every manifest file, chart and kustomization under `paths`, in a stable order; problems as
    Diagnostics.

    A chart's templates are not listed: they are the chart's, read when it is rendered. A path given
    twice, or inside a folder also given, is read once."""
    for given in _distinct(paths):
        if given == "-":
            yield ManifestFile("-")
        elif os.path.isdir(given):
            yield from _walk_dir(given)
        elif os.path.lexists(given):
            if not os.path.exists(given):
                yield Diagnostic(given, "broken symbolic link")
            else:
                yield ManifestFile(given, _in_chart_templates(given))
        else:
            yield Diagnostic(given, "does not exist")


def _distinct(paths: list[str]) -> list[str]:
    """`paths` without repeats and without those inside another given folder (its walk reads them)."""
    if len(paths) < 2:
        return paths
    real = [os.path.realpath(p) if p != "-" and os.path.lexists(p) else None for p in paths]
    folders = [(i, r) for i, r in enumerate(real) if r is not None and os.path.isdir(paths[i])]
    kept = []
    for i, given in enumerate(paths):
        if given == "-" and "-" in kept:
            continue
        if real[i] is not None and any(r == real[i] and j < i or real[i].startswith(os.path.join(r, ""))
                                       for j, r in folders if j != i):
            continue
        kept.append(given)
    return kept


def _walk_dir(top: str) -> Iterator[ManifestFile | ChartFolder | KustomizeFolder | Diagnostic]:
    root_real = os.path.realpath(top)
    # Stack of (directory, inside a chart's templates/?, inside a chart?); sorted for a stable order.
    stack = [(top, _in_chart_templates(os.path.join(top, "x")), False)]
    while stack:
        directory, in_templates, in_chart = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            yield Diagnostic(directory, f"cannot list directory: {err.strerror or err}")
            continue
        is_chart = any(e.name == "Chart.yaml" for e in entries)
        if is_chart and not in_chart and not in_templates:
            yield ChartFolder(directory)
            in_chart = True
        if not in_chart and any(e.name in KUSTOMIZATION_FILES for e in entries):
            yield KustomizeFolder(directory)
        subdirs = []
        for entry in entries:
            path = os.path.join(directory, entry.name)
            if entry.is_symlink():
                problem = _symlink_problem(path, root_real)
                if problem == _BROKEN and not entry.name.endswith(MANIFEST_SUFFIXES):
                    # a link to a folder (or a non-manifest file) that is gone: no manifest is lost, so not exit 3
                    yield Diagnostic(path, f"{_BROKEN} (not a manifest file name); skipped", level="notice")
                    continue
                if problem:
                    yield Diagnostic(path, problem)
                    continue
                if entry.is_dir() or _walked_at_target(path, root_real):
                    continue  # its target is inside the tree and is walked there
            if entry.is_dir(follow_symlinks=False):
                templates = is_chart and entry.name == "templates"
                if entry.name not in SKIPPED_DIRS and not (templates and in_chart and not in_templates):
                    subdirs.append((path, in_templates or templates, in_chart))
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                yield ManifestFile(path, in_templates)
        stack.extend(reversed(subdirs))


_BROKEN = "broken symbolic link"


def _symlink_problem(path: str, root_real: str) -> str | None:
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as err:
        if "loop" in str(err).lower() or getattr(err, "errno", None) == 40:
            return "symbolic link loop"
        return _BROKEN
    if not within(target, root_real):
        return "symbolic link points outside the scanned tree; not followed"
    return None


def _walked_at_target(link: str, root_real: str) -> bool:
    """Is a link's target (inside the tree) a manifest file the walk reads anyway?"""
    target = os.path.realpath(link)
    parts = os.path.relpath(target, root_real).split(os.sep)
    return target.endswith(MANIFEST_SUFFIXES) and not SKIPPED_DIRS.intersection(parts)


def _in_chart_templates(path: str) -> bool:
    """Is `path` under <chart>/templates/ (a folder next to a Chart.yaml)?"""
    parent = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.basename(parent) == "templates" and os.path.isfile(
                os.path.join(os.path.dirname(parent), "Chart.yaml")):
            return True
        up = os.path.dirname(parent)
        if up == parent:
            return False
        parent = up


def _too_big(path: str, size: int) -> Diagnostic:
    return Diagnostic(path, f"file is {size / 1048576:.0f} MiB, over the {MAX_FILE_BYTES // 1048576} MiB limit; skipped")


def read_yaml_file(path: str) -> tuple[Any, Diagnostic | None]:
    """The data of a one-document YAML file kubehop reads for itself (Chart.yaml, a kustomization),
    read and guarded like a manifest; or the one-line reason it cannot be."""
    from scanner.sources.yaml.yamldoc import DocumentProblem, load_data

    text, problem = read_file(path)
    if problem is not None:
        return None, problem
    try:
        return load_data(text, path), None
    except DocumentProblem as err:
        return None, Diagnostic(path, str(err), err.line)


def read_file(path: str, stdin_bytes: bytes | None = None) -> tuple[str | None, Diagnostic | None]:
    """The text of a file, or the one-line reason it cannot be scanned."""
    try:
        if path == "-":
            data = stdin_bytes or b""
        else:
            # Non-blocking: opening a FIFO named x.yaml must not wait for a writer; then only a
            # regular file is read at all.
            flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
            descriptor = os.open(path, flags)
            try:
                info = os.fstat(descriptor)
                if not stat.S_ISREG(info.st_mode):
                    return None, Diagnostic(path, "not a regular file (a FIFO, socket or device); skipped")
                if info.st_size > MAX_FILE_BYTES:
                    return None, _too_big(path, info.st_size)
                # Its size and a byte more, then on to the limit where it has grown since: a read of the
                # limit itself would allocate (and fault in) 20 MiB per file, a tenth of a plain scan.
                # Read from the descriptor itself: a buffered file object around it was a third of the time.
                data = _read_up_to(descriptor, info.st_size + 1)
                if len(data) > info.st_size:
                    data += _read_up_to(descriptor, MAX_FILE_BYTES + 1 - len(data))
            finally:
                os.close(descriptor)
            if len(data) > MAX_FILE_BYTES:
                return None, _too_big(path, len(data))
    except OSError as err:
        return None, Diagnostic(path, f"cannot read: {err.strerror or err}")
    if b"\0" in data[:_BINARY_PROBE]:
        return None, Diagnostic(path, "binary file; skipped")
    try:  # the utf-8-sig codec (in Python) only where there is a byte-order mark for it to drop
        text = data.decode("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return None, Diagnostic(path, f"not UTF-8 text (byte 0x{data[err.start]:02x}); skipped", line)
    if not text or text.isspace():  # what `not text.strip()` says, without copying the text
        return None, Diagnostic(path, "empty file", level="notice")
    return text, None


def _read_up_to(descriptor: int, size: int) -> bytes:
    """Up to `size` bytes, fewer only at the end of the file."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(descriptor, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
