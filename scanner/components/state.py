"""Component state: which release of each component runs at each Kubernetes minor, and why.

The layer under both the checks and the plan: `resolve` steps every detected component through
the hops from the current minor to the target, moving it only as far as each hop needs (the
oldest release known to support the hop's minor), and records what stops it. The plan draws its
windows from the result; the checks report the same facts as findings. Neither imports the other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.components.catalog import (SUPPORTED, UNKNOWN as UNSTATED, UNSUPPORTED as EXCLUDED, Catalog, Component,
                                        CrdRule, Release, release_key)
from scanner.model import Manifest, Origin
from scanner.report.paths import where
from scanner.versions import Minor, minor_range

if TYPE_CHECKING:
    from scanner.components.detect import Detection

BLOCKER, UNKNOWN, WARNING = "blocker", "unknown", "warning"
# --unknown: what an unknown fact (support nobody states, a release kubehop cannot tell) counts as.
UNKNOWN_POLICIES = ("warn", "block", "ignore")

# What a problem is about; a finding's rule is component/<name>/<kind>.
UNSUPPORTED = "unsupported"  # the pinned release's stated range excludes a hop's minor; a move fixes it
UNKNOWN_SUPPORT = "unknown-support"  # the pinned release states nothing for a hop; a release that does exists
UNVERIFIED = "unverified"  # no release states support for a hop's minor
BLOCKED = "blocked"  # no release can run on a hop's minor (or on both sides of it)
UNKNOWN_RELEASE = "unknown-release"  # which release runs cannot be told from the pins
PIN_RANGE = "pin-range"  # the pins admit several releases
OUTSIDE_RANGE = "outside-range"  # the cluster already runs outside the release's stated range
NEWER_THAN_CLUSTER = "newer-than-cluster"  # the release states support only from a later minor
REQUIRES = "requires"  # a release needs another component the data or the tree does not give
REQUIRED_MOVE = "required-move"  # the pinned release moves because another component's release needs it


@dataclass(frozen=True)
class Step:
    component: Component
    source: Release
    target: Release
    pins: tuple[Origin, ...]  # where to edit the version
    why: str

    @property
    def label(self) -> str:
        return f"{self.component.name} {self.source.version} → {self.target.version}"


@dataclass(frozen=True)
class Problem:
    severity: str  # BLOCKER, UNKNOWN or WARNING, after the --unknown policy
    component: str | None
    message: str
    kind: str = ""  # one of the kinds above
    minor: Minor | None = None  # the hop's minor it is about; None: today
    pins: tuple[Origin, ...] = ()  # where the component is pinned
    fix: tuple[str, ...] = ()  # the moves that clear it, one line each
    support: str | None = None  # the state behind it: supported, unsupported, unknown or unverified


@dataclass(frozen=True)
class Migration:
    rule: CrdRule
    objects: tuple[Manifest, ...]
    # The move that crosses the release dropping the API; None: the pinned release already dropped it.
    step: Step | None = None
    hop: Minor | None = None  # the hop whose move crosses the removal (None: already, or unknown)
    # kubehop cannot tell which release of the component runs: it may have dropped the API already.
    unknown: bool = False

    @property
    def before(self) -> str:
        """The component release that stops serving the API, e.g. "flux 2.9"."""
        return f"{self.rule.component} {self.rule.removed_in}"

    @property
    def already(self) -> bool:
        return self.step is None and not self.unknown


@dataclass
class ComponentState:
    component: Component
    detections: list[Detection]  # the pins the plan edits (the most trusted kind found)
    start: Release | None  # None: no known release matches the pins
    final: Release | None = None

    @property
    def pins(self) -> tuple[Origin, ...]:
        return tuple(d.origin for d in self.detections)


@dataclass
class Hop:
    """One hop, source → target: the moves that land before it and what stops a component there."""

    source: Minor
    target: Minor
    moves: list[Step] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Timeline:
    """Every component through every hop from `current` to `target`."""

    current: Minor
    target: Minor
    states: list[ComponentState]
    hops: list[Hop]
    problems: list[Problem]  # about today, before any hop
    migrations: list[Migration] = field(default_factory=list)
    unknown: str = "warn"  # the --unknown policy it was resolved with

    @property
    def all_problems(self) -> list[Problem]:
        return self.problems + [p for hop in self.hops for p in hop.problems]


def component_states(detections: dict[str, list[Detection]], catalog: Catalog) -> list[ComponentState]:
    """One state per detected component, planned from the oldest release its pins admit.

    A pin without an upper bound ("*", ">=1.2") installs whatever is newest: its release is unknown.
    A version the data does not list (an image tag older than its releases) is planned from as a
    release whose range is unknown.
    """
    states = []
    for name, found in sorted(detections.items()):
        component = catalog.components[name]
        best = min(d.rank for d in found)
        pins = [d for d in found if d.rank == best]
        admitted = [r for d in pins if not d.floating for r in d.releases]
        if not admitted:
            admitted = [r for d in pins if not d.floating and (d.source != "chart" or component.chart_lines is None)
                        for r in [component.unlisted(d.pin)] if r is not None]
        start = min(admitted, key=lambda r: r.key) if admitted else None
        states.append(ComponentState(component, pins, start))
    return states


def resolve(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
            manifests: Sequence[Manifest] = (), unknown: str = "warn", current_known: bool = True) -> Timeline:
    """Step every component through the hops; a component blocked at a hop is not planned again.

    `unknown` (warn, block, ignore) is what a fact nobody states counts as: a warning, a blocker,
    or nothing (the moves that stay on the safe side are planned whatever it is). `current_known`:
    False when `current` is only assumed (the minor before the target), so nothing is said of it."""
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
        unverified += [(hop, name, release) for name, release in
                       _resolve_hop(hop, by_name, releases, blocked, catalog, reported)]
    for state in states:
        state.final = releases.get(state.component.name)
    today = [p for s in states for p in _start_problems(s, current)
             if current_known or p.kind != OUTSIDE_RANGE]
    timeline = Timeline(current, target, states, hops, today, unknown=unknown)
    _unverified_problems(timeline, unverified, by_name, catalog)
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
    admitted = sorted({r.key: r for d in state.detections for r in d.releases}.values(), key=lambda r: r.key)
    if len(admitted) > 1:
        problems.append(Problem(WARNING, name, (
            f"{title}: the pins admit {admitted[0].version}…{admitted[-1].version}; planned from "
            f"{start.version}, the oldest: pin one minor to plan exactly"), PIN_RANGE, current, pins))
    if start.supports(current) is False:
        problems.append(Problem(WARNING, name, (
            f"{title} {start.version} does not list Kubernetes {current} (supports {start.support_text}): "
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
        moves.extend(_steps(state, releases[name], path, hop))
        if path:
            releases[name] = path[-1]
        if unsure:
            unverified.append((name, releases[name]))
    hop.moves = _with_requirements(moves, states, releases, hop, catalog, reported)
    return unverified


def route(component: Component, start: Release, a: Minor, b: Minor) -> tuple[list[Release], Problem | None, bool]:
    """The releases to step through, on Kubernetes a, so that the component runs on b.

    Returns the path, what stops the component, and whether the hop is unverified for it (no
    release states support for b, and none is stated to exclude it where it would run)."""
    support = start.support(b)
    if support == SUPPORTED:
        return [], None, False
    if support == EXCLUDED and start.min is not None and b < start.min:
        return [], Problem(WARNING, component.name, (
            f"{component.title} {start.version} states support for {start.support_text} only: "
            f"Kubernetes {b} is below that range"), NEWER_THAN_CLUSTER, support=EXCLUDED), False
    later = component.releases_after(start)
    stated = [r for r in later if r.support(b) == SUPPORTED]
    runnable = [r for r in stated if r.support(a) != EXCLUDED]
    if runnable:
        return _path(component, later, runnable[0]), None, False
    if support == UNSTATED:
        return [], None, True  # it may run on b: nothing says it does not, nothing says another does
    if stated:
        goal = stated[0]
        return [], Problem(BLOCKER, component.name, (
            f"no known release of {component.title} supports both {a} and {b} "
            f"({goal.version} supports {goal.support_text}): it cannot move before the hop"), BLOCKED,
            support=EXCLUDED), False
    maybe = [r for r in later if r.support(b) == UNSTATED and r.support(a) != EXCLUDED]
    if maybe:
        return _path(component, later, maybe[0]), None, True
    return [], Problem(BLOCKER, component.name, (
        f"no known release of {component.title} supports Kubernetes {b}: {start.version} supports "
        f"{start.support_text}; {_evidence(component, b)}"), BLOCKED, support=EXCLUDED), False


def _path(component: Component, later: Sequence[Release], goal: Release) -> list[Release]:
    if component.one_minor_at_a_time:
        return list(later[:later.index(goal) + 1])
    return [goal]


def _evidence(component: Component, b: Minor) -> str:
    """What the data does say about the newest releases, for a hop nobody states support for."""
    newest = component.releases[-1]
    when = f", released {newest.released}" if newest.released else ""
    parts = [f"the newest release kubehop knows is {newest.version}{when}, "
             f"{'stated range ' + newest.support_text if newest.support_text != 'unknown' else 'no stated range'}"]
    ranged = next((r for r in reversed(component.releases) if r.support_text != "unknown"), None)
    if ranged is not None and ranged is not newest:
        parts.append(f"the newest stated range is {ranged.version}'s, {ranged.support_text}")
    return "; ".join(parts)


def _steps(state: ComponentState, start: Release, path: list[Release], hop: Hop) -> list[Step]:
    steps, source = [], start
    for release in path:
        why = f"{release.version} supports {release.support_text}"
        if release.support(hop.target) == UNSTATED:
            why = f"{source.version} supports {source.support_text}; {release.version} states no support for " \
                  f"{hop.target} either way (unverified)"
        elif release is path[-1] and source.support(hop.target) == UNSTATED:
            why = (f"{source.version} states no support for {hop.target}; {release.version} is the oldest release "
                   f"that does ({release.support_text})")
        if release is not path[-1]:
            why += f" (one minor at a time: {release.version} comes first)"
        elif state.component.one_minor_at_a_time is None and _skips(state.component, source, release):
            why += "; whether minors may be skipped is unknown"
        if not source.listed and steps == []:
            why += f"; the data lists no release between {source.version} and {release.version}"
        if release.support(hop.source) == EXCLUDED:
            why += f"; does not list {hop.source}, where it must run until the hop"
        steps.append(Step(state.component, source, release, state.pins, why))
        source = release
    return steps


def _skips(component: Component, source: Release, target: Release) -> bool:
    return len([r for r in component.releases if source.key < r.key <= target.key]) > 1


def _with_requirements(moves: list[Step], states: dict[str, ComponentState], releases: dict[str, Release],
                       hop: Hop, catalog: Catalog, reported: set[tuple[str, str]]) -> list[Step]:
    """Moves a release requires of another component (Gateway API CRDs for Cilium) come first."""
    first: list[Step] = []
    for step in moves:
        for name, version in step.target.requires:
            component = catalog.components.get(name)
            needed = component.release(version) if component else None
            have = releases.get(name)
            if needed is None or name not in states:
                missing = "a release the data does not list" if name in states else "not found in the tree"
                if (step.component.name, name) not in reported:  # once per component and requirement
                    reported.add((step.component.name, name))
                    hop.problems.append(Problem(WARNING, step.component.name,
                                                f"{step.label} requires {name} {version}: {missing}", REQUIRES,
                                                hop.target, step.pins))
            elif have is not None and have.key < needed.key:
                first.append(Step(component, have, needed, states[name].pins,
                                  f"required by {step.component.title} {step.target.version}"))
                releases[name] = needed
    return first + moves


def _unverified_problems(timeline: Timeline, unverified: list[tuple[Hop, str, Release]],
                         states: dict[str, ComponentState], catalog: Catalog) -> None:
    """One problem per component and release for the run of hops nobody states support for."""
    runs: dict[tuple[str, str], list[Hop]] = {}
    for hop, name, release in unverified:
        runs.setdefault((name, release.version), []).append(hop)
    for (name, version), hops in runs.items():
        component = catalog.components[name]
        first, last = hops[0].target, hops[-1].target
        span, several = (f"{first}", False) if first == last else (f"{first}–{last}", True)
        message = (f"{component.title} {version}: no release states support for Kubernetes {span}, so the "
                   f"{'hops are' if several else 'hop is'} unverified for it; {_evidence(component, first)}. "
                   "Check the project's own notes before the hop")
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
        title, b, start = state.component.title, hop.target, state.start
        fix = tuple(f"before the hop to {h.target}: {s.label}" for h, s in moves)
        to = [s for h, s in moves if h is hop][-1].target
        support = start.support(b)
        if step.why.startswith("required by"):
            problem = Problem(WARNING, state.component.name, (
                f"{title} {start.version} must move to {step.target.version} before the hop to {b}: "
                f"{step.why}"), REQUIRED_MOVE, b, state.pins, fix)
        elif support == EXCLUDED:
            problem = Problem(BLOCKER, state.component.name, (
                f"{title} {start.version} supports Kubernetes {start.support_text}, not {b}: move it to "
                f"{to.version} before the hop to {b} ({_support_said(to, b)})"), UNSUPPORTED, b, state.pins, fix,
                EXCLUDED)
        else:
            problem = Problem(UNKNOWN, state.component.name, (
                f"{title} {start.version} states no support for Kubernetes {b}; {to.version} is the oldest "
                f"release that does ({to.support_text}): move it before the hop to {b}"), UNKNOWN_SUPPORT, b,
                state.pins, fix, UNSTATED)
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
