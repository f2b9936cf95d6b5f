"""Components another project's objects install at the release one of their fields names.

The Flux Operator installs the Flux distribution its FluxInstance names (`spec.distribution.version`,
a semver range such as `2.8.x` or an exact release), and the flux-instance chart writes that
FluxInstance from its values (`instance.distribution.version`, "2.x" by default: a range over every
Flux 2 line, which the operator's own release resolves, so no pin). Data files say which
(detect.version_fields, detect.chart_values): the field is the component's pin, at the line that sets
it, as the running system reads it. Without these, a tree that runs Flux through the operator pins no
Flux at all, and its Flux CRD versions are judged against no release.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from scanner.components.catalog import Catalog, Component
from scanner.components.pins import Detection, detection
from scanner.components.values import SET, UNREAD, ReleaseValues
from scanner.model import Manifest, Origin
from scanner.nodes import scalar, value_at

Fields = dict[tuple[str, str], list[tuple[Component, tuple[str, ...]]]]
ChartValues = dict[str, list[tuple[Component, tuple[str, ...], str]]]


def installers(catalog: Catalog) -> tuple[Fields, ChartValues]:
    """(group, kind) -> the components such objects install and the path of the field; chart -> the
    components it installs, the path of the value and the chart's default."""
    fields: Fields = {}
    charts: ChartValues = {}
    for component in catalog.components.values():
        for group, kind, path in component.version_fields:
            fields.setdefault((group, kind), []).append((component, path))
        for chart, path, default in component.chart_values:
            charts.setdefault(chart, []).append((component, path, default))
    return fields, charts


def field_pins(fields: Fields, manifest: Manifest) -> Iterator[Detection]:
    """The pins an object's version fields name."""
    for component, path in fields.get((manifest.group, manifest.kind), ()):
        node = value_at(manifest.node, *path)
        version = scalar(node)
        if version and "${" not in version and _one_line(component, version):
            at = manifest.origin_at(node)  # `via` only for a value a Flux variable filled in: where it is used
            yield detection(component, version, False, at if manifest.filled_at(node) else
                            Origin(at.path, at.line, at.column), "field", f"{'.'.join(path)} of {manifest.object_ref}")


def values_pins(installed: Sequence[tuple[Component, tuple[str, ...], str]], values: ReleaseValues | None,
                chart_pin: Origin, what: str) -> Iterator[Detection]:
    """The pins a chart release's values name (or the chart's default): at the line that sets the value,
    else at the values' object (a ConfigMap), else at the chart's pin; none where a layer that could set
    it cannot be read, or it is a variable substituted at deploy time."""
    for component, path, default in installed:
        state, value, at = values.value(path) if values is not None else (None, None, None)
        if state is UNREAD:
            continue
        version = value if state is SET else default
        if not _readable(version) or not _one_line(component, str(version)):
            continue
        said = "its values" if state is SET else "the chart's default"
        yield detection(component, str(version), False, at or chart_pin, "field",
                        f"{'.'.join(path)} {version!r} ({said}) of {what}")


def _one_line(component: Component, version: str) -> bool:
    """A version that names one release line (2.5.1, 2.5.x), or one the data does not know: a range over
    several lines (the chart's default 2.x) is whatever the installer's own release resolves it to, which
    kubehop cannot tell, so it pins nothing (and another pin of the component, if any, stands)."""
    return len(component.releases_admitted(version, False) or ()) <= 1


def _readable(version: Any) -> bool:
    return isinstance(version, (str, int, float)) and not isinstance(version, bool) and "${" not in str(version) \
        and bool(str(version).strip())
