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

from scanner.components.catalog import Catalog, HopNote
from scanner.components.detect import ClusterPin, by_component
from scanner.components.tree import TreeComponents
from scanner.components.state import (BLOCKER, UNKNOWN, WARNING, ComponentState, Migration, Problem, Step,
                                      Timeline, component_states, resolve)
from scanner.model import Finding, Manifest
from scanner.versions import Minor, minor_range

__all__ = ["BLOCKER", "UNKNOWN", "WARNING", "ComponentState", "Migration", "Plan", "PlanInputError", "PlanRequest",
           "Problem", "Step", "Window", "build_plan", "component_states", "plan_paths"]


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
    # The upgrade orders that perform the hop (scanner.orders.write.WrittenFile), when the tree has some.
    orders: list = field(default_factory=list)

    @property
    def blocker_count(self) -> int:
        return len(self.api_blockers) + sum(p.severity == BLOCKER for p in self.problems)

    def migrations_before(self, step: Step | None) -> list[Migration]:
        """The migrations to finish before `step` (None: those due already, before any move)."""
        return [m for m in self.migrations if m.step is step]


@dataclass
class Plan:
    current: Minor
    target: Minor
    distro: str
    current_from: ClusterPin | None  # where --from was read, when it was not given
    distro_from: str  # "--distro", a version string, or "default"
    components: list[ComponentState]
    windows: list[Window]
    orders_folder: str | None = None  # where plan --orders wrote each window's orders
    order_notes: list[str] = field(default_factory=list)  # orders not written, and why

    @property
    def blocker_count(self) -> int:
        return sum(w.blocker_count for w in self.windows)

    @property
    def blocked(self) -> bool:
        return self.blocker_count > 0


def build_plan(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
               manifests: Sequence[Manifest] = (), findings: Sequence[Finding] = (),
               distro: str = "kubernetes", current_from: ClusterPin | None = None,
               distro_from: str = "default", timeline: Timeline | None = None) -> Plan:
    """The windows of a plan, drawn from the component state (`timeline`, resolved here when not given)."""
    timeline = timeline or resolve(states, current, target, catalog, manifests)
    windows = [Window(i + 1, hop.source, hop.target, before=list(hop.moves), problems=list(hop.problems))
               for i, hop in enumerate(timeline.hops)]
    windows[0].problems[:0] = timeline.problems
    _suggest_early_moves(windows, timeline.states)
    by_hop = {w.target: w for w in windows}
    for migration in timeline.migrations:
        (windows[0] if migration.hop is None else by_hop[migration.hop]).migrations.append(migration)
    _attach_api_blockers(windows, findings, current)
    for window in windows:
        window.notes = _notes(catalog, distro, window.target)
    return Plan(current, target, distro, current_from, distro_from, timeline.states, windows)


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
    from scanner.components.detect import cluster_pin_from_version_json
    from scanner.components.tree import detect
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
