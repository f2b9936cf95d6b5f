"""The lockstep planner: what must move, in which order, around each Kubernetes minor hop.

For every hop (from a to b) the plan holds one window:
  1. component moves that must land before the hop (each step of a one-minor-at-a-time chain),
     with the third-party CRD migrations those moves force;
  2. API blockers from the scanner;
  3. the hop itself;
  4. component moves that may land after it (they spread the work of a later window);
  5. hop notes for the distribution.
A component moves only as far as the hop needs (the oldest release known to support b).
Unknown support ranges stay unknown: they are reported, never taken as support.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from scanner.components.catalog import Catalog, Component, CrdRule, HopNote, Release, release_key
from scanner.components.detect import ClusterPin, Detection, TreeComponents, by_component
from scanner.model import Finding, Manifest, Origin
from scanner.versions import Minor, minor_range

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
class Migration:
    rule: CrdRule
    objects: tuple[Manifest, ...]
    # The move that crosses the release dropping the API; None: the pinned release already dropped it.
    step: Step | None = None

    @property
    def before(self) -> str:
        """The component release that stops serving the API, e.g. "flux 2.9"."""
        return f"{self.rule.component} {self.rule.removed_in}"

    @property
    def already(self) -> bool:
        return self.step is None


@dataclass(frozen=True)
class Problem:
    severity: str  # BLOCKER, UNKNOWN or WARNING
    component: str | None
    message: str


@dataclass
class Window:
    number: int
    source: Minor
    target: Minor
    before: list[Step] = field(default_factory=list)
    migrations: list[Migration] = field(default_factory=list)
    api_blockers: list[Finding] = field(default_factory=list)
    after: list[Step] = field(default_factory=list)
    notes: list[HopNote] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def blocker_count(self) -> int:
        return len(self.api_blockers) + sum(p.severity == BLOCKER for p in self.problems)

    def migrations_before(self, step: Step | None) -> list[Migration]:
        """The migrations to finish before `step` (None: those due already, before any move)."""
        return [m for m in self.migrations if m.step is step]


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
class Plan:
    current: Minor
    target: Minor
    distro: str
    current_from: ClusterPin | None  # where --from was read, when it was not given
    distro_from: str  # "--distro", a version string, or "default"
    components: list[ComponentState]
    windows: list[Window]

    @property
    def blocker_count(self) -> int:
        return sum(w.blocker_count for w in self.windows)

    @property
    def blocked(self) -> bool:
        return self.blocker_count > 0


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


def build_plan(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
               manifests: Sequence[Manifest] = (), findings: Sequence[Finding] = (),
               distro: str = "kubernetes", current_from: ClusterPin | None = None,
               distro_from: str = "default") -> Plan:
    minors = minor_range(current, target)
    windows = [Window(i + 1, a, b) for i, (a, b) in enumerate(zip(minors, minors[1:]))]
    releases = {s.component.name: s.start for s in states if s.start is not None}
    by_name = {s.component.name: s for s in states}
    for state in states:
        _first(windows).problems.extend(_start_problems(state, current))
    blocked: set[str] = set()
    for window in windows:
        _plan_window(window, by_name, releases, blocked, catalog)
    for state in states:
        state.final = releases.get(state.component.name)
    _suggest_early_moves(windows, states)
    _attach_migrations(windows, states, catalog, manifests)
    _attach_api_blockers(windows, findings, current)
    for window in windows:
        window.notes = _notes(catalog, distro, window.target)
    return Plan(current, target, distro, current_from, distro_from, states, windows)


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


def _first(windows: list[Window]) -> Window:
    if not windows:
        raise ValueError("a plan needs at least one hop")
    return windows[0]


def _unresolved(state: ComponentState) -> str:
    pins = ", ".join(f"{d.pin!r} at {d.origin.path}:{d.origin.line}" for d in state.detections)
    if all(d.floating for d in state.detections):
        return f"{state.component.title}: {pins} installs the newest release, which the tree does not say; " \
               "its moves cannot be planned"
    return f"{state.component.title}: no known release matches {pins}; its moves cannot be planned"


def _plan_window(window: Window, states: dict[str, ComponentState], releases: dict[str, Release],
                 blocked: set[str], catalog: Catalog) -> None:
    """Plan one hop; a component blocked at an earlier hop is not planned again (its blocker stands)."""
    moves: list[Step] = []
    for name in sorted(set(releases) - blocked):
        path, problem = route(states[name].component, releases[name], window.source, window.target)
        if problem:
            window.problems.append(problem)
            if problem.severity == BLOCKER:
                blocked.add(name)
        moves.extend(_steps(states[name], releases[name], path, window))
        if path:
            releases[name] = path[-1]
    window.before = _with_requirements(moves, states, releases, window, catalog)


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


def _steps(state: ComponentState, start: Release, path: list[Release], window: Window) -> list[Step]:
    steps, source = [], start
    for release in path:
        why = f"{release.version} supports {release.support_text}"
        if release is not path[-1]:
            why += f" (one minor at a time: {release.version} comes first)"
        elif state.component.one_minor_at_a_time is None and _skips(state.component, source, release):
            why += "; whether minors may be skipped is unknown"
        if release.supports(window.source) is False:
            why += f"; does not list {window.source}, where it must run until the hop"
        steps.append(Step(state.component, source, release, state.pins, why))
        source = release
    return steps


def _skips(component: Component, source: Release, target: Release) -> bool:
    return component.index(target) - component.index(source) > 1


def _with_requirements(moves: list[Step], states: dict[str, ComponentState], releases: dict[str, Release],
                       window: Window, catalog: Catalog) -> list[Step]:
    """Moves a release requires of another component (Gateway API CRDs for Cilium) come first."""
    first: list[Step] = []
    for step in moves:
        for name, version in step.target.requires:
            component = catalog.components.get(name)
            needed = component.release(version) if component else None
            have = releases.get(name)
            if needed is None or name not in states:
                missing = "a release the data does not list" if name in states else "not found in the tree"
                window.problems.append(Problem(WARNING, step.component.name,
                                               f"{step.label} requires {name} {version}: {missing}"))
            elif have is not None and have.key < needed.key:
                first.append(Step(component, have, needed, states[name].pins,
                                  f"required by {step.component.title} {step.target.version}"))
                releases[name] = needed
    return first + moves


def _suggest_early_moves(windows: list[Window], states: list[ComponentState]) -> None:
    """After a hop, a move a later window needs may land already, if it runs on every minor between."""
    for state in states:
        name, last_move = state.component.name, 0
        for k, window in enumerate(windows):
            steps = [s for s in window.before if s.component.name == name]
            if not steps:
                continue
            step = steps[0]
            for j in range(last_move, k):
                between = minor_range(windows[j].target, window.source)
                if all(step.target.supports(m) for m in between):
                    windows[j].after.append(Step(step.component, step.source, step.target, step.pins,
                                                 f"may land from here on; required before the hop to {window.target}"))
                    break
            last_move = k


def _attach_migrations(windows: list[Window], states: list[ComponentState], catalog: Catalog,
                       manifests: Sequence[Manifest]) -> None:
    objects: dict[tuple[str, str], list[Manifest]] = {}
    for manifest in manifests:
        objects.setdefault((manifest.api_version, manifest.kind), []).append(manifest)
    for state in states:
        if state.start is None:
            continue
        for rule in catalog.rules_for(state.component.name):
            used = tuple(objects.get((rule.api_version, rule.kind), ()))
            if not used or rule.removed_in is None:
                continue
            removed = release_key(rule.removed_in)
            if removed <= state.start.key:
                _first(windows).migrations.append(Migration(rule, used))
                continue
            crossing = next(((w, s) for w in windows for s in w.before
                             if s.component is state.component and s.source.key < removed <= s.target.key), None)
            if crossing is not None:
                window, step = crossing
                window.migrations.append(Migration(rule, used, step))


def _attach_api_blockers(windows: list[Window], findings: Sequence[Finding], current: Minor) -> None:
    for finding in findings:
        if finding.severity != "error" or finding.breaks_in is None:
            continue
        hop = max(finding.breaks_in, current.next())
        window = next((w for w in windows if w.target == hop), None)
        if window is not None:
            window.api_blockers.append(finding)


def _notes(catalog: Catalog, distro: str, minor: Minor) -> list[HopNote]:
    """Kubernetes' own notes apply to every distribution; a distribution adds its own."""
    notes = catalog.notes_for("kubernetes", minor)
    if distro != "kubernetes":
        notes += catalog.notes_for(distro, minor)
    return notes


class PlanInputError(Exception):
    """No hop to plan: --from is missing and the tree pins no version, or it is not older than the target."""


@dataclass
class PlanRequest:
    paths: list[str]
    target: Minor
    current: Minor | None = None  # None: read it from the tree or `version_file`
    distro: str | None = None  # None: read it from the cluster's version string
    version_file: str | None = None  # `kubectl version -o json` output


def plan_paths(request: PlanRequest) -> tuple[Plan, TreeComponents]:
    """Detect, scan and plan a tree: the service behind `kubehop plan`."""
    from scanner.checks import ScanContext, run_checks
    from scanner.components.catalog import load_catalog
    from scanner.components.detect import cluster_pin_from_version_json, detect
    from scanner.rulebook import load_rulebook

    catalog = load_catalog()
    tree = detect(request.paths, catalog, request.target)
    pins = sorted(tree.cluster, key=lambda p: p.minor)
    if request.version_file:
        given = cluster_pin_from_version_json(request.version_file)
        if given is None:
            raise PlanInputError(f"{request.version_file}: no serverVersion.gitVersion "
                                 "(expected the output of `kubectl version -o json`)")
        pins = [given] + pins
    pin = pins[0] if pins else None
    if request.current is None and pin is None:
        raise PlanInputError("the tree pins no cluster version: give --from or --cluster-version-file")
    current = request.current or pin.minor
    if current >= request.target:
        where = "--from" if request.current else f"{pin.version} at {pin.origin.path}:{pin.origin.line}"
        raise PlanInputError(f"the cluster is at {current} ({where}): --target {request.target} is not newer")
    distro, distro_from = _distro(request.distro, pin)
    context = ScanContext(target=request.target, current=current, rulebook=load_rulebook())
    own_rules = {rule.id for rule in catalog.crd_rules}
    findings = [f for f in run_checks(tree.manifests, context) if f.rule_id not in own_rules]
    plan = build_plan(component_states(by_component(tree.detections), catalog), current, request.target, catalog,
                      tree.manifests, findings, distro, pin if request.current is None else None, distro_from)
    return plan, tree


def _distro(given: str | None, pin: ClusterPin | None) -> tuple[str, str]:
    if given:
        return given, "--distro"
    if pin is not None and pin.distro:
        return pin.distro, f"{pin.version} at {pin.origin.path}:{pin.origin.line}"
    return "kubernetes", "default"
