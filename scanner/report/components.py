"""`kubehop components`: each detected component, where it is pinned and what the data says of it."""

from __future__ import annotations

from scanner import __version__
from scanner.components.catalog import Catalog
from scanner.components.pins import Detection
from scanner.components.tree import TreeComponents
from scanner.report.plan_json import location
from scanner.paths import at
from scanner.freshness import data_checked
from scanner.report.plain import log_json, log_lines


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


def render_text(tree: TreeComponents, catalog: Catalog) -> str:
    rows = [(d.component, d.pin, _releases(d), _support(d),
             at(d.origin), d.what) for d in tree.detections]
    titles = ("component", "pin", "release", "Kubernetes", "pinned at", "how")
    widths = [max([len(t)] + [len(r[i]) for r in rows]) for i, t in enumerate(titles[:-1])]
    lines = ["  ".join(t.ljust(w) for t, w in zip(titles, widths + [0])).rstrip()]
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths + [0])).rstrip() for row in rows)
    for pin in tree.cluster:
        lines.append(f"cluster: Kubernetes {pin.minor} ({pin.version}, {pin.distro or 'kubernetes'}) "
                     f"at {at(pin.origin)}, {pin.what}")
    found = len({d.component for d in tree.detections})
    lines.append(f"{found} of {len(catalog.components)} known components detected "
                 f"(data checked {data_checked()}: releases after it are unknown to kubehop)")
    return log_lines(lines)  # one line each: nothing from the tree breaks one (report/plain.py)


def render_json(tree: TreeComponents) -> str:
    document = {
        "tool": {"name": "kubehop", "version": __version__, "data_checked": data_checked()},
        "components": [{
            "component": d.component, "pin": d.pin, "releases": [r.version for r in d.releases],
            "kubernetes": [{"release": r.version, "min": str(r.min) if r.min else None,
                            "max": str(r.max) if r.max else None, "open_ended": r.open_ended,
                            "stated_through": str(r.through) if r.through else None, "released": r.released,
                            "source": r.source, "source_kind": r.source_kind, "note": r.note} for r in d.releases],
            **location(d.origin), "how": d.source, "what": d.what,
        } for d in tree.detections],
        "cluster": [{"version": p.version, "minor": str(p.minor), "distro": p.distro, **location(p.origin),
                     "what": p.what} for p in tree.cluster],
    }
    return log_json(document)
