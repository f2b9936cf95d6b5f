"""Where each object of a kustomize build came from: the file and line a person edits.

kustomize names each object's file (`buildMetadata: [originAnnotations]`); the line is that of the
object in the file (`locate`), found among the objects the scan already read from it when it did.
Objects of a rendered `helmCharts` entry name their template (`helm.py`).

Most objects of a build were read from their own file already (a base's files are in the tree) and
would be dropped as repeats; `new_documents` leaves those out of the build's output before it is
parsed, from the document's text alone, so a tree of large CRDs built in many overlays is not parsed
once per overlay. A document it cannot read for sure is kept (parsed and placed the usual way).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from scanner import per_scan
from scanner.model import Manifest, Origin
from scanner.paths import repo_path
from scanner.sources.kustomize import mirror as kustomize_mirror
from scanner.sources.files.walk import read_file
from scanner.sources.kustomize.helm import OBJECT_ANNOTATION, HelmCharts
from scanner.sources.kustomize.overlays import TRANSFORMATIONS_ANNOTATION, VERSION_PATH, chart_version, patched_by, \
    version_at
from scanner.sources.kustomize.refs import read_kustomization
from scanner.sources.yaml.line_map import aligned, fixed
from scanner.sources.yaml.rendered import annotation, drop_annotation
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, load_data, read_text

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
DOCUMENT_SEPARATOR = re.compile(r"^---$", re.MULTILINE)  # between the documents kustomize prints
_SIMPLE = r"[A-Za-z0-9][A-Za-z0-9._:/-]*"
_HEAD = re.compile(rf"apiVersion: ({_SIMPLE})\nkind: ({_SIMPLE})\nmetadata:\n((?:  .*\n)+)")
_NAME = re.compile(rf"^  name: ({_SIMPLE})$", re.MULTILINE)
_PATCHED = re.compile(r"^ +kind: Patch[A-Za-z0-9]*Transformer$", re.MULTILINE)
_ORIGIN_PATH = re.compile(r"^    config\.kubernetes\.io/origin: \|\n      path: ([^\s'\"#]+)\n(?!      )", re.MULTILINE)

ObjectAt = tuple[str, str, "str | None", int, int]  # apiVersion, kind, name, line, column


def identity(manifest: Manifest) -> tuple:
    """The same object at the same place in the same file (a line of 0 places nothing)."""
    origin = manifest.origin
    if origin.line == 0:
        return (id(manifest),)
    return (os.path.normpath(origin.path), origin.line, origin.column, manifest.api_version, manifest.kind)


class Origins:
    """The scan's knowledge of the files objects come from: what it read from them, what it has seen."""

    def __init__(self, read: list[Manifest], charts: HelmCharts):
        self.charts = charts
        self.seen = frozenset(identity(m) for m in read)
        index: dict[str, list[ObjectAt]] = {}
        filled = set()  # files whose objects a Flux Kustomization filled in: a build gives them as written
        for manifest in read:
            if manifest.origin.via is None and manifest.origin.line:
                index.setdefault(os.path.normpath(manifest.origin.path), []).append(
                    (manifest.api_version, manifest.kind, manifest.name, manifest.origin.line, manifest.origin.column))
                if manifest.filled:
                    filled.add(os.path.normpath(manifest.origin.path))
        self._index = {path: tuple(objects) for path, objects in index.items() if path not in filled}

    def objects_in(self, path: str) -> tuple[ObjectAt, ...]:
        known = self._index.get(os.path.normpath(path))
        return known if known is not None else _objects_in(path)

    def locate(self, path: str, api_version: str, kind: str, name: str | None) -> tuple[int, int]:
        """The apiVersion line of the object in `path` that kustomize turned into this one.

        Kustomize may have prefixed or suffixed the name, or replaced `$(VAR)` in it (vars): the source
        object's name, its variables as wildcards, is inside the built one. (0, 0) when no object in the
        file can be the built one: it is then named by its file only, never by another object's line."""
        candidates = [m for m in self.objects_in(path) if m[1] == kind]
        if len(candidates) == 1:
            return candidates[0][3], candidates[0][4]
        named = [m for m in candidates if _name_matches(m[2], name)]
        for group in ([m for m in named if m[0] == api_version], named):
            if group:
                return group[0][3], group[0][4]
        return 0, 0

    def for_build(self, folder: str, root: str, wrapper: str, view: str | None) -> "BuildOrigins":
        return BuildOrigins(self, folder, root, wrapper, view)


@dataclass
class BuildOrigins:
    origins: Origins
    folder: str
    root: str
    wrapper: str
    view: str | None  # the throwaway view of the repository the build ran in, if any
    # Objects an overlay's patches changed: id(manifest) -> the kustomization files (as the user sees
    # them) whose patches did (overlays.py).
    patched: dict[int, list[str]] = field(default_factory=dict)

    def source_path(self, relative: str) -> str:
        """The path, as the user sees paths, of a file kustomize names relative to the wrapper."""
        absolute = os.path.normpath(os.path.join(self.wrapper, relative))
        if self.view is not None:
            absolute = kustomize_mirror.from_view(absolute, self.root, self.view)
            return _display_path(self.folder, absolute, os.path.realpath(self.folder))
        return _display_path(self.folder, absolute, os.path.abspath(self.folder))

    def new_documents(self, output: str) -> str:
        """The build's output without the objects the scan has read from their own files already."""
        if not self.origins.seen:
            return output
        kept = []
        for document in DOCUMENT_SEPARATOR.split(output):
            if not self._known(document.lstrip("\n")):
                kept.append(document)
        return "---".join(kept)

    def _known(self, document: str) -> bool:
        head = _HEAD.match(document)
        if head is None or OBJECT_ANNOTATION in head.group(3) or head.group(2).endswith("List"):
            return False
        name, origin = _NAME.search(head.group(3)), _ORIGIN_PATH.search(head.group(3))
        if name is None or origin is None:
            return False
        api_version, kind = head.group(1), head.group(2)
        if kind == "HelmRelease" and TRANSFORMATIONS_ANNOTATION in head.group(3) and \
                _PATCHED.search(head.group(3)):
            return False  # an overlay may have changed its chart: read it (source.py keeps what changed)
        path = self.source_path(origin.group(1))
        line, column = self.origins.locate(path, api_version, kind, name.group(1))
        return line > 0 and (os.path.normpath(path), line, column, api_version, kind) in self.origins.seen

    def finder(self, built: str):
        via = f"kustomize build {repo_path(self.folder)}"
        output = built.split("\n")

        def where(manifest: Manifest) -> Origin:
            try:
                origin = load_data(annotation(manifest, ORIGIN_ANNOTATION) or "null", manifest.origin.path)
            except DocumentProblem:
                origin = None
            drop_annotation(manifest, ORIGIN_ANNOTATION)
            try:
                transformations = load_data(annotation(manifest, TRANSFORMATIONS_ANNOTATION) or "null",
                                            manifest.origin.path)
            except DocumentProblem:
                transformations = None
            drop_annotation(manifest, TRANSFORMATIONS_ANNOTATION)
            patchers = patched_by(transformations)
            if patchers and manifest.kind == "HelmRelease":
                self.patched[id(manifest)] = files = [self.source_path(p) for p in patchers]
                version = chart_version(manifest)
                at = version_at(files, version, manifest.name) if version is not None else None
                if at is not None:
                    manifest.patched_at[VERSION_PATH] = Origin(at.path, at.line, at.column, via)
            node = manifest.node
            first, last = node.start_mark.line + 1, node.end_mark.line + 1
            from_chart = self.origins.charts.origin_of(manifest, via)
            if from_chart is not None:
                found, in_tree = from_chart
                manifest.line_map = aligned(output, first, last, found.path, found.line) if in_tree else \
                    fixed(found.line, found.column)
                return found
            if not isinstance(origin, dict) or origin.get("repo"):  # from a remote base: no file of the tree
                manifest.line_map = fixed(0, 0)
                remote = f" ({origin.get('repo')})" if isinstance(origin, dict) else ""
                return Origin(read_kustomization(self.folder).path or self.folder, 0, 0, f"{via}{remote}")
            path = self.source_path(str(origin.get("path") or origin.get("configuredIn")))
            line, column = self.origins.locate(path, manifest.api_version, manifest.kind, manifest.name) \
                if origin.get("path") else (0, 0)
            manifest.line_map = aligned(output, first, last, path, line)
            return Origin(path, line, column, via)

        return where


def _display_path(folder: str, absolute: str, folder_absolute: str) -> str:
    """The path as the user would see it: relative to where they pointed, like the file walker's."""
    return os.path.normpath(os.path.join(folder, os.path.relpath(absolute, folder_absolute)))


def _name_matches(source: str | None, built: str | None) -> bool:
    if not source or not built:
        return source == built
    if "$(" not in source:
        return source in built
    pattern = ".*".join(re.escape(part) for part in re.split(r"\$\([^)]*\)", source))
    return re.search(pattern, built) is not None


@per_scan.cache(maxsize=1024)
def _objects_in(path: str) -> tuple[ObjectAt, ...]:
    text, problem = read_file(path)
    if problem is not None:
        return ()
    try:
        manifests, _ = read_text(text, path)
    except (DocumentProblem, TemplateSyntax):
        return ()
    return tuple((m.api_version, m.kind, m.name, m.origin.line, m.origin.column) for m in manifests)
