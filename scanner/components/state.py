"""Component state: which release of each component runs at each Kubernetes minor, and why.

The layer under both the checks and the plan: `resolve` steps every detected component through
the hops from the current minor to the target, moving it only as far as each hop needs (the
oldest release known to support the hop's minor, scanner.components.moves), and records what stops
it (scanner.components.timeline holds the model). The plan draws its windows from the result; the
checks report the same facts as findings. Neither imports the other.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from scanner.components.catalog import (SUPPORTED, UNKNOWN as UNSTATED, UNSUPPORTED as EXCLUDED, Catalog,
                                        CrdRule, Release, release_key)
from scanner.components.installs import component_states, judged_from
from scanner.components.moves import evidence, no_range_said, route, steps, with_requirements
from scanner.components.timeline import (BLOCKED, BLOCKER, NEWER_THAN_CLUSTER, NO_DATA, OUTSIDE_RANGE, REQUIRED_MOVE,
                                         REQUIRES, UNKNOWN, UNKNOWN_POLICIES, UNKNOWN_RELEASE, UNKNOWN_SUPPORT,
                                         UNSUPPORTED, UNVERIFIED, WARNING, ComponentState, Hop, Migration, Problem,
                                         Step, Timeline)
from scanner.model import Manifest
from scanner.paths import where
from scanner.versions import Minor, minor_range

__all__ = ["BLOCKED", "BLOCKER", "NEWER_THAN_CLUSTER", "NO_DATA", "OUTSIDE_RANGE", "REQUIRED_MOVE", "REQUIRES",
           "UNKNOWN", "UNKNOWN_POLICIES", "UNKNOWN_RELEASE", "UNKNOWN_SUPPORT", "UNSUPPORTED", "UNVERIFIED", "WARNING",
           "ComponentState", "Hop", "Migration", "Problem", "Step", "Timeline", "component_states", "resolve", "route"]


def resolve(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
            manifests: Sequence[Manifest] = (), unknown: str = "warn", current_known: bool = True,
            released: Minor | None = None) -> Timeline:
    """Step every component through the hops; a component blocked at a hop is not planned again.

    `unknown` (warn, block, ignore) is what a fact nobody states counts as: a warning, a blocker,
    or nothing (the moves that stay on the safe side are planned whatever it is). `current_known`:
    False when `current` is only assumed (the minor before the target), so nothing is said of it.
    `released`: the newest minor released; a hop past it is unverified for every component (no
    source can state support for a minor not out yet), and nothing moves for it. With the cluster at the
    target (or past it) no hop is left: each install is judged at `current` alone, and a release the
    cluster already runs outside its range moves there (Timeline.moves)."""
    minors = minor_range(current, target)
    hops = [Hop(a, b) for a, b in zip(minors, minors[1:])]
    # Where each install is first judged: the current minor; when it is only assumed, the newest minor
    # the install's release is stated to run on (so a release is judged at the hop it breaks, not at the target).
    starts = {s.key: current if current_known else max(current, judged_from(s, hops[-1].source, current))
              for s in states}
    releases = {s.key: s.start for s in states if s.start is not None}
    by_key = {s.key: s for s in states}
    unverified: list[tuple[Hop, str, Release]] = []
    blocked: set[str] = set()
    reported: set[tuple[str, str]] = set()
    for hop in hops:
        judged = {key for key in releases if starts[key] <= hop.source} - blocked
        if released is not None and hop.target > released:
            unverified += [(hop, key, releases[key]) for key in sorted(judged)]
            continue
        unverified += [(hop, key, release) for key, release in
                       _resolve_hop(hop, by_key, releases, judged, blocked, catalog, reported)]
    for state in states:
        state.final = releases.get(state.key)
    today = [p for s in states for p in _start_problems(s, current)
             if current_known or p.kind != OUTSIDE_RANGE]
    if not current_known:  # `current` is only assumed: an unknown release is the first hop its install is judged at
        today = [dataclasses.replace(p, minor=starts[p.state].next()) if p.kind == UNKNOWN_RELEASE else p
                 for p in today]
    today += [_no_data(s, starts[s.key].next(), target) for s in states
              if s.component.no_data and starts[s.key] < target]
    timeline = Timeline(current, target, states, hops, today, unknown=unknown)
    if not hops:
        _moves_at_current(timeline)
    _unverified_problems(timeline, unverified, by_key, catalog, released)
    _pinned_moves(timeline)
    timeline.problems = _with_policy(timeline.problems, unknown)
    for hop in hops:
        hop.problems = _with_policy(hop.problems, unknown)
    timeline.migrations = list(_migrations(timeline, catalog, manifests))
    return timeline


def _moves_at_current(timeline: Timeline) -> None:
    """With no hop left, what the first hop's moves would do: each release the cluster already runs
    outside its stated range moves, on the current minor, to the oldest release stated to support it
    (through each minor between when the component moves one minor at a time); its outside-range
    problem names the moves."""
    current, by_key = timeline.current, {s.key: s for s in timeline.states}
    hop = Hop(current, current)
    for i, problem in enumerate(timeline.problems):
        state = by_key.get(problem.state or "")
        if problem.kind != OUTSIDE_RANGE or problem.support != EXCLUDED or state is None or state.start is None:
            continue
        path, _, _ = route(state.component, state.start, current, current)
        if not path:  # no release states support for the minor: the warning says what is known
            continue
        moved = steps(state, state.start, path, hop)
        timeline.moves += moved
        state.final = path[-1]
        to, component = path[-1], state.component
        between = f" one minor at a time, through {_listed([component.short(r.version) for r in path[:-1]])}" \
            if len(path) > 1 else ""
        timeline.problems[i] = dataclasses.replace(
            problem, fix=tuple(f"at {current}: {s.label}{_gap(s)}" for s in moved),
            advice=f"move it to {component.short(to.version)}{between} ({_support_said(to, current)})")


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _with_policy(problems: list[Problem], unknown: str) -> list[Problem]:
    if unknown == "ignore":
        return [p for p in problems if p.severity != UNKNOWN]
    if unknown == "block":
        return [dataclasses.replace(p, severity=BLOCKER) if p.severity == UNKNOWN else p for p in problems]
    return problems


def _start_problems(state: ComponentState, current: Minor) -> list[Problem]:
    """What is already uncertain or wrong about an install before any hop."""
    name, start, pins = state.component.name, state.start, state.pins
    if state.component.no_data:
        return []
    if start is None:
        return [Problem(UNKNOWN, name, _unresolved(state), UNKNOWN_RELEASE, current, pins, support=UNSTATED,
                        state=state.key)]
    if start.supports(current) is False:
        return [Problem(WARNING, name, (
            f"{state.named(start)} does not list Kubernetes {current} (supports {start.support_text}): "
            "the cluster already runs outside its stated range"), OUTSIDE_RANGE, current, pins, support=EXCLUDED,
            state=state.key)]
    if start.patch_unknown and start.supports(current) is None and start.range.supports(current) is False:
        return [Problem(WARNING, name, (
            f"{state.named(start)} {no_range_said(start, 'Kubernetes ' + str(current))}: the cluster may already "
            "run outside its stated range"), OUTSIDE_RANGE, current, pins, support=UNSTATED, state=state.key)]
    return []


def _no_data(state: ComponentState, first: Minor, target: Minor) -> Problem:
    """A component the tree deploys that no data file names: unknown at every hop from `first` on."""
    span = f"{first}" if first == target else f"{first}–{target}"
    pin = state.detections[0].pin
    version = f" {pin}" if pin != "*" else " (no version pinned)"
    return Problem(UNKNOWN, state.component.name, (
        f"{state.component.name}{version} is deployed, but kubehop has no data on it: whether it "
        f"supports Kubernetes {span} is unknown; check the project's own compatibility notes before the "
        f"{'hop' if first == target else 'hops'}"), NO_DATA, first, state.pins, support=UNSTATED, state=state.key)


def _unresolved(state: ComponentState) -> str:
    pins = ", ".join(f"{d.pin!r} at {where(d.origin.path, d.origin.line)}" for d in state.detections)
    if all(d.floating for d in state.detections):
        return f"{state.component.title}: {pins} installs the newest release, which the tree does not say; " \
               "its moves cannot be planned"
    component = state.component
    newest = ""
    if component.releases:  # the reader can tell a pin newer than the data from a typo
        last = component.releases[-1]
        lines = component.chart_lines_of(last.version) if component.chart_lines else None
        named = f"{last.version} (chart {lines})" if lines else last.version  # pins may be chart versions
        newest = f" (the newest release kubehop knows is {named}" + \
                 (f", released {last.released}" if last.released else "") + _newest_chart_line(state) + ")"
    return f"{component.title}: no known release matches {pins}{newest}; its moves cannot be planned"


def _newest_chart_line(state: ComponentState) -> str:
    """For chart-version pins of a chart versioned apart from its app: the newest chart line the data
    maps, which a chart version past it is not (kube-vip chart 0.11.0, where the lines end at 0.9)."""
    lines = state.component.chart_lines
    if not lines or not any(d.source == "chart" for d in state.detections):
        return ""
    line, app = max(lines, key=lambda entry: tuple(int(part) for part in entry[0].split(".")))
    if app == state.component.releases[-1].version:
        return ""  # named with the newest release already: "1.13 (chart 1.45–1.46)"
    return f"; the newest chart line it maps is {line}, which ships {app}: a chart version past it is unknown"


def _resolve_hop(hop: Hop, states: dict[str, ComponentState], releases: dict[str, Release], judged: set[str],
                 blocked: set[str], catalog: Catalog, reported: set[tuple[str, str]]) -> list[tuple[str, Release]]:
    """The moves and problems of one hop for the installs judged there; returns those left unverified,
    with their release."""
    moves: list[Step] = []
    unverified = []
    for key in sorted(judged):
        state = states[key]
        path, problem, unsure = route(state.component, releases[key], hop.source, hop.target)
        if problem:
            hop.problems.append(dataclasses.replace(problem, minor=hop.target, pins=state.pins, state=key))
            if problem.severity == BLOCKER:
                blocked.add(key)
        moves.extend(steps(state, releases[key], path, hop))
        if path:
            releases[key] = path[-1]
        if unsure:
            unverified.append((key, releases[key]))
    hop.moves = with_requirements(moves, states, releases, hop, catalog, reported)
    return unverified


def _unverified_problems(timeline: Timeline, unverified: list[tuple[Hop, str, Release]],
                         states: dict[str, ComponentState], catalog: Catalog, released: Minor | None) -> None:
    """One problem per install and release for the run of hops nobody states support for."""
    runs: dict[tuple[str, str], list[Hop]] = {}
    named: dict[tuple[str, str], str] = {}
    for hop, key, release in unverified:
        runs.setdefault((key, release.version), []).append(hop)
        named.setdefault((key, release.version), states[key].named(release))
    for (key, version), hops in runs.items():
        component, version = states[key].component, named[(key, version)]
        first, last = hops[0].target, hops[-1].target
        span, several = (f"{first}", False) if first == last else (f"{first}–{last}", True)
        message = (f"{version}: no release states support for Kubernetes {span}, so the "
                   f"{'hops are' if several else 'hop is'} unverified for it; {evidence(component, first)}. "
                   "Check the project's own notes before the hop")
        if released is not None and first > released:
            message = (f"{version}: Kubernetes {span} is not released yet, so no release states "
                       f"support for it: the hop is unverified for it ({evidence(component, first)})")
        hops[0].problems.append(Problem(UNKNOWN, component.name, message, UNVERIFIED, first, states[key].pins,
                                        support=UNVERIFIED, state=key))


def _pinned_moves(timeline: Timeline) -> None:
    """The first move of each pinned release, as a problem at its pin: the tree must change before that hop.

    A blocker when the release's stated range excludes the hop; unknown when it states nothing and a
    later release states support; a warning when another component's release requires the move."""
    first_moves: dict[int, list[Problem]] = {}
    for state in timeline.states:
        if state.start is None:
            continue
        moves = [(hop, s) for hop in timeline.hops for s in hop.moves if s.state == state.key]
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
                f"{step.why}"), REQUIRED_MOVE, b, state.pins, fix, state=state.key)
        elif support == EXCLUDED:
            problem = Problem(BLOCKER, state.component.name,
                              f"{title} supports Kubernetes {start.support_text}, not {b}", UNSUPPORTED, b,
                              state.pins, fix, EXCLUDED, state=state.key,
                              advice=(f"move it to {component.short(to.version)} before the hop to {b} "
                                      f"({_support_said(to, b)})"))
        else:
            problem = Problem(UNKNOWN, state.component.name, (
                f"{title} {no_range_said(start, 'Kubernetes ' + str(b))}; {component.short(to.version)} is the oldest "
                f"release {_that_does(start, b)} ({to.support_text})"), UNKNOWN_SUPPORT, b, state.pins, fix, UNSTATED,
                state=state.key, advice=f"move it before the hop to {b}")
        first_moves.setdefault(id(hop), []).append(problem)
        later = next((h for h in timeline.hops if h.target > b and start.support(h.target) == EXCLUDED), None)
        if problem.severity != BLOCKER and later is not None:  # unknown at its first move, excluded further on
            first_moves.setdefault(id(later), []).append(Problem(
                BLOCKER, component.name, f"{title} supports Kubernetes {start.support_text}, not {later.target}",
                UNSUPPORTED, later.target, state.pins, fix, EXCLUDED, state=state.key,
                advice=f"move it before the hop to {b}"))
    for hop in timeline.hops:
        hop.problems[:0] = first_moves.get(id(hop), [])


def _that_does(start: Release, minor: Minor) -> str:
    return "that does" if start.listed else f"stated to support Kubernetes {minor}"


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
    release the hops run drops it (or the rule names no removal). With several installs of the
    component, the first of them to lose the API decides (the objects may be any install's)."""
    if rule.removed_in is None:
        return None
    installs = [s for s in timeline.states if s.component.name == rule.component]
    if not installs or any(s.start is None for s in installs):
        return Migration(rule, objects, unknown=True)
    removed = release_key(rule.removed_in)
    if any(removed <= s.start.key for s in installs):
        return Migration(rule, objects)
    keys = {s.key for s in installs}
    moves = [(hop.target, s) for hop in timeline.hops for s in hop.moves] + [(timeline.current, s)
                                                                             for s in timeline.moves]
    crossing = next(((minor, s) for minor, s in moves
                     if s.state in keys and s.source.key < removed <= s.target.key), None)
    if crossing is None:
        return None
    minor, step = crossing
    return Migration(rule, objects, step, minor, now=not timeline.hops)


def _gap(step) -> str:
    """A step out of a release the data does not list, when the component moves one minor at a time:
    the minors between are the user's to take in turn (Rook 1.2 -> 1.10 is eight moves, not one)."""
    if step.source.listed or step.component.one_minor_at_a_time is not True:
        return ""
    return (f" (one minor at a time: the minors between {step.source.version} and {step.target.version} are "
            "not in kubehop's data; take each in turn)")
