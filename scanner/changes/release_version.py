"""The version a pin is set to for a component release, in the pin's own numbering.

A chart versioned like its app takes the release itself (1.17 -> chart 1.17.0, 1.8.2 -> 1.8.2). A
chart of its own numbering takes the chart line the data maps to the release (compat-matrix
`chart_versions`: kube-prometheus-stack 66 ships prometheus-operator 0.78): a range pin moves to that
line; an exact pin needs a chart version of it, which only a repository index can name (helm's cache,
or the network with --allow-network), or the data where it lists which chart version ships which app
patch (`app_patches`). Nothing is guessed: without one, the step is a person's.
"""

from __future__ import annotations

from scanner.changes.pin_text import Target
from scanner.components.catalog import Component, Release
from scanner.components.pins import Detection
from scanner.semver import line_interval, parse_version


def target_for(component: Component, release: Release, detection: Detection,
               index: list[str]) -> Target | str:
    """The Target a pin moves to; a string saying why none can be given. `index`: the chart versions
    a repository index lists for the pinned chart (empty when none was read)."""
    if detection.source == "chart" and component.chart_lines is not None:
        return _chart_line(component, release, index)
    parsed = parse_version(release.version)
    if parsed is None:
        return f"{release.version} is not a version kubehop can write"
    major, minor, patch = parsed.floor
    exact = ".".join(map(str, parsed.floor))
    if detection.source == "chart":
        exact = _newest_in((major, minor), index, at_least=(major, minor, patch)) or exact
    return Target((major, minor), (patch,), exact)


def _chart_line(component: Component, release: Release, index: list[str]) -> Target | str:
    app = ".".join(map(str, release.key))
    lines = [line for line, shipped in component.chart_lines or () if shipped == app]
    if not lines:
        return (f"the data maps no {component.title} chart version to {app} "
                f"({component.name}'s chart_versions in compat-matrix)")
    line = max(lines, key=lambda text: parse_version(text).floor)
    parts = tuple(int(p) for p in line.split("."))
    exact = _newest_in(parts, index) or _shipping(component, release, lines)
    return Target(parts, (), exact)


def _shipping(component: Component, release: Release, lines: list[str]) -> str | None:
    """The newest chart version on `lines` the data lists (`app_patches`) as shipping a patch of the
    release the plan moves to, at or after it, whose stated range covers the one the plan judged by
    (ingress-nginx 1.10.1: chart 4.10.1 or later; 1.12: 4.12.8, as an index would give), else None."""
    parsed = parse_version(release.version)
    if parsed is None:
        return None
    judged = release.range_at(release.version)
    bounds = [b for line in lines if (b := line_interval(line)) is not None]
    found = []
    for chart, app in component.chart_patches:
        chart_version, app_version = parse_version(chart), parse_version(app)
        if chart_version is None or app_version is None or "-" in chart or "-" in app \
                or app_version.floor[:2] != parsed.floor[:2] or app_version.floor < parsed.floor \
                or not any(b.low <= chart_version.floor < b.high for b in bounds):
            continue
        if app_version.floor == parsed.floor or _covers(release.range_at(app), judged):
            found.append((chart_version.floor, chart.lstrip("vV")))
    return max(found)[1] if found else None


def _covers(stated, judged) -> bool:
    """Whether a later patch's stated range keeps every minor the plan judged the release by."""
    if stated.min is None or judged.min is None or stated.min > judged.min:
        return False
    if stated.open_ended:
        return judged.open_ended or judged.max is not None
    return stated.max is not None and judged.max is not None and not judged.open_ended and stated.max >= judged.max


def _newest_in(line: tuple[int, ...], index: list[str], at_least: tuple[int, int, int] = (0, 0, 0)) -> str | None:
    """The newest release (no prerelease) of the index on `line`, at or after `at_least`."""
    bounds = line_interval(".".join(map(str, line)))
    found = []
    for version in index:
        parsed = parse_version(version)
        if parsed is None or parsed.precision < 3 or "-" in version or bounds is None:
            continue
        if bounds.low <= parsed.floor < bounds.high and parsed.floor >= at_least:
            found.append((parsed.floor, version.lstrip("vV")))
    return max(found)[1] if found else None


def missing_exact(component: Component, release: Release, target: Target) -> str:
    """Why an exact pin is not written, and what to pick."""
    line = ".".join(map(str, target.line))
    return (f"the pin names one chart version and kubehop knows no {component.title} chart version on line "
            f"{line} (it ships {component.named(release.version)}): set a {line}.x chart version (`helm search repo "
            f"<repo>/<chart> --versions`), or run again with --allow-network to read the repository's index")
