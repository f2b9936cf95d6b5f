"""What a pin is: a component version a tree names (Detection) and the cluster's own version (ClusterPin).

The readers are `detect` (Kubernetes objects), `file_pins` (Chart.yaml, kustomizations, version
variables) and `cluster_pin` (the cluster's version); each keeps the line where a person edits the pin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from scanner.components.catalog import Catalog, Component, Release
from scanner.components.repositories import lists, mirror, readable
from scanner.semver import floats
from scanner.components.values import ReleaseValues
from scanner.model import Origin
from scanner.versions import Minor

# How much a kind of pin is trusted to say which release runs: the source a component reconciles
# itself from (Flux from its flux-manifests OCIRepository) wins over the chart or manifest a tree
# installs from (a bootstrap kustomization; a vendored copy of a chart, its appVersion, counts as a
# chart), which wins over a variable, which wins over labels and images (often sidecars).
PIN_RANK = {"source": 0, "field": 0, "chart": 1, "kustomize": 1, "vendored": 1, "variable": 2, "url": 2, "label": 3, "image": 4}
# Pins that one object stamps on many (a chart's objects share its label and image): one per file.
_STAMPED = ("label", "image")


@dataclass(frozen=True)
class Detection:
    """A component the tree installs, at the version it pins and the line to edit."""

    component: str
    pin: str  # as written: "1.16.5", ">=1.7.0 <1.8.0", "3.3.x"
    # The known releases the pin can install, oldest first; empty when none is known.
    releases: tuple[Release, ...]
    origin: Origin  # the line to edit
    source: str  # what kind of pin (a PIN_RANK key)
    what: str  # "HelmRelease flux-system/cilium (chart cilium)"
    # The Helm values the installation gives the chart (components.values); None: a pin that gives
    # none a condition could read (an image, a label, a version variable).
    values: ReleaseValues | None = field(default=None, compare=False)

    @property
    def rank(self) -> int:
        return PIN_RANK[self.source]

    @property
    def floating(self) -> bool:
        return floats(self.pin)


@dataclass(frozen=True)
class ClusterPin:
    """A version of the cluster itself, where it is written: an upgrade order, a version variable, a saved
    `kubectl version`."""

    version: str
    minor: Minor
    distro: str | None
    origin: Origin
    what: str

    @property
    def is_variable(self) -> bool:
        """A version the tree's files set for the cluster to be made with (a variable, the kubelet image of a
        machine-configuration template), rather than an upgrade order: ranked after the orders, and what
        `plan --fix` sets to each hop's minor."""
        return self.what.startswith(VARIABLE_PREFIXES)


# How a variable pin's `what` starts: "variable k3s_version", "kubelet image ghcr.io/siderolabs/kubelet".
VARIABLE_PREFIXES = ("variable ", "kubelet image ")


def by_component(detections: Iterable[Detection]) -> dict[str, list[Detection]]:
    grouped: dict[str, list[Detection]] = {}
    for detection in detections:
        grouped.setdefault(detection.component, []).append(detection)
    return grouped


def unique(detections: Iterable[Detection]) -> list[Detection]:
    """One label or image pin per component, pin and file: a chart's 20 objects with one label are one
    pin. Other pins are each a line to edit (two remote resources at one ?ref= are two edits)."""
    seen: dict[tuple[str, str, str, str, int], Detection] = {}
    for d in sorted(detections, key=lambda d: (d.origin.path, d.origin.line, d.origin.column)):
        seen.setdefault((d.component, d.pin, d.origin.path, d.source, 0 if d.source in _STAMPED else d.origin.line), d)
    return sorted(seen.values(), key=lambda d: (d.component, d.rank, d.origin.path, d.origin.line))


def origin_of(path: str, node: Any) -> Origin:
    return Origin(path, node.start_mark.line + 1, node.start_mark.column + 1)


def detection(component: Component, pin: str, chart_version: bool, origin: Origin, source: str,
               what: str, values: ReleaseValues | None = None) -> Detection:
    releases = component.releases_admitted(pin, chart_version)
    return Detection(component.name, pin, releases or (), origin, source, what, values)


def component_for_chart(catalog: Catalog, chart: str | None, repo: str | None) -> Component | None:
    """The component a chart installs (components.repositories): from a Helm repository, only a
    component whose data lists that repository (or a mirror of it); from one kubehop cannot read, the
    one component that names the chart."""
    if not chart:
        return None
    candidates = [c for c in catalog.components.values() if c.has_chart(chart)]
    if readable(repo) and not mirror(repo):
        candidates = [c for c in candidates
                      if any(lists(c_chart.repositories, repo, chart) for c_chart in c.charts if c_chart.name == chart)]
    return candidates[0] if len(candidates) == 1 else None
