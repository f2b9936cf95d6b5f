"""The pins of Flux HelmReleases as each overlay builds them (sources/kustomize/overlays.py).

An overlay that patches a base HelmRelease's chart version pins its own release, at the patch line
that sets it; releases of different versions stay apart. A base that names no version of its own,
that overlays give one, pins nothing by itself: its `*` would be a release nobody deploys.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

from scanner.components.catalog import Catalog
from scanner.components.chart_pins import ChartPin
from scanner.components.detect import PinFinder
from scanner.components.pins import Detection
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest
from scanner.nodes import scalar, value_at

if TYPE_CHECKING:  # a one-file scan imports nothing of the kustomize source
    from scanner.sources.kustomize.overlays import Overlaid


def overlaid_pins(overlaid: Sequence[Overlaid], catalog: Catalog, manifests: Sequence[Manifest],
                  problems: list[Diagnostic], charts: list[ChartPin]) -> list[Detection]:
    finder = PinFinder(catalog, manifests, [])
    found: list[Detection] = []
    for item in overlaid:
        finder.charts = []
        try:
            pins = list(finder.helm_release(item.built))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            problems.append(unexpected(item.pin_at.path, err, item.pin_at.line, "read this object"))
            continue
        where = f" ({item.built.origin.via})" if item.built.origin.via else ""
        found += [dataclasses.replace(d, origin=item.pin_at, what=d.what + where) for d in pins]
        charts += [dataclasses.replace(c, origin=item.pin_at, what=c.what + where) for c in finder.charts]
    return found


def without_unpinned_bases(detections: list[Detection], overlaid: Sequence[Overlaid]) -> list[Detection]:
    """The pins less the `*` of a base HelmRelease that names no version where overlays give it one."""
    bases = {(o.base.origin.path, o.base.object_ref) for o in overlaid
             if scalar(value_at(o.base.node, "spec", "chart", "spec", "version")) is None}
    return [d for d in detections
            if not (d.pin == "*" and any(d.origin.path == path and d.what.startswith(ref + " ")
                                         for path, ref in bases))]
