"""Sources: everything that turns what the user points at into Manifests.

`collect` is the one entry point. Plain files are read here; richer sources
(Helm charts, Kustomize builds, cluster dumps) plug in beside it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from scanner.model import Diagnostic, Manifest
from scanner.sources.files import ManifestFile, read_file, walk
from scanner.sources.yamldoc import DocumentProblem, TemplateSyntax, read_text


@dataclass
class ScanInput:
    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Files holding Helm template syntax that were not rendered, with the reason.
    unrendered: list[Diagnostic] = field(default_factory=list)
    files_read: int = 0

    def extend(self, other: "ScanInput") -> None:
        self.manifests.extend(other.manifests)
        self.diagnostics.extend(other.diagnostics)
        self.unrendered.extend(other.unrendered)
        self.files_read += other.files_read


def collect(paths: list[str]) -> ScanInput:
    result = ScanInput()
    stdin_bytes = sys.stdin.buffer.read() if "-" in paths else None
    for item in walk(paths):
        if isinstance(item, Diagnostic):
            result.diagnostics.append(item)
        else:
            result.extend(read_manifest_file(item, stdin_bytes))
    return result


def read_manifest_file(item: ManifestFile, stdin_bytes: bytes | None = None) -> ScanInput:
    result = ScanInput(files_read=1)
    display = "<stdin>" if item.path == "-" else item.path
    if item.chart_template:
        result.unrendered.append(Diagnostic(display, "Helm chart template; not rendered", level="notice"))
        return result
    text, problem = read_file(item.path, stdin_bytes)
    if problem is not None:
        result.diagnostics.append(problem if item.path != "-" else Diagnostic(display, problem.message))
        return result
    try:
        manifests, diagnostics = read_text(text, display)
    except DocumentProblem as problem:
        result.diagnostics.append(Diagnostic(display, str(problem), problem.line))
        return result
    except TemplateSyntax:
        result.unrendered.append(Diagnostic(display, "holds Helm template syntax; not rendered", level="notice"))
        return result
    result.manifests = manifests
    result.diagnostics = diagnostics
    return result
