"""Charts that state their own constraints: Chart.yaml `kubeVersion`, as a component of its own.

A chart's `kubeVersion` is a first-party fact (helm refuses to install a chart whose constraint
excludes the cluster). Where the pinned version of a chart states one, the chart becomes a
component whose releases are its versions, each supporting the minors its constraint admits,
and the component state moves it like any other: to the oldest version whose constraint admits
the hop. A chart whose pinned version states no constraint adds nothing (nobody says anything).
"""

from __future__ import annotations

from scanner.components.catalog import Component, Release
from scanner.components.chart_pins import ChartPin, ChartVersion
from scanner.components.pins import Detection
from scanner.semver import floats, parse_pin, parse_version
from scanner.versions import Minor

_NEWEST_MINOR = 99  # kubeVersion constraints are read against Kubernetes 1.0 to 1.99


def admitted(constraint: str) -> tuple[Minor | None, Minor | None, bool] | None:
    """The minors a kubeVersion constraint admits, as (min, max, open_ended); None when unreadable.

    A minor is admitted when some patch of it is (">=1.25.0-0 <1.33.0-0" admits 1.25 to 1.32)."""
    intervals = parse_pin(constraint)
    if intervals is None:
        return None
    minors = [m for m in range(_NEWEST_MINOR + 1)
              if any(i.low < (1, m + 1, 0) and (1, m, 0) < i.high for i in intervals)]
    if not minors:
        return Minor(1, _NEWEST_MINOR + 1), Minor(1, _NEWEST_MINOR + 1), False  # admits no 1.x minor
    low, high = Minor(1, minors[0]), Minor(1, minors[-1])
    if minors[-1] == _NEWEST_MINOR:
        return low, None, True
    return low, high, False


def chart_release(version: ChartVersion) -> Release:
    stated = admitted(version.kube_version) if version.kube_version else None
    low, high, open_ended = stated or (None, None, False)
    note = f'kubeVersion "{version.kube_version}"' if version.kube_version else "no kubeVersion"
    return Release(version.version, version.released, low, high, version.source, open_ended, note=note,
                   constraint=version.kube_version)


def chart_component(name: str, pin: ChartPin, versions: list[ChartVersion]) -> Component | None:
    """The chart as a component, if the pinned version states a constraint kubehop can read."""
    if floats(pin.pin):
        return None  # "*" installs the newest version, whichever it is: nothing to plan from
    releases = sorted({v.version: chart_release(v) for v in versions if parse_version(v.version)}.values(),
                      key=lambda r: r.order)
    pinned = _pinned(pin.pin, releases)
    if pinned is None or pinned.constraint is None or pinned.min is None:
        return None
    local = (pin.repository or "").startswith("tree:")
    title = f"chart {pin.chart} (kept in the tree)" if local else f"chart {pin.chart}"
    return Component(name, title, False, tuple(releases), chart_track=True)


def chart_detection(name: str, pin: ChartPin, component: Component) -> Detection:
    pinned = _pinned(pin.pin, list(component.releases))
    return Detection(name, pin.pin, (pinned,) if pinned else (), pin.origin, "chart", pin.what)


def _pinned(pin: str, releases: list[Release]) -> Release | None:
    """The oldest version a pin admits (an exact version: that version)."""
    intervals = parse_pin(pin)
    if intervals is None:
        return None
    return next((r for r in releases if any(i.low <= r.order < i.high for i in intervals)), None)
