"""A tree's pins, read from what the scan's own sources read: each file is parsed once.

Detection reads the objects the sources built and the documents they kept that are not objects
(Chart.yaml, kustomizations, `*_version` variables: ScanInput.documents); what the tree deploys that
no data file names is kept apart (components.unlisted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from scanner.components.catalog import Catalog
from scanner.components.chart_pins import ChartPin, chart_pins_in_documents
from scanner.components.cluster_pin import cluster_pins_in_manifests
from scanner.components.detect import detect_in_manifests
from scanner.components.file_pins import detect_in_documents
from scanner.components.overlaid import overlaid_pins, without_unpinned_bases
from scanner.components.pins import Detection, unique
from scanner.components.tree import TreeComponents
from scanner.components.unlisted import unlisted_charts, unlisted_remotes
from scanner.sources import ScanInput, collect
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.orders.read import UpgradeOrder


def pins_of(scan_input: ScanInput, catalog: Catalog,
            early: tuple[Sequence[Detection], int] = ((), 0),
            orders: Sequence[UpgradeOrder] | None = None) -> TreeComponents:
    """The pins among what the sources read. `early`: the pins a scan took of the first objects as it
    read their files, and how many objects those were; `orders`: the upgrade orders of its objects, read
    once (scanner.analysis)."""
    problems = scan_input.diagnostics  # a bug met on one object or document is an input problem there
    # Files no kustomization lists, or no root of the tree reaches, are not deployed: their pins are not the tree's.
    not_deployed = scan_input.unreferenced.keys() | scan_input.unreached.keys()
    documents = [d for d in scan_input.documents if d[0] not in not_deployed] if not_deployed else scan_input.documents
    in_documents, cluster = detect_in_documents(documents, catalog, problems, scan_input.scanned)
    charts: list[ChartPin] = []
    unlisted: list[Detection] = []
    in_manifests = detect_in_manifests(scan_input.manifests, catalog, problems, early, charts, unlisted)
    if scan_input.overlaid:  # each overlay's own chart version (components.overlaid)
        in_manifests = without_unpinned_bases(in_manifests, scan_input.overlaid) + overlaid_pins(
            scan_input.overlaid, catalog, scan_input.manifests, problems, charts)
    if not_deployed:
        in_manifests, charts, unlisted = (
            [p for p in pins if p.origin.path not in not_deployed] for pins in (in_manifests, charts, unlisted))
    chart_entries, local = chart_pins_in_documents(documents)
    unlisted += unlisted_charts(charts + chart_entries, catalog) + unlisted_remotes(documents, catalog)
    return TreeComponents(
        detections=unique(in_manifests + in_documents),
        cluster=list(cluster_pins_in_manifests(scan_input.manifests, orders)) + cluster,
        manifests=scan_input.manifests, diagnostics=scan_input.diagnostics, notices=scan_input.notices,
        suppressions=scan_input.suppressions,
        charts=charts + chart_entries, local_charts=local, unlisted=unique(unlisted))


def detect(paths: list[str], catalog: Catalog, target: Minor | None = None, options=None) -> TreeComponents:
    """Pins and objects under `paths`; Helm charts are rendered for `target` (default: the newest minor).
    `options`: the scan's ScanOptions (exclusions, --allow-network...)."""
    return pins_of(collect(paths, target, options), catalog)


