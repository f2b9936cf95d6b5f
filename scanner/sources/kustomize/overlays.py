"""Objects an overlay changes: the line of the patch that sets a Flux HelmRelease's chart version.

A base may pin a chart (or pin none) and each overlay patch `spec.chart.spec.version` its own way
(fluxcd/flux2-kustomize-helm-example: `apps/staging` and `apps/production` patch `apps/base/podinfo`).
The build says which kustomizations patched an object (`buildMetadata: [transformerAnnotations]`);
this module finds, among their patches (`patches`, `patchesStrategicMerge`, `patchesJson6902`, a file
or inline), the line that writes the version the build produced: that is where a person edits the pin.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Manifest, Origin
from scanner.nodes import mapping_get, scalar, sequence_items, value_at
from scanner.sources.files.walk import read_file
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

TRANSFORMATIONS_ANNOTATION = "alpha.config.kubernetes.io/transformations"
VERSION_PATH = ("spec", "chart", "spec", "version")
_VERSION_POINTER = "/spec/chart/spec/version"


@dataclass
class Overlaid:
    """An object of the tree as an overlay builds it, where the overlay changed its chart version."""
    base: Manifest  # as read from its own file
    built: Manifest  # as the overlay's build gives it
    pin_at: Origin  # the patch line that sets the version (or the kustomization, when no line is found)


def chart_version(manifest: Manifest) -> str | None:
    return scalar(value_at(manifest.node, "spec", "chart", "spec", "version"))


def patched_by(transformations: Any) -> list[str]:
    """The kustomization files (as kustomize names them) whose patches changed the object."""
    if not isinstance(transformations, list):
        return []
    return [str(t.get("configuredIn")) for t in transformations
            if isinstance(t, dict) and t.get("configuredIn")
            and str((t.get("configuredBy") or {}).get("kind", "")).startswith("Patch")]


def version_at(kustomizations: list[str], version: str, name: str | None) -> Origin | None:
    """The line among the patches of `kustomizations` (paths as the user sees them) that sets the
    chart version `version`; the last such line wins, as the last patch applied decides. None: none
    found (the version came from a patch kubehop cannot read line by line)."""
    found: Origin | None = None
    for path in kustomizations:
        for origin, value, patched in _version_lines(path):
            if value == version and patched in (None, name):
                found = origin
    return found


def _version_lines(path: str) -> Iterator[tuple[Origin, str | None, str | None]]:
    """(line, version, the name of the object patched when the patch says) of every version a patch sets."""
    root = _root(path)
    folder = os.path.dirname(path)
    if not isinstance(root, MappingNode):
        return
    for key in ("patches", "patchesJson6902", "patchesStrategicMerge"):
        for item in sequence_items(mapping_get(root, key)):
            if isinstance(item, ScalarNode):  # patchesStrategicMerge: a file, or an inline patch
                if "\n" in item.value or ":" in item.value:
                    yield from _inline(item, path)
                else:
                    yield from _in_file(os.path.join(folder, item.value.strip()))
                continue
            file, inline = scalar(mapping_get(item, "path")), mapping_get(item, "patch")
            target = scalar(value_at(item, "target", "name"))
            found = _in_file(os.path.join(folder, file.strip())) if file else \
                _inline(inline, path) if isinstance(inline, ScalarNode) else iter(())
            for origin, value, name in found:
                yield origin, value, name or target


def _root(path: str) -> Any:
    text, problem = read_file(path)
    if problem is not None:
        return None
    try:
        nodes, _ = compose_documents(text, path)
    except (DocumentProblem, TemplateSyntax):
        return None
    return nodes[0] if nodes else None


def _in_file(path: str) -> Iterator[tuple[Origin, str | None, str | None]]:
    text, problem = read_file(path)
    if problem is not None:
        return
    try:
        nodes, _ = compose_documents(text, path)
    except (DocumentProblem, TemplateSyntax):
        return
    for node in nodes:
        for found in _versions_in(node):
            yield Origin(path, found.start_mark.line + 1, found.start_mark.column + 1), scalar(found), _name(node)


def _inline(node: ScalarNode, path: str) -> Iterator[tuple[Origin, str | None, str | None]]:
    """A patch written in the kustomization itself: its lines are the kustomization's, from the line
    after `patch: |` (a block scalar); a patch in quotes is placed at its first line."""
    try:
        nodes, _ = compose_documents(node.value, path)
    except (DocumentProblem, TemplateSyntax):
        return
    block = node.style == "|"
    indent = _indent(path, node.start_mark.line + 2)  # the block's own indentation
    for root in nodes:
        for found in _versions_in(root):
            if block:
                line = node.start_mark.line + 1 + found.start_mark.line + 1
                origin = Origin(path, line, found.start_mark.column + 1 + indent)
            else:
                origin = Origin(path, node.start_mark.line + 1, node.start_mark.column + 1)
            yield origin, scalar(found), _name(root)


def _name(node: Any) -> str | None:
    return scalar(value_at(node, "metadata", "name")) if isinstance(node, MappingNode) else None


def _indent(path: str, line: int) -> int:
    text, problem = read_file(path)
    lines = text.split("\n") if problem is None else []
    if not 0 < line <= len(lines):
        return 0
    return len(lines[line - 1]) - len(lines[line - 1].lstrip(" "))


def _versions_in(node: Any) -> Iterator[ScalarNode]:
    """A strategic-merge patch's `spec.chart.spec.version`, a JSON 6902 op writing that path."""
    if isinstance(node, MappingNode):
        found = value_at(node, "spec", "chart", "spec", "version")
        if isinstance(found, ScalarNode):
            yield found
    elif isinstance(node, SequenceNode):
        for op in node.value:
            value = mapping_get(op, "value")
            if scalar(mapping_get(op, "op")) in ("add", "replace") and isinstance(value, ScalarNode) and \
                    (scalar(mapping_get(op, "path")) or "").rstrip("/") == _VERSION_POINTER:
                yield value
