"""`kubehop components`: each detected component, where it is pinned and what the data says of it.

Three kinds of rows: components compat-matrix/ knows, charts judged by their own `kubeVersion`
(components.charts), and what the tree deploys that no data names ("no data": its support is unknown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner import __version__
from scanner.components.catalog import Catalog, Release
from scanner.components.chart_patches import exact_version
from scanner.components.pins import Detection
from scanner.components.tree import TreeComponents
from scanner.components.unlisted import NO_DATA
from scanner.report.plan_json import location
from scanner.paths import at
from scanner.freshness import data_checked, older_sources, older_sources_line
from scanner.report.plain import log_json, log_lines
from scanner.words import count

if TYPE_CHECKING:
    from scanner.components.state import Timeline

CATALOG, CHART_KUBE_VERSION, NONE = "catalog", "chart-kubeVersion", "none"  # where a row's facts come from


def _releases(detection: Detection) -> str:
    versions = [r.version for r in detection.releases]
    if not versions:
        return "unknown"
    return versions[0] if len(versions) == 1 else f"{versions[0]}…{versions[-1]}"


def _support(detection: Detection) -> str:
    if not detection.releases:
        return "unknown"
    first, last = detection.releases[0], detection.releases[-1]
    if first is last:
        return first.support_text
    return f"{first.version}: {first.support_text} … {last.version}: {last.support_text}"


def rows(tree: TreeComponents, timeline: Timeline | None = None) -> list[tuple[str, Detection]]:
    """(where the facts come from, pin) for every pin: the catalog's, then those the timeline judges by a
    chart's kubeVersion, then those it has no data on (each by component name)."""
    judged: dict[str, list[tuple[str, Detection]]] = {CHART_KUBE_VERSION: [], NONE: []}
    for state in timeline.states if timeline is not None else ():
        kind = NONE if state.component.no_data else CHART_KUBE_VERSION if state.component.chart_track else None
        if kind:
            judged[kind].extend((kind, d) for d in state.detections)
    return [(CATALOG, d) for d in tree.detections] + sorted(judged[CHART_KUBE_VERSION], key=_order) \
        + sorted(judged[NONE], key=_order)


def _order(row: tuple[str, Detection]) -> tuple:
    return (row[1].component, row[1].origin.path, row[1].origin.line)


def _sources_as_of(kind: str, detection: Detection) -> str | None:
    """The day of the sources a catalog row's facts were read from, where it is older than the data date."""
    return older_sources().get(detection.component) if kind == CATALOG else None


def installed(timeline: Timeline | None) -> dict[int, Release]:
    """pin (by id) -> the release as an exact pin installs it, where that is one patch of its one listed
    minor: the app patch a chart version ships (ingress-nginx chart 4.9.1 ships 1.9.6, which states 1.25–1.29), the
    patch an exact version pins (components.installs), with the range that patch states."""
    found: dict[int, Release] = {}
    for state in timeline.states if timeline is not None else ():
        start = state.start
        if start is None or start.patch_unknown or not start.listed:
            continue
        for detection in state.detections:
            # A range installs its newest patch, which may be past the last one that restates the range.
            if exact_version(detection.pin) and len(detection.releases) == 1 \
                    and detection.releases[0].key == start.key and start.version != detection.releases[0].version:
                found[id(detection)] = start
    return found


def _release_columns(kind: str, detection: Detection, installs: dict[int, Release]) -> tuple[str, str]:
    if kind == NONE:
        return NO_DATA, NO_DATA
    as_of = _sources_as_of(kind, detection)
    at_patch = installs.get(id(detection))
    release, support = (at_patch.version, at_patch.support_text) if at_patch else \
        (_releases(detection), _support(detection))
    return release, support + (f", sources as of {as_of}" if as_of else "")


def render_text(tree: TreeComponents, catalog: Catalog, timeline: Timeline | None = None) -> str:
    installs = installed(timeline)
    table = [(d.component, d.pin, *_release_columns(kind, d, installs), at(d.origin), d.what)
             for kind, d in rows(tree, timeline)]
    titles = ("component", "pin", "release", "Kubernetes", "pinned at", "how")
    widths = [max([len(t)] + [len(r[i]) for r in table]) for i, t in enumerate(titles[:-1])]
    lines = ["  ".join(t.ljust(w) for t, w in zip(titles, widths + [0])).rstrip()]
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths + [0])).rstrip() for row in table)
    for pin in tree.cluster:
        lines.append(f"cluster: Kubernetes {pin.minor} ({pin.version}, {pin.distro or 'kubernetes'}) "
                     f"at {at(pin.origin)}, {pin.what}")
    found = len({d.component for d in tree.detections})
    lines.append(f"{found} of {len(catalog.components)} known components detected "
                 f"(data checked {data_checked()}: releases after it are unknown to kubehop)")
    older = older_sources_line(d.component for kind, d in rows(tree, timeline) if kind == CATALOG)
    if older:
        lines.append(older)
    by_kind = {kind: sorted({d.component for k, d in rows(tree, timeline) if k == kind})
               for kind in (CHART_KUBE_VERSION, NONE)}
    if by_kind[CHART_KUBE_VERSION]:
        lines.append(f"{count(len(by_kind[CHART_KUBE_VERSION]), 'chart')} judged by the kubeVersion "
                     "its pinned version states")
    if by_kind[NONE]:
        lines.append(f"{count(len(by_kind[NONE]), 'deployed component')} kubehop has no data on (support "
                     f"unknown at every hop; --unknown says what that counts as): {', '.join(by_kind[NONE])}")
    return log_lines(lines)  # one line each: nothing from the tree breaks one (report/plain.py)


def _installed_json(release: Release | None) -> dict | None:
    if release is None:
        return None
    return {"release": release.version, "min": str(release.min) if release.min else None,
            "max": str(release.max) if release.max else None, "open_ended": release.open_ended,
            "source": release.source}


def render_json(tree: TreeComponents, timeline: Timeline | None = None) -> str:
    installs = installed(timeline)
    document = {
        "tool": {"name": "kubehop", "version": __version__, "data_checked": data_checked(),
                 "older_sources": older_sources()},
        "components": [{
            "component": d.component, "pin": d.pin, "releases": [r.version for r in d.releases],
            "kubernetes": [{"release": r.version, "min": str(r.min) if r.min else None,
                            "max": str(r.max) if r.max else None, "open_ended": r.open_ended,
                            "stated_through": str(r.through) if r.through else None, "released": r.released,
                            "source": r.source, "source_kind": r.source_kind, "note": r.note} for r in d.releases],
            # the release as the pin installs it (an app patch the chart version ships), where that is known
            "installs": _installed_json(installs.get(id(d))),
            **location(d.origin), "how": d.source, "what": d.what,
            "sources_as_of": _sources_as_of(kind, d),  # where the facts were read from an older copy
            "data": kind,  # catalog (compat-matrix/), chart-kubeVersion (the chart's own), none (no data)
        } for kind, d in rows(tree, timeline)],
        "cluster": [{"version": p.version, "minor": str(p.minor), "distro": p.distro, **location(p.origin),
                     "what": p.what} for p in tree.cluster],
    }
    return log_json(document)
