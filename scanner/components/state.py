"""Component state: which release of each component runs at each Kubernetes minor, and why.

The layer under both the checks and the plan: `resolve` steps every detected component through
the hops from the current minor to the target, moving it only as far as each hop needs (the
oldest release known to support the hop's minor), and records what stops it. The plan draws its
windows from the result; the checks report the same facts as findings. Neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.components.catalog import Catalog, Component, CrdRule, Release, release_key
from scanner.model import Manifest, Origin
from scanner.versions import Minor, minor_range

if TYPE_CHECKING:
    from scanner.components.detect import Detection

BLOCKER, UNKNOWN, WARNING = "blocker", "unknown", "warning"


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
    severity: str  # BLOCKER, UNKNOWN or WARNING
    component: str | None
    message: str


@dataclass(frozen=True)
class Migration:
    rule: CrdRule
    objects: tuple[Manifest, ...]
    # The move that crosses the release dropping the API; None: the pinned release already dropped it.
    step: Step | None = None
    hop: Minor | None = None  # the hop whose move crosses the removal (None: already)

    @property
    def before(self) -> str:
        """The component release that stops serving the API, e.g. "flux 2.9"."""
        return f"{self.rule.component} {self.rule.removed_in}"

    @property
    def already(self) -> bool:
        return self.step is None


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


def component_states(detections: dict[str, list[Detection]], catalog: Catalog) -> list[ComponentState]:
    """One state per detected component, planned from the oldest release its pins admit.

    A pin without an upper bound ("*", ">=1.2") installs whatever is newest: its release is unknown.
    """
    states = []
    for name, found in sorted(detections.items()):
        best = min(d.rank for d in found)
        pins = [d for d in found if d.rank == best]
        admitted = [r for d in pins if not d.floating for r in d.releases]
        start = min(admitted, key=lambda r: r.key) if admitted else None
        states.append(ComponentState(catalog.components[name], pins, start))
    return states


def resolve(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
            manifests: Sequence[Manifest] = ()) -> Timeline:
    """Step every component through the hops; a component blocked at a hop is not planned again."""
    minors = minor_range(current, target)
    hops = [Hop(a, b) for a, b in zip(minors, minors[1:])]
    if not hops:
        raise ValueError("a plan needs at least one hop")
    releases = {s.component.name: s.start for s in states if s.start is not None}
    by_name = {s.component.name: s for s in states}
    problems = [p for state in states for p in _start_problems(state, current)]
    blocked: set[str] = set()
    for hop in hops:
        _resolve_hop(hop, by_name, releases, blocked, catalog)
    for state in states:
        state.final = releases.get(state.component.name)
    timeline = Timeline(current, target, states, hops, problems)
    timeline.migrations = list(_migrations(timeline, catalog, manifests))
    return timeline


def _start_problems(state: ComponentState, current: Minor) -> list[Problem]:
    """What is already uncertain or wrong about a component before any hop."""
    name, title, start = state.component.name, state.component.title, state.start
    if start is None:
        return [Problem(UNKNOWN, name, _unresolved(state))]
    problems = []
    admitted = sorted({r.key: r for d in state.detections for r in d.releases}.values(), key=lambda r: r.key)
    if len(admitted) > 1:
        problems.append(Problem(WARNING, name, (
            f"{title}: the pins admit {admitted[0].version}…{admitted[-1].version}; planned from "
            f"{start.version}, the oldest: pin one minor to plan exactly")))
    if start.supports(current) is False:
        problems.append(Problem(WARNING, name, (
            f"{title} {start.version} does not list Kubernetes {current} (supports {start.support_text}): "
            "the cluster already runs outside its stated range")))
    return problems


def _unresolved(state: ComponentState) -> str:
    pins = ", ".join(f"{d.pin!r} at {d.origin.path}:{d.origin.line}" for d in state.detections)
    if all(d.floating for d in state.detections):
        return f"{state.component.title}: {pins} installs the newest release, which the tree does not say; " \
               "its moves cannot be planned"
    return f"{state.component.title}: no known release matches {pins}; its moves cannot be planned"


def _resolve_hop(hop: Hop, states: dict[str, ComponentState], releases: dict[str, Release],
                 blocked: set[str], catalog: Catalog) -> None:
    moves: list[Step] = []
    for name in sorted(set(releases) - blocked):
        path, problem = route(states[name].component, releases[name], hop.source, hop.target)
        if problem:
            hop.problems.append(problem)
            if problem.severity == BLOCKER:
                blocked.add(name)
        moves.extend(_steps(states[name], releases[name], path, hop))
        if path:
            releases[name] = path[-1]
    hop.moves = _with_requirements(moves, states, releases, hop, catalog)


def route(component: Component, start: Release, a: Minor, b: Minor) -> tuple[list[Release], Problem | None]:
    """The releases to step through, on Kubernetes a, so that the component runs on b."""
    support = start.supports(b)
    if support:
        return [], None
    if start.min is not None and b < start.min:
        return [], Problem(WARNING, component.name, (
            f"{component.title} {start.version} states support for {start.support_text} only: "
            f"Kubernetes {b} is below that range"))
    if support is None:
        return [], Problem(UNKNOWN, component.name, (
            f"{component.title} {start.version}: support for Kubernetes {b} is unknown "
            f"(stated range {start.support_text})"))
    later = component.releases[component.index(start) + 1:]
    supporting = [r for r in later if r.supports(b)]
    if not supporting:
        unknown = [r.version for r in later if r.supports(b) is None]
        detail = f"; {', '.join(unknown)}: range unknown" if unknown else ""
        return [], Problem(BLOCKER, component.name,
                           f"no known release of {component.title} supports Kubernetes {b}{detail}")
    goal = supporting[0]
    if goal.supports(a) is False:
        return [], Problem(BLOCKER, component.name, (
            f"no known release of {component.title} supports both {a} and {b} "
            f"({goal.version} supports {goal.support_text}): it cannot move before the hop"))
    if component.one_minor_at_a_time:
        return later[:later.index(goal) + 1], None
    return [goal], None


def _steps(state: ComponentState, start: Release, path: list[Release], hop: Hop) -> list[Step]:
    steps, source = [], start
    for release in path:
        why = f"{release.version} supports {release.support_text}"
        if release is not path[-1]:
            why += f" (one minor at a time: {release.version} comes first)"
        elif state.component.one_minor_at_a_time is None and _skips(state.component, source, release):
            why += "; whether minors may be skipped is unknown"
        if release.supports(hop.source) is False:
            why += f"; does not list {hop.source}, where it must run until the hop"
        steps.append(Step(state.component, source, release, state.pins, why))
        source = release
    return steps


def _skips(component: Component, source: Release, target: Release) -> bool:
    return component.index(target) - component.index(source) > 1


def _with_requirements(moves: list[Step], states: dict[str, ComponentState], releases: dict[str, Release],
                       hop: Hop, catalog: Catalog) -> list[Step]:
    """Moves a release requires of another component (Gateway API CRDs for Cilium) come first."""
    first: list[Step] = []
    for step in moves:
        for name, version in step.target.requires:
            component = catalog.components.get(name)
            needed = component.release(version) if component else None
            have = releases.get(name)
            if needed is None or name not in states:
                missing = "a release the data does not list" if name in states else "not found in the tree"
                hop.problems.append(Problem(WARNING, step.component.name,
                                            f"{step.label} requires {name} {version}: {missing}"))
            elif have is not None and have.key < needed.key:
                first.append(Step(component, have, needed, states[name].pins,
                                  f"required by {step.component.title} {step.target.version}"))
                releases[name] = needed
    return first + moves


def _migrations(timeline: Timeline, catalog: Catalog, manifests: Sequence[Manifest]) -> Iterable[Migration]:
    """The third-party CRD versions the tree uses that a pinned or planned release no longer serves."""
    objects: dict[tuple[str, str], list[Manifest]] = {}
    for manifest in manifests:
        objects.setdefault((manifest.api_version, manifest.kind), []).append(manifest)
    if not objects:
        return
    for state in timeline.states:
        if state.start is None:
            continue
        for rule in catalog.rules_for(state.component.name):
            used = tuple(objects.get((rule.api_version, rule.kind), ()))
            if not used or rule.removed_in is None:
                continue
            removed = release_key(rule.removed_in)
            if removed <= state.start.key:
                yield Migration(rule, used)
                continue
            crossing = next(((hop, s) for hop in timeline.hops for s in hop.moves
                             if s.component is state.component and s.source.key < removed <= s.target.key), None)
            if crossing is not None:
                hop, step = crossing
                yield Migration(rule, used, step, hop.target)
