"""Which release each install of a component runs: the component state's starting point.

Pins are grouped into installs: the pins of the most trusted kind (PIN_RANK) that write one version
are one install, planned together; pins of different versions (two clusters, two overlays, a bootstrap
and its GitOps successor) are planned apart, each reported at its own files ("Longhorn 1.6.1" must not
speak for the overlays that pin 1.6.2).
"""

from __future__ import annotations

import dataclasses

from scanner.components.catalog import Catalog, Component, Release, release_key
from scanner.components.pins import Detection
from scanner.semver import parse_version
from scanner.components.timeline import ComponentState
from scanner.versions import Minor


def component_states(detections: dict[str, list[Detection]], catalog: Catalog) -> list[ComponentState]:
    """One state per install of each detected component, planned from the release its pins install.

    A range ("1.x", ">=1.24 <1.31") installs the newest release it admits: Flux, Argo CD and
    `helm dependency update` all resolve it so, at every reconcile. A pin without an upper bound
    ("*", ">=1.2") installs whatever is newest: its release is unknown. A version the data does not
    list (an image tag older than its releases) is planned from as a release whose range is unknown;
    a placeholder (0.0.x) is no release. A component with no data (components.unlisted) has no release.
    """
    states = []
    for name, found in sorted(detections.items()):
        component = catalog.components[name]
        best = min(d.rank for d in found)
        installs = by_version([d for d in found if d.rank == best])
        for version, pins in installs.items():
            key = name if len(installs) == 1 else f"{name}@{version}"
            states.append(ComponentState(component, pins, None if component.no_data else _start(component, pins),
                                         key=key))
    return states


def by_version(pins: list[Detection]) -> dict[str, list[Detection]]:
    """Pins grouped by the version they write: "v1.6.2" and "1.6.2" are one, "1.6.x" another."""
    groups: dict[str, list[Detection]] = {}
    for detection in pins:
        groups.setdefault(written(detection.pin), []).append(detection)
    return dict(sorted(groups.items(), key=lambda item: _order(item[0])))


def written(pin: str) -> str:
    parsed = parse_version(pin)
    if parsed is not None and parsed.precision == 3 and pin.strip().lstrip("vV")[:1].isdigit():
        return pin.strip().lstrip("vV")
    return pin.strip()


def _order(version: str) -> tuple:
    parsed = parse_version(version)
    return (0, parsed.floor, version) if parsed is not None else (1, (0, 0, 0), version)


def _start(component: Component, pins: list[Detection]) -> Release | None:
    admitted = [_installed(d) for d in pins if not d.floating and d.releases]
    if not admitted:
        admitted = [r for d in pins if not d.floating and (d.source != "chart" or component.chart_lines is None)
                    for r in [component.unlisted(d.pin)] if r is not None]
    start = min(admitted, key=lambda r: r.key) if admitted else None
    if start is not None and start.listed:
        start = _at_pinned_patch(start, pins, component)
    return start


def _installed(detection: Detection) -> Release:
    """The release a pin installs: its only one, or the newest its range admits (releases are oldest first)."""
    return detection.releases[-1]


def _at_pinned_patch(release: Release, pins: list[Detection], component: Component) -> Release:
    """The release as the pins install it: an exact app version pins its patch (1.7.2 runs with the
    range Longhorn restated in 1.7.1); a range installs its newest patch; a chart version of its own
    numbering pins the range its chart line states itself when every pin is on such a line
    (kube-prometheus-stack 50 ships the operator of 49 with a higher kubeVersion floor), else the app
    patch the data lists it ships (_shipped), else the minor with its patch unknown."""
    exact = [d.pin for d in pins if not d.floating and (d.source != "chart" or component.chart_lines is None)
             and parse_version(d.pin) is not None and release.key == _key_or_none(d.pin)]
    if len(exact) == len(pins) and exact:
        return release.at_patch(exact[0])
    ranges = all(parse_version(d.pin) is None for d in pins)
    installed = release.effective()[-1 if ranges else 0]
    lines = {component.chart_range(d.pin) if d.source == "chart" and component.chart_lines is not None else None
             for d in pins}
    if len(lines) == 1 and (line := lines.pop()) is not None:
        stated, source = line
        return dataclasses.replace(installed, min=stated.min, max=stated.max, open_ended=stated.open_ended,
                                   through=stated.through, source=source)
    own_numbering = component.chart_lines is not None and all(d.source == "chart" for d in pins)
    if own_numbering and (shipped := _shipped(component, release, pins)) is not None:
        return shipped
    if own_numbering and not ranges and release.patches:  # chart 9.1.9 ships some 3.2.z: which, the data
        return dataclasses.replace(release, patch_unknown=True)  # does not say; its patches may disagree
    return installed


def _shipped(component: Component, release: Release, pins: list[Detection]) -> Release | None:
    """The release at the app patch its chart pins ship, where the data lists their chart versions
    (ingress-nginx chart 4.10.1 ships 1.10.1, which states Kubernetes 1.30); a range that admits chart
    versions past the newest listed ships that one's patch or a later one: where those disagree, unknown."""
    from scanner.components.chart_patches import app_patch  # a chart of its own numbering's pins

    lines = tuple(line for line, app in component.chart_lines or () if release_key(app) == release.key)
    found = {app_patch(component.chart_patches, lines, d.pin, release.key) for d in pins}
    shipped = found.pop() if len(found) == 1 else None
    if shipped is None:
        return None
    at = release.at_patch(shipped.app)
    return dataclasses.replace(at, patch_unknown=True) if shipped.or_later and at.patches else at


def _key_or_none(version: str) -> tuple[int, int] | None:
    parsed = parse_version(version)
    return tuple(parsed.floor[:2]) if parsed is not None and parsed.precision >= 2 else None  # type: ignore


def judged_from(state: ComponentState, before_target: Minor, oldest: Minor) -> Minor:
    """Where an install is judged when the cluster's minor is unknown: from the newest minor its release
    is stated to run on (the hop after it is the first it may break), else the hop to the target alone."""
    stated = state.start.max if state.start is not None else None
    if stated is None or stated >= before_target:
        return before_target
    return max(stated, oldest)
