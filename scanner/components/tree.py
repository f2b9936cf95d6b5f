"""What a GitOps tree pins, read once with the scan's own sources: components and the cluster's version.

The sources read every file once; detection reads the objects they built and the documents they
kept that are not objects (Chart.yaml, kustomizations, `*_version` variables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scanner.components.catalog import Catalog
from scanner.components.detect import (ClusterPin, Detection, cluster_pins_in_manifests, detect_in_documents,
                                       detect_in_manifests, unique)
from scanner.model import Diagnostic, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.scan import ScanOptions
    from scanner.sources import ScanInput


@dataclass
class TreeComponents:
    detections: list[Detection] = field(default_factory=list)
    cluster: list[ClusterPin] = field(default_factory=list)
    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # what the sources left out (no helm...)


def pins_of(scan_input: ScanInput, catalog: Catalog) -> TreeComponents:
    """The pins among what the sources read."""
    problems = scan_input.diagnostics  # a bug met on one object or document is an input problem there
    in_documents, cluster = detect_in_documents(scan_input.documents, catalog, problems)
    return TreeComponents(
        detections=unique(detect_in_manifests(scan_input.manifests, catalog, problems) + in_documents),
        cluster=list(cluster_pins_in_manifests(scan_input.manifests)) + cluster,
        manifests=scan_input.manifests, diagnostics=scan_input.diagnostics, notices=scan_input.notices)


def detect(paths: list[str], catalog: Catalog, target: Minor | None = None,
           options: ScanOptions | None = None) -> TreeComponents:
    """Pins and objects under `paths`; Helm charts are rendered for `target` (default: the newest minor)."""
    from scanner.sources import collect

    return pins_of(collect(paths, target, options), catalog)
