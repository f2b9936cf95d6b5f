"""Which app patch a chart version of its own numbering ships, where the data says so.

A chart line names an app minor (ingress-nginx chart 4.10 ships controller 1.10); its patches may
ship any patch of it (4.9.0 ships 1.9.5, 4.9.1 ships 1.9.6). compat-matrix `chart_versions` lists
them per line (`app_patches`, read from the chart repository's index), so that a chart pin is
judged by the range its app patch states (1.10.1 restates 1.10's with Kubernetes 1.30), not the .0's.
A chart version the data does not list ships an unknown patch: never a range no source states.
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.semver import Interval, Version, line_interval, parse_pin, parse_version


@dataclass(frozen=True)
class Shipped:
    """The app patch a chart pin installs: `app` ("1.10.1"), or a later one the data does not know when
    the pin also admits chart versions past the newest it lists (`or_later`)."""

    chart: str
    app: str
    or_later: bool = False


def app_patch(pairs: tuple[tuple[str, str], ...], lines: tuple[str, ...], pin: str,
              minor: tuple[int, int]) -> Shipped | None:
    """The app patch of `minor` that a chart pin installs, from the (chart version, app version)
    `pairs`; `lines`: the chart lines that ship `minor`. An exact chart version ships its pair's; a
    range, the newest listed chart version it admits (Flux, Argo CD and helm resolve it so), `or_later`
    when it also admits chart versions on those lines past that one. None when it admits no listed one."""
    intervals = parse_pin(pin)
    if not intervals or (parse_version(pin) is not None and "-" in str(pin)):
        return None  # a prerelease (4.12.0-beta.0 ships 1.12.0-beta.0) is none of the listed releases
    admitted = [(chart, app) for chart, app in _on_minor(pairs, minor) if _admits(intervals, chart)]
    if not admitted:
        return None
    chart, app = max(admitted, key=lambda pair: pair[0])
    later = Interval((chart[0], chart[1], chart[2] + 1), (10**9, 0, 0))
    or_later = any(not part.empty for interval in intervals for line in lines
                   if (bounds := line_interval(line)) is not None
                   for part in [interval.intersect(bounds).intersect(later)])
    return Shipped(".".join(map(str, chart)), app, or_later)


def exact_version(pin: str) -> str | None:
    """"4.10.1" of an exact release pin ("v4.10.1", "=4.10.1"); None for a range or a prerelease."""
    text = str(pin).strip().lstrip("=").strip()
    parsed = parse_version(text)
    if parsed is None or parsed.precision < 3 or "-" in text:
        return None
    return ".".join(map(str, parsed.floor))


def _on_minor(pairs: tuple[tuple[str, str], ...], minor: tuple[int, ...]) -> list[tuple[Version, str]]:
    found = []
    for chart, app in pairs:
        chart_version, app_version = parse_version(chart), parse_version(app)
        if chart_version is None or app_version is None or app_version.floor[:2] != tuple(minor):
            continue
        found.append((chart_version.floor, app))
    return found


def _admits(intervals: list[Interval], version: Version) -> bool:
    return any(interval.low <= version < interval.high for interval in intervals)
