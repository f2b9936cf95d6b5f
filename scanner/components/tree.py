"""What a GitOps tree pins, read once with the scan's own sources: components and the cluster's version.

The sources read every file once; detection reads the objects they built and the documents they
kept that are not objects (Chart.yaml, kustomizations, `*_version` variables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from scanner.components.catalog import Catalog
from scanner.components.detect import (ClusterPin, Detection, by_component, cluster_pins_in_manifests,
                                       detect_in_documents, detect_in_manifests, unique)
from scanner.components.state import Timeline, component_states, resolve
from scanner.model import Diagnostic, Finding, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.checks import ScanContext
    from scanner.scan import ScanOptions
    from scanner.sources import ScanInput
    from scanner.suppress import Suppression


@dataclass
class TreeComponents:
    detections: list[Detection] = field(default_factory=list)
    cluster: list[ClusterPin] = field(default_factory=list)
    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # what the sources left out (no helm...)
    findings: list[Finding] = field(default_factory=list)  # the sources' own (a key written twice...)
    suppressions: list[Suppression] = field(default_factory=list)  # `# kubehop: ignore` comments read


def pins_of(scan_input: ScanInput, catalog: Catalog) -> TreeComponents:
    """The pins among what the sources read (with those a scan took as it read: ScanInput.pins)."""
    problems = scan_input.diagnostics  # a bug met on one object or document is an input problem there
    in_documents, cluster = detect_in_documents(scan_input.documents, catalog, problems)
    early = (scan_input.pins, scan_input.checked_early)
    return TreeComponents(
        detections=unique(detect_in_manifests(scan_input.manifests, catalog, problems, early) + in_documents),
        cluster=list(cluster_pins_in_manifests(scan_input.manifests)) + cluster,
        manifests=scan_input.manifests, diagnostics=scan_input.diagnostics, notices=scan_input.notices,
        findings=scan_input.findings, suppressions=scan_input.suppressions)


def detect(paths: list[str], catalog: Catalog, target: Minor | None = None,
           options: ScanOptions | None = None) -> TreeComponents:
    """Pins and objects under `paths`; Helm charts are rendered for `target` (default: the newest minor)."""
    from scanner.sources import collect

    return pins_of(collect(paths, target, options), catalog)


def cluster_pin(tree: TreeComponents) -> ClusterPin | None:
    """The cluster version the tree pins: the oldest of its pins (nodes upgrade one minor at a time)."""
    return min(tree.cluster, key=lambda p: p.minor, default=None)


def timeline_start(target: Minor, current: Minor | None, pin: ClusterPin | None) -> Minor:
    """Where the component state starts: --from, else the version the tree pins, else the minor before
    the target (the hop to the target alone)."""
    for minor in (current, pin.minor if pin else None):
        if minor is not None and minor < target:
            return minor
    return Minor(target.major, target.minor - 1)


def component_timeline(tree: TreeComponents, catalog: Catalog, target: Minor, current: Minor | None = None,
                       unknown: str = "warn") -> Timeline:
    states = component_states(by_component(tree.detections), catalog)
    pin = cluster_pin(tree)
    start = timeline_start(target, current, pin)
    known = start in (current, pin.minor if pin else None)
    return resolve(states, start, target, catalog, tree.manifests, unknown, current_known=known)


def timeline_of_manifests(manifests: Sequence[Manifest], context: ScanContext,
                          names: frozenset[str] | None = None) -> Timeline:
    """The component state from objects alone (pins in other files unseen), when a check is run
    without the scan's: `names` limits the catalog to the components that matter."""
    from scanner.components.catalog import load_catalog, load_components

    catalog = load_components(names) if names is not None else load_catalog()
    tree = TreeComponents(detections=detect_in_manifests(manifests, catalog),
                          cluster=list(cluster_pins_in_manifests(manifests)), manifests=list(manifests))
    return component_timeline(tree, catalog, context.target, context.current, context.unknown)
