"""A plain file of the tree read into Manifests, with the documents that may pin versions and its
`# kubehop: ignore` comments: what `collect` does with every file that is not a chart's or rendered
(the files source of sources/registry.py)."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import TYPE_CHECKING, Any

from yaml.nodes import MappingNode, ScalarNode

from scanner import data
from scanner.model import STDIN_PATH, Diagnostic
from scanner.nodes import mapping_get
from scanner.sources.cluster.settings import may_hold_config, passed_over, read_config
from scanner.sources.cluster.tool_pins import pins_in_documents
from scanner.sources.files.walk import KUSTOMIZATION_FILES, ManifestFile, read_file
from scanner.sources.scan_input import ScanInput
from scanner.sources.yaml.yamldoc import (Composed, DocumentProblem, Fill, NotStreamable, TemplateSyntax, read_text,
                                          stream_composed, stream_text)
from scanner.suppress import MARKER, read_suppressions

if TYPE_CHECKING:
    from scanner.sources import FileHook
    from scanner.sources.files.kept import Kept
    from scanner.sources.postbuild.plan import Plan
    from scanner.sources.registry import Reading


# Files whose documents name versions whatever their keys: Helm chart metadata and kustomizations.
PIN_FILES = frozenset(("Chart.yaml", "requirements.yaml", "requirements.yml", *KUSTOMIZATION_FILES))


def _holds_version_variable(node: Any) -> bool:
    """A plain mapping (not an object) with a `<name>_version` or `<name>Version` key: Ansible defaults,
    values files, talconfig.yaml; or with a cluster version variable under the key the rules name for it
    (a Taskfile's `vars: {KUBERNETES_VERSION: ...}`). Which of them pin anything is the pin readers' to say
    (scanner.components.file_pins, cluster_pin); this only keeps the documents they may read."""
    if not isinstance(node, MappingNode) or mapping_get(node, "kind") is not None:
        return False
    if any(isinstance(key, ScalarNode) and key.value.endswith(("_version", "Version")) for key, _ in node.value):
        return True
    for under, names in _nested_variables().items():
        inner = mapping_get(node, under)
        if isinstance(inner, MappingNode) and any(isinstance(k, ScalarNode) and k.value in names for k, _ in inner.value):
            return True
    return False


@functools.cache
def _nested_variables() -> dict[str, frozenset[str]]:
    """The cluster version variables read under a top-level key (rules/cluster-version.yaml `under`)."""
    found: dict[str, set[str]] = {}
    for variable in data.load("rules/cluster-version.yaml")["variables"]:
        for under in variable.get("under", ()):
            found.setdefault(under, set()).add(variable["name"])
    return {under: frozenset(names) for under, names in found.items()}


def read(items: list[ManifestFile], so_far: None, reading: "Reading") -> ScanInput:
    """Each plain file on its own: `collect` hands them one at a time, maybe in a worker process."""
    found = [read_manifest_file_streamed(item, reading.stdin_bytes, None, reading.postbuild, reading.kept)[0]
             for item in items]
    if len(found) == 1:
        return found[0]
    result = ScanInput()
    for each in found:
        result.extend(each)
    return result


def read_streamed(item: ManifestFile, reading: "Reading", on_objects: FileHook) -> tuple[ScanInput, list]:
    """One plain file, each document's objects handed to `on_objects` as it is read (collect's hook):
    what the file gives, and the hook's answers (read_manifest_file_streamed)."""
    return read_manifest_file_streamed(item, reading.stdin_bytes, on_objects, reading.postbuild, reading.kept)


def read_manifest_file(item: ManifestFile, stdin_bytes: bytes | None = None) -> ScanInput:
    """What the file gives, its objects holding their nodes."""
    return read_manifest_file_streamed(item, stdin_bytes, None)[0]


def read_manifest_file_streamed(item: ManifestFile, stdin_bytes: bytes | None, on_objects: FileHook | None,
                                postbuild: "Plan | None" = None, kept: "Kept | None" = None) -> tuple[ScanInput, list]:
    """What the file gives, and the answers of `on_objects`, which sees the objects of each document as
    soon as it is read, while they hold their nodes (sources.FileHook), one answer a document. With
    `on_objects`, the file is composed one document at a time: a hook that lets the nodes go (the scan's
    does, retention.py) never has a whole file's composed at once. With `postbuild`, the objects are
    those the Flux Kustomizations that build the file apply (sources/postbuild). With `kept`, what the
    plain files' first reading read of the file (its text, maybe its documents) is taken, not read again."""
    result = ScanInput(files_read=1)
    display = STDIN_PATH if item.path == "-" else item.path
    if item.chart_template:
        result.unrendered.append(Diagnostic(display, "Helm chart template; not rendered", level="notice"))
        return result, []
    taken = kept.take(item.path) if kept is not None and item.path != "-" else None
    text, problem, composed = taken if taken is not None else (*read_file(item.path, stdin_bytes), None)
    if problem is not None:
        result.diagnostics.append(dataclasses.replace(problem, path=display))
        return result, []
    reading = _Reading(display, text, _filler(postbuild, item.path, display, text), composed)
    answers: list = []
    try:
        if on_objects is None:
            reading.whole(result)
        else:
            try:
                reading.streamed(result, on_objects, answers)
            except NotStreamable:  # the whole text is read again, as without a hook
                result, answers = ScanInput(files_read=1), []
                reading.whole(result)
                answers.append(on_objects(result))
    except DocumentProblem as problem:
        return ScanInput(files_read=1, diagnostics=[Diagnostic(display, str(problem), problem.line)]), []
    except TemplateSyntax:
        unrendered = Diagnostic(display, "holds Helm template syntax; not rendered", level="notice")
        return ScanInput(files_read=1, unrendered=[unrendered]), []
    if MARKER in text:
        result.suppressions, problems = read_suppressions(text, display)
        result.diagnostics.extend(problems)
    return result, answers


def _filler(postbuild: "Plan | None", path: str, display: str, text: str) -> Fill | None:
    """What fills in the file's objects as the Flux Kustomizations that build it apply them, if any does."""
    if postbuild is None or path == "-" or "$" not in text:
        return None
    builders = postbuild.for_file(path)
    if not builders:
        return None
    from scanner.sources.postbuild.fill import fill_object

    return lambda node, diagnostics: fill_object(node, builders, display, diagnostics)


class _Reading:
    """One file's documents into a ScanInput: its objects, the documents that may pin versions, the
    cluster configuration and client tools it holds; all at once, or a document at a time."""

    def __init__(self, display: str, text: str, fill: Fill | None = None, composed: list[Composed] | None = None):
        self.display, self.text, self.fill, self.composed = display, text, fill, composed
        self.pin_file = os.path.basename(display) in PIN_FILES

    def whole(self, result: ScanInput) -> None:
        documents: list[Any] = []
        result.manifests, result.diagnostics = read_text(self.text, self.display, documents, self.fill)
        result.documents = [(self.display, node) for node in documents if self._may_pin(node)]
        self._config(result, documents)
        result.tool_pins = pins_in_documents(self.display, documents, result.manifests)

    def streamed(self, result: ScanInput, on_objects: FileHook, answers: list) -> None:
        """Each document into `result`, seen by `on_objects` before the next is composed; of the nodes,
        only those of the documents that may pin versions are kept here."""
        images: list = []
        documents = stream_text(self.text, self.display, result.diagnostics, self.fill) if self.composed is None \
            else stream_composed(self.composed, self.display, result.diagnostics, self.fill)
        for node, manifests in documents:
            if self._may_pin(node):
                result.documents.append((self.display, node))
            self._config(result, [node])
            result.tool_pins.extend(pins_in_documents(self.display, [node], ()))
            images.extend(pins_in_documents(self.display, [], manifests))  # while the nodes are held
            part = ScanInput(manifests=manifests, diagnostics=result.diagnostics)
            answers.append(on_objects(part))
            result.manifests.extend(part.manifests)  # the hook may take some out (sources.FileHook)
        result.tool_pins.extend(images)  # after the documents' own, as read whole

    def _may_pin(self, node: Any) -> bool:
        return self.pin_file or _holds_version_variable(node)

    @functools.cached_property
    def config(self) -> bool:
        """Asked once, of the first document read_config may read: the text is the whole file's."""
        return may_hold_config(self.text)

    def _config(self, result: ScanInput, documents: list[Any]) -> None:
        documents = [document for document in documents if not passed_over(document)]
        if documents and self.config:
            settings, problems = read_config(self.display, self.text, documents)
            result.cluster_config.extend(settings)
            result.diagnostics.extend(problems)
