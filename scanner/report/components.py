"""`kubehop components`: each detected component, where it is pinned and what the data says of it.

Three kinds of rows: components compat-matrix/ knows, charts judged by their own `kubeVersion`
(components.charts), and what the tree deploys that no data names ("no data": its support is unknown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner import __version__
from scanner.components.catalog import Catalog
from scanner.components.pins import Detection
from scanner.components.tree import TreeComponents
from scanner.components.unlisted import NO_DATA
from scanner.report.plan_json import location
from scanner.paths import at
from scanner.freshness import data_checked
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


def render_text(tree: TreeComponents, catalog: Catalog, timeline: Timeline | None = None) -> str:
    table = [(d.component, d.pin, NO_DATA if kind == NONE else _releases(d), NO_DATA if kind == NONE else _support(d),
              at(d.origin), d.what) for kind, d in rows(tree, timeline)]
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
    by_kind = {kind: sorted({d.component for k, d in rows(tree, timeline) if k == kind})
               for kind in (CHART_KUBE_VERSION, NONE)}
    if by_kind[CHART_KUBE_VERSION]:
        lines.append(f"{count(len(by_kind[CHART_KUBE_VERSION]), 'chart')} judged by the kubeVersion "
                     "its pinned version states")
    if by_kind[NONE]:
        lines.append(f"{count(len(by_kind[NONE]), 'deployed component')} kubehop has no data on (support "
                     f"unknown at every hop; --unknown says what that counts as): {', '.join(by_kind[NONE])}")
    return log_lines(lines)  # one line each: nothing from the tree breaks one (report/plain.py)


def render_json(tree: TreeComponents, timeline: Timeline | None = None) -> str:
    document = {
        "tool": {"name": "kubehop", "version": __version__, "data_checked": data_checked()},
        "components": [{
            "component": d.component, "pin": d.pin, "releases": [r.version for r in d.releases],
            "kubernetes": [{"release": r.version, "min": str(r.min) if r.min else None,
                            "max": str(r.max) if r.max else None, "open_ended": r.open_ended,
                            "stated_through": str(r.through) if r.through else None, "released": r.released,
                            "source": r.source, "source_kind": r.source_kind, "note": r.note} for r in d.releases],
            **location(d.origin), "how": d.source, "what": d.what,
            "data": kind,  # catalog (compat-matrix/), chart-kubeVersion (the chart's own), none (no data)
        } for kind, d in rows(tree, timeline)],
        "cluster": [{"version": p.version, "minor": str(p.minor), "distro": p.distro, **location(p.origin),
                     "what": p.what} for p in tree.cluster],
    }
    return log_json(document)
