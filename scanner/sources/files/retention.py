"""Which composed YAML nodes a scan keeps, so that its memory grows with its findings, not its tree.

Composed nodes cost several times the text they come from. The checks that read every object
(checks.per_object_checks) run on each plain file as soon as it is read; after them, the file's
objects let go of their nodes. The stages that look at the tree as a whole (CRDs, Flux values,
component pins, upgrade orders) read a few objects: those of the kinds they read most are kept,
any other is composed again from its file when asked for.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from typing import Any, Iterable

from scanner.model import STDIN_PATH, Manifest

# Kept whole: CRDs (every scan indexes them; the first definition of a name wins, so a repeat is let
# go), custom resources (the CRD checks read them) and Flux's own objects (HelmReleases and their
# sources are read to render charts and to find component pins).
_CRD_GROUP = "apiextensions.k8s.io"
_KEPT_GROUP_SUFFIX = ".toolkit.fluxcd.io"
# Files whose nodes stay composed after a reader asked for one of them: as many as hold this much text
# (nodes cost several times their text), at most so many. The Flux reader and the component pins ask
# for the same HelmReleases in turn, one file each: eight files made every one be composed twice.
_TEXT_REMEMBERED = 1024 * 1024
_FILES_REMEMBERED = 256


class Retention:
    """Lets go of the nodes of each file's objects once its per-object checks have run."""

    def __init__(self) -> None:
        self._crds: set[str] = set()  # names of the CRDs kept
        self._built_in = _built_in()

    def release(self, manifests: Iterable[Manifest]) -> None:
        for manifest in manifests:
            if not recomposable(manifest):
                continue
            group = manifest.group
            if group.endswith(_KEPT_GROUP_SUFFIX) or (manifest.api_version, manifest.kind) not in self._built_in:
                continue  # custom resources: the CRD checks read them (a tree holds few)
            if group == _CRD_GROUP and manifest.kind == "CustomResourceDefinition":
                if not manifest.name or manifest.name not in self._crds:
                    self._crds.add(manifest.name or "")
                    continue
            manifest.release(recompose)


@functools.cache
def _built_in() -> frozenset[tuple[str, str]]:
    """(apiVersion, kind) of every built-in API some minor serves."""
    from scanner.rulebook import load_rulebook

    served = load_rulebook().served
    return frozenset(api for minor in served.minors for api in served.served_at(minor))


def recomposable(manifest: Manifest) -> bool:
    """Was the object read from a file of its own, which can be read again?"""
    return manifest.origin.path != STDIN_PATH and manifest.line_map is None and not manifest.origin.via \
        and manifest.filled is None  # filled in by Flux's post-build substitution: not what the file says


class Recomposer:
    """Composes the node of a released object again from its file; the last few files are remembered
    (as long as they are unchanged)."""

    def __init__(self) -> None:
        self._files: OrderedDict[tuple, dict[tuple[int, int, str], Any]] = OrderedDict()
        self._text = 0  # bytes of the files remembered

    def __call__(self, manifest: Manifest) -> Any:
        path = manifest.origin.path
        try:
            info = os.stat(path)
        except OSError:
            return None
        key = (path, info.st_mtime_ns, info.st_size)
        nodes = self._files.get(key)
        if nodes is None:
            nodes = self._files[key] = _nodes_of(path)
            self._text += info.st_size
            while len(self._files) > 1 and (len(self._files) > _FILES_REMEMBERED or self._text > _TEXT_REMEMBERED):
                (_, _, size), _ = self._files.popitem(last=False)
                self._text -= size
        else:
            self._files.move_to_end(key)
        return nodes.get((manifest.origin.line, manifest.origin.column, manifest.kind))

    def forget(self) -> None:
        self._files.clear()
        self._text = 0


recompose = Recomposer()  # one for the process: objects read by worker processes arrive released


def _nodes_of(path: str) -> dict[tuple[int, int, str], Any]:
    """The objects' nodes of a file, by the place and kind of each object (None: it changed meanwhile)."""
    from scanner.sources.files.walk import read_file
    from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, read_text

    text, problem = read_file(path)
    if problem is not None:
        return {}
    try:
        manifests, _ = read_text(text, path)
    except (DocumentProblem, TemplateSyntax):
        return {}
    return {(m.origin.line, m.origin.column, m.kind): m.node for m in manifests}
