"""What a GitOps tree pins (components, charts, the cluster's version) and the component state it gives.

scanner.components.reading fills a TreeComponents from what the sources read; `component_timeline`
resolves it, as `scan` and `plan` both do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from scanner.components.catalog import Catalog, Component
from scanner.components.chart_pins import ChartPin, ChartVersion
from scanner.components.charts import chart_component, chart_detection
from scanner.components.cluster_pin import cluster_pins_in_manifests
from scanner.components.detect import detect_in_manifests
from scanner.components.installs import judged_from, written
from scanner.components.pins import ClusterPin, Detection, by_component
from scanner.components.state import Timeline, component_states, resolve
from scanner.components.unlisted import no_data_components
from scanner.model import Diagnostic, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.chart_index import ChartVersions
    from scanner.suppress import Suppression


@dataclass
class TreeComponents:
    """The components and cluster versions the tree pins, with what reading them found."""

    detections: list[Detection] = field(default_factory=list)
    cluster: list[ClusterPin] = field(default_factory=list)
    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # what the sources left out (no helm...)
    suppressions: list[Suppression] = field(default_factory=list)  # `# kubehop: ignore` comments read
    charts: list[ChartPin] = field(default_factory=list)  # every chart version pinned (components.charts)
    # Charts kept in the tree that state a kubeVersion: each its own pin, with its one version.
    local_charts: list[tuple[ChartPin, ChartVersion]] = field(default_factory=list)
    # Pins of what the tree deploys that no data file names (components.unlisted), by the name it goes by.
    unlisted: list[Detection] = field(default_factory=list)


def cluster_pin(tree: TreeComponents) -> ClusterPin | None:
    """The cluster version the tree pins: the oldest of its pins (nodes upgrade one minor at a time)."""
    return min(tree.cluster, key=lambda p: p.minor, default=None)


def timeline_start(target: Minor, current: Minor | None, pin: ClusterPin | None) -> tuple[Minor, bool]:
    """Where the component state starts, and whether that is the cluster's own minor: --from, else the
    version the tree pins, wherever it is (at or past the target there is no hop left, and each component
    is judged where the cluster runs it); else the minor before the target, assumed (the hop to the
    target alone)."""
    for minor in (current, pin.minor if pin else None):
        if minor is not None:
            return minor, True
    return Minor(target.major, target.minor - 1), False


def component_timeline(tree: TreeComponents, catalog: Catalog, target: Minor, current: Minor | None = None,
                       unknown: str = "warn", charts: ChartVersions | None = None) -> Timeline:
    """The component state of a tree; `charts`: what helm's cache and repositories say of the charts
    the tree pins (their kubeVersion), each chart that states one planned as a component of its own.
    What the tree deploys that no data file names and no kubeVersion judges is a component with no data."""
    tracks, chart_detections = chart_tracks(tree, charts)
    # A chart whose kubeVersion states its range is judged by it: at its pin, or by its copy kept in the tree;
    # a chart helm's cache or its index says is a library deploys nothing (components.library).
    judged = {d.origin for d in chart_detections} | {pin.origin for pin in _libraries(tree.charts, charts)}
    kept = {(pin.chart, written(pin.pin)) for pin, _ in tree.local_charts}
    no_data, unknown_pins = no_data_components(
        [d for d in tree.unlisted if d.origin not in judged
         and not (d.source == "chart" and (d.component, written(d.pin)) in kept)], [*catalog.components, *tracks])
    if tracks or no_data:
        catalog = Catalog({**catalog.components, **tracks, **no_data}, catalog.crd_rules, catalog.hop_notes)
    states = component_states(by_component([*tree.detections, *chart_detections, *unknown_pins]), catalog)
    pin = cluster_pin(tree)
    start, known = timeline_start(target, current, pin)
    from scanner.rulebook import load_rulebook

    rulebook = load_rulebook()
    if not known:  # each install is judged from the newest minor its release is stated to run on
        start = min([judged_from(s, start, rulebook.oldest) for s in states], default=start)
    return resolve(states, start, target, catalog, tree.manifests, unknown, current_known=known,
                   released=rulebook.newest)


def chart_tracks(tree: TreeComponents, found: ChartVersions | None) -> tuple[dict[str, Component], list[Detection]]:
    """A component per chart installation whose pinned version states a kubeVersion, and its pin."""
    candidates = [(pin, [version]) for pin, version in tree.local_charts]
    if found is not None:
        libraries = set(_libraries(tree.charts, found))
        candidates += [(pin, found.for_pin(pin)) for pin in tree.charts
                       if found.for_pin(pin) and not pin.library and pin not in libraries]
    components: dict[str, Component] = {}
    detections: list[Detection] = []
    names: dict[tuple[str, str, str], str] = {}
    for pin, versions in candidates:
        name = names.get((*pin.key, pin.pin))
        if name is None:
            name = f"chart/{pin.chart}"
            if name in components:
                name = f"chart/{pin.chart}@{pin.pin}" if f"chart/{pin.chart}@{pin.pin}" not in components \
                    else f"chart/{pin.chart}@{len(components)}"
            component = chart_component(name, pin, versions)
            if component is None:
                continue
            names[(*pin.key, pin.pin)] = name
            components[name] = component
        detections.append(chart_detection(name, pin, components[name]))
    return components, detections


def _libraries(pins: Sequence[ChartPin], found: ChartVersions | None) -> list[ChartPin]:
    """The pins of library charts: marked so where the tree says it, or any version read says `type: library`."""
    return [pin for pin in pins if pin.library
            or (found is not None and any(version.library for version in found.for_pin(pin)))]


def timeline_of_manifests(manifests: Sequence[Manifest], target: Minor, current: Minor | None, unknown: str,
                          names: frozenset[str] | None = None) -> Timeline:
    """The component state from objects alone (pins in other files unseen), when a check is run
    without the scan's: `names` limits the catalog to the components that matter."""
    from scanner.components.catalog import load_catalog, load_components

    catalog = load_components(names) if names is not None else load_catalog()
    tree = TreeComponents(detections=detect_in_manifests(manifests, catalog),
                          cluster=list(cluster_pins_in_manifests(manifests)), manifests=list(manifests))
    return component_timeline(tree, catalog, target, current, unknown)
