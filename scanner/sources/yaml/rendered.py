"""Reading what a tool produced (helm, kustomize, a release's stored manifest) into Manifests.

The objects come from generated text; each source then points every object back at the file a
person edits (`reorigin`), naming how it got there in `Origin.via`.
"""

from __future__ import annotations

import bisect
import re
from typing import Callable

from scanner.model import Diagnostic, Manifest, Origin
from yaml.nodes import MappingNode

from scanner.nodes import mapping_get, scalar
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, read_text

_SOURCE_COMMENT = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)


def read_output(text: str, display: str) -> tuple[list[Manifest], list[Diagnostic]]:
    """The objects in a tool's output; a problem with the output is a diagnostic, never a crash."""
    try:
        return read_text(text, display)
    except DocumentProblem as problem:
        return [], [Diagnostic(display, str(problem), problem.line)]
    except TemplateSyntax:
        return [], [Diagnostic(display, "output still holds template syntax; not checked")]


def reorigin(manifests: list[Manifest], where: Callable[[Manifest], Origin]) -> list[Manifest]:
    for manifest in manifests:
        manifest.origin = where(manifest)
    return manifests


def source_comments(text: str) -> Callable[[Manifest], str | None]:
    """For output carrying helm's `# Source: chart/templates/x.yaml` comments: the template of each
    object (the last such comment above the object's apiVersion line)."""
    marks, line, offset = [], 1, 0
    for match in _SOURCE_COMMENT.finditer(text):  # lines counted on from the previous comment, not from 0
        line += text.count("\n", offset, match.start())
        offset = match.start()
        marks.append((line, match.group(1)))
    lines = [line for line, _ in marks]

    def template_of(manifest: Manifest) -> str | None:
        index = bisect.bisect_right(lines, manifest.origin.line) - 1
        return marks[index][1] if index >= 0 else None

    return template_of


def annotation(manifest: Manifest, key: str) -> str | None:
    return scalar(mapping_get(mapping_get(mapping_get(manifest.node, "metadata"), "annotations"), key))


def drop_annotation(manifest: Manifest, key: str) -> None:
    """Remove an annotation a tool added for kubehop's benefit, so checks see the object as applied."""
    metadata = mapping_get(manifest.node, "metadata")
    annotations = mapping_get(metadata, "annotations")
    if not isinstance(annotations, MappingNode):
        return
    annotations.value = [(k, v) for k, v in annotations.value if getattr(k, "value", None) != key]
    if not annotations.value:
        metadata.value = [(k, v) for k, v in metadata.value if getattr(k, "value", None) != "annotations"]
