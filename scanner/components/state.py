"""Component state: which release of each component runs at each Kubernetes minor, and why.

The layer under both the checks and the plan: `resolve` steps every detected component through
the hops from the current minor to the target, moving it only as far as each hop needs (the
oldest release known to support the hop's minor, scanner.components.moves), and records what stops
it (scanner.components.timeline holds the model). The plan draws its windows from the result; the
checks report the same facts as findings. Neither imports the other.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.components.catalog import (SUPPORTED, UNKNOWN as UNSTATED, UNSUPPORTED as EXCLUDED, Catalog, Component,
                                        CrdRule, Release, release_key)
from scanner.components.moves import evidence, route, steps, with_requirements
from scanner.semver import parse_version
from scanner.components.timeline import (BLOCKED, BLOCKER, NEWER_THAN_CLUSTER, OUTSIDE_RANGE, PIN_RANGE, REQUIRED_MOVE,
                                         REQUIRES, UNKNOWN, UNKNOWN_POLICIES, UNKNOWN_RELEASE, UNKNOWN_SUPPORT,
                                         UNSUPPORTED, UNVERIFIED, WARNING, ComponentState, Hop, Migration, Problem,
                                         Step, Timeline)
from scanner.model import Manifest
from scanner.paths import where
from scanner.versions import Minor, minor_range

if TYPE_CHECKING:
    from scanner.components.pins import Detection

__all__ = ["BLOCKED", "BLOCKER", "NEWER_THAN_CLUSTER", "OUTSIDE_RANGE", "PIN_RANGE", "REQUIRED_MOVE", "REQUIRES",
           "UNKNOWN", "UNKNOWN_POLICIES", "UNKNOWN_RELEASE", "UNKNOWN_SUPPORT", "UNSUPPORTED", "UNVERIFIED", "WARNING",
           "ComponentState", "Hop", "Migration", "Problem", "Step", "Timeline", "component_states", "resolve", "route"]


def component_states(detections: dict[str, list[Detection]], catalog: Catalog) -> list[ComponentState]:
    """One state per detected component, planned from the release its pins install.

    A range ("1.x", ">=1.24 <1.31") installs the newest release it admits: Flux, Argo CD and
    `helm dependency update` all resolve it so, at every reconcile. Pins that disagree (two files
    naming two releases) are planned from the oldest they name.
    A pin without an upper bound ("*", ">=1.2") installs whatever is newest: its release is unknown.
    A version the data does not list (an image tag older than its releases) is planned from as a
    release whose range is unknown.
    """
    states = []
    for name, found in sorted(detections.items()):
        component = catalog.components[name]
        best = min(d.rank for d in found)
        pins = [d for d in found if d.rank == best]
        admitted = [_installed(d) for d in pins if not d.floating and d.releases]
        if not admitted:
            admitted = [r for d in pins if not d.floating and (d.source != "chart" or component.chart_lines is None)
                        for r in [component.unlisted(d.pin)] if r is not None]
        start = min(admitted, key=lambda r: r.key) if admitted else None
        if start is not None and start.listed:
            start = _at_pinned_patch(start, pins, component)
        states.append(ComponentState(component, pins, start))
    return states


def _installed(detection: Detection) -> Release:
    """The release a pin installs: its only one, or the newest its range admits (releases are oldest first)."""
    return detection.releases[-1]


def _at_pinned_patch(release: Release, pins: list[Detection], component: Component) -> Release:
    """The release as the pins install it: an exact app version pins its patch (1.7.2 runs with the
    range Longhorn restated in 1.7.1); a range installs its newest patch; a chart version of its own
    numbering pins the .0, with the range its chart line states itself when every pin is on such a
    line (kube-prometheus-stack 50 ships the operator of 49 with a higher kubeVersion floor)."""
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
                                   through=stated.through,
                                   source=source)
    return installed


def _key_or_none(version: str) -> tuple[int, int] | None:
    parsed = parse_version(version)
    return tuple(parsed.floor[:2]) if parsed is not None and parsed.precision >= 2 else None  # type: ignore


def resolve(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
            manifests: Sequence[Manifest] = (), unknown: str = "warn", current_known: bool = True,
            released: Minor | None = None) -> Timeline:
    """Step every component through the hops; a component blocked at a hop is not planned again.

    `unknown` (warn, block, ignore) is what a fact nobody states counts as: a warning, a blocker,
    or nothing (the moves that stay on the safe side are planned whatever it is). `current_known`:
    False when `current` is only assumed (the minor before the target), so nothing is said of it.
    `released`: the newest minor released; a hop past it is unverified for every component (no
    source can state support for a minor not out yet), and nothing moves for it."""
    minors = minor_range(current, target)
    hops = [Hop(a, b) for a, b in zip(minors, minors[1:])]
    if not hops:
        raise ValueError("a plan needs at least one hop")
    releases = {s.component.name: s.start for s in states if s.start is not None}
    by_name = {s.component.name: s for s in states}
    unverified: list[tuple[Hop, str, Release]] = []
    blocked: set[str] = set()
    reported: set[tuple[str, str]] = set()
    for hop in hops:
        if released is not None and hop.target > released:
            unverified += [(hop, name, releases[name]) for name in sorted(set(releases) - blocked)]
            continue
        unverified += [(hop, name, release) for name, release in
                       _resolve_hop(hop, by_name, releases, blocked, catalog, reported)]
    for state in states:
        state.final = releases.get(state.component.name)
    today = [p for s in states for p in _start_problems(s, current)
             if current_known or p.kind != OUTSIDE_RANGE]
    timeline = Timeline(current, target, states, hops, today, unknown=unknown)
    _unverified_problems(timeline, unverified, by_name, catalog, released)
    _pinned_moves(timeline)
    timeline.problems = _with_policy(timeline.problems, unknown)
    for hop in hops:
        hop.problems = _with_policy(hop.problems, unknown)
    timeline.migrations = list(_migrations(timeline, catalog, manifests))
    return timeline


def _with_policy(problems: list[Problem], unknown: str) -> list[Problem]:
    if unknown == "ignore":
        return [p for p in problems if p.severity != UNKNOWN]
    if unknown == "block":
        return [dataclasses.replace(p, severity=BLOCKER) if p.severity == UNKNOWN else p for p in problems]
    return problems


def _start_problems(state: ComponentState, current: Minor) -> list[Problem]:
    """What is already uncertain or wrong about a component before any hop."""
    name, title, start, pins = state.component.name, state.component.title, state.start, state.pins
    if start is None:
        return [Problem(UNKNOWN, name, _unresolved(state), UNKNOWN_RELEASE, current, pins, support=UNSTATED)]
    problems = []
    named = sorted({r.key: r for d in state.detections if not d.floating and d.releases
                    for r in [_installed(d)]}.values(), key=lambda r: r.key)
    if len(named) > 1:
        problems.append(Problem(WARNING, name, (
            f"{title}: the pins install {' and '.join(r.version for r in named)}; planned from "
            f"{start.version}, the oldest: make them agree to plan exactly"), PIN_RANGE, current, pins))
    if start.supports(current) is False:
        problems.append(Problem(WARNING, name, (
            f"{state.named(start)} does not list Kubernetes {current} (supports {start.support_text}): "
            "the cluster already runs outside its stated range"), OUTSIDE_RANGE, current, pins, support=EXCLUDED))
    return problems


def _unresolved(state: ComponentState) -> str:
    pins = ", ".join(f"{d.pin!r} at {where(d.origin.path, d.origin.line)}" for d in state.detections)
    if all(d.floating for d in state.detections):
        return f"{state.component.title}: {pins} installs the newest release, which the tree does not say; " \
               "its moves cannot be planned"
    return f"{state.component.title}: no known release matches {pins}; its moves cannot be planned"


def _resolve_hop(hop: Hop, states: dict[str, ComponentState], releases: dict[str, Release],
                 blocked: set[str], catalog: Catalog, reported: set[tuple[str, str]]) -> list[tuple[str, Release]]:
    """The moves and problems of one hop; returns the components left unverified there, with their release."""
    moves: list[Step] = []
    unverified = []
    for name in sorted(set(releases) - blocked):
        state = states[name]
        path, problem, unsure = route(state.component, releases[name], hop.source, hop.target)
        if problem:
            hop.problems.append(dataclasses.replace(problem, minor=hop.target, pins=state.pins))
            if problem.severity == BLOCKER:
                blocked.add(name)
        moves.extend(steps(state, releases[name], path, hop))
        if path:
            releases[name] = path[-1]
        if unsure:
            unverified.append((name, releases[name]))
    hop.moves = with_requirements(moves, states, releases, hop, catalog, reported)
    return unverified


def _unverified_problems(timeline: Timeline, unverified: list[tuple[Hop, str, Release]],
                         states: dict[str, ComponentState], catalog: Catalog, released: Minor | None) -> None:
    """One problem per component and release for the run of hops nobody states support for."""
    runs: dict[tuple[str, str], list[Hop]] = {}
    named: dict[tuple[str, str], str] = {}
    for hop, name, release in unverified:
        runs.setdefault((name, release.version), []).append(hop)
        named.setdefault((name, release.version), states[name].named(release))
    for (name, version), hops in runs.items():
        component, version = catalog.components[name], named[(name, version)]
        first, last = hops[0].target, hops[-1].target
        span, several = (f"{first}", False) if first == last else (f"{first}–{last}", True)
        message = (f"{version}: no release states support for Kubernetes {span}, so the "
                   f"{'hops are' if several else 'hop is'} unverified for it; {evidence(component, first)}. "
                   "Check the project's own notes before the hop")
        if released is not None and first > released:
            message = (f"{version}: Kubernetes {span} is not released yet, so no release states "
                       f"support for it: the hop is unverified for it ({evidence(component, first)})")
        hops[0].problems.append(Problem(UNKNOWN, name, message, UNVERIFIED, first, states[name].pins,
                                        support=UNVERIFIED))


def _pinned_moves(timeline: Timeline) -> None:
    """The first move of each pinned release, as a problem at its pin: the tree must change before that hop.

    A blocker when the release's stated range excludes the hop; unknown when it states nothing and a
    later release states support; a warning when another component's release requires the move."""
    first_moves: dict[int, list[Problem]] = {}
    for state in timeline.states:
        if state.start is None:
            continue
        moves = [(hop, s) for hop in timeline.hops for s in hop.moves if s.component is state.component]
        first = next(((hop, s) for hop, s in moves if s.source is state.start), None)
        if first is None:
            continue
        hop, step = first
        b, start, component = hop.target, state.start, state.component
        title = state.named(start)
        fix = tuple(f"before the hop to {h.target}: {s.label}{_gap(s)}" for h, s in moves)
        to = [s for h, s in moves if h is hop][-1].target
        support = start.support(b)
        if step.why.startswith("required by"):
            problem = Problem(WARNING, state.component.name, (
                f"{title} must move to {component.short(step.target.version)} before the hop to {b}: "
                f"{step.why}"), REQUIRED_MOVE, b, state.pins, fix)
        elif support == EXCLUDED:
            problem = Problem(BLOCKER, state.component.name,
                              f"{title} supports Kubernetes {start.support_text}, not {b}", UNSUPPORTED, b,
                              state.pins, fix, EXCLUDED, advice=(f"move it to {component.short(to.version)} before "
                                                                 f"the hop to {b} ({_support_said(to, b)})"))
        else:
            problem = Problem(UNKNOWN, state.component.name, (
                f"{title} states no support for Kubernetes {b}; {component.short(to.version)} is the oldest "
                f"release that does ({to.support_text})"), UNKNOWN_SUPPORT, b, state.pins, fix, UNSTATED,
                advice=f"move it before the hop to {b}")
        first_moves.setdefault(id(hop), []).append(problem)
    for hop in timeline.hops:
        hop.problems[:0] = first_moves.get(id(hop), [])


def _support_said(release: Release, minor: Minor) -> str:
    if release.support(minor) == SUPPORTED:
        return f"it supports {release.support_text}"
    return f"it states no range for {minor}: unverified"


def _migrations(timeline: Timeline, catalog: Catalog, manifests: Sequence[Manifest]) -> Iterable[Migration]:
    """The third-party CRD versions the tree uses that a pinned or planned release no longer serves,
    and those whose component's release kubehop cannot tell (they may be gone already)."""
    objects: dict[tuple[str, str], list[Manifest]] = {}
    for manifest in manifests:
        objects.setdefault((manifest.api_version, manifest.kind), []).append(manifest)
    if not objects:
        return
    for rule in catalog.crd_rules:
        used = tuple(objects.get((rule.api_version, rule.kind), ()))
        migration = removal(timeline, rule, used) if used else None
        if migration is not None:
            yield migration


def removal(timeline: Timeline, rule: CrdRule, objects: tuple[Manifest, ...] = ()) -> Migration | None:
    """Where the hops meet the release that stops serving `rule`'s API: the pinned release already
    dropped it, a planned move crosses its removal, or which release runs cannot be told. None: no
    release the hops run drops it (or the rule names no removal)."""
    if rule.removed_in is None:
        return None
    state = next((s for s in timeline.states if s.component.name == rule.component), None)
    if state is None or state.start is None:
        return Migration(rule, objects, unknown=True)
    removed = release_key(rule.removed_in)
    if removed <= state.start.key:
        return Migration(rule, objects)
    crossing = next(((hop, s) for hop in timeline.hops for s in hop.moves
                     if s.component is state.component and s.source.key < removed <= s.target.key), None)
    if crossing is None:
        return None
    hop, step = crossing
    return Migration(rule, objects, step, hop.target)


def _gap(step) -> str:
    """A step out of a release the data does not list, when the component moves one minor at a time:
    the minors between are the user's to take in turn (Rook 1.2 -> 1.10 is eight moves, not one)."""
    if step.source.listed or step.component.one_minor_at_a_time is not True:
        return ""
    return (f" (one minor at a time: the minors between {step.source.version} and {step.target.version} are "
            "not in kubehop's data; take each in turn)")
