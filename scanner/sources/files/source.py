"""A plain file of the tree read into Manifests, with the documents that may pin versions and its
`# kubehop: ignore` comments: what `collect` does with every file that is not a chart's or rendered
(the files source of sources/registry.py)."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from yaml.nodes import MappingNode, ScalarNode

from scanner.model import STDIN_PATH, Diagnostic
from scanner.nodes import mapping_get
from scanner.sources.cluster.settings import read_config
from scanner.sources.cluster.tool_pins import pins_in_documents
from scanner.sources.files.walk import KUSTOMIZATION_FILES, ManifestFile, read_file
from scanner.sources.scan_input import ScanInput
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, read_text
from scanner.suppress import MARKER, read_suppressions

if TYPE_CHECKING:
    from scanner.sources.registry import Reading


# Files whose documents name versions whatever their keys: Helm chart metadata and kustomizations.
PIN_FILES = frozenset(("Chart.yaml", "requirements.yaml", "requirements.yml", *KUSTOMIZATION_FILES))


def _holds_version_variable(node: Any) -> bool:
    """A plain mapping (not an object) with a `<name>_version` or `<name>Version` key: Ansible defaults,
    values files, talconfig.yaml. Which of them pin anything is the pin readers' to say
    (scanner.components.file_pins, cluster_pin); this only keeps the documents they may read."""
    if not isinstance(node, MappingNode) or mapping_get(node, "kind") is not None:
        return False
    return any(isinstance(key, ScalarNode) and key.value.endswith(("_version", "Version")) for key, _ in node.value)


def read(items: list[ManifestFile], so_far: None, reading: "Reading") -> ScanInput:
    """Each plain file on its own: `collect` hands them one at a time, maybe in a worker process."""
    if len(items) == 1:
        return read_manifest_file(items[0], reading.stdin_bytes)
    result = ScanInput()
    for item in items:
        result.extend(read_manifest_file(item, reading.stdin_bytes))
    return result


def read_manifest_file(item: ManifestFile, stdin_bytes: bytes | None = None) -> ScanInput:
    result = ScanInput(files_read=1)
    display = STDIN_PATH if item.path == "-" else item.path
    if item.chart_template:
        result.unrendered.append(Diagnostic(display, "Helm chart template; not rendered", level="notice"))
        return result
    text, problem = read_file(item.path, stdin_bytes)
    if problem is not None:
        result.diagnostics.append(dataclasses.replace(problem, path=display))
        return result
    documents: list[Any] = []
    try:
        manifests, diagnostics = read_text(text, display, documents)
    except DocumentProblem as problem:
        result.diagnostics.append(Diagnostic(display, str(problem), problem.line))
        return result
    except TemplateSyntax:
        result.unrendered.append(Diagnostic(display, "holds Helm template syntax; not rendered", level="notice"))
        return result
    result.manifests = manifests
    result.diagnostics = diagnostics
    pin_file = os.path.basename(display) in PIN_FILES
    result.documents = [(display, node) for node in documents if pin_file or _holds_version_variable(node)]
    result.cluster_config, problems = read_config(display, text, documents)
    result.diagnostics.extend(problems)
    result.tool_pins = pins_in_documents(display, documents, manifests)
    if MARKER in text:
        result.suppressions, problems = read_suppressions(text, display)
        result.diagnostics.extend(problems)
    return result
