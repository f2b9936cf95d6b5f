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
from typing import TYPE_CHECKING, Sequence

from scanner.checks import component_support, crd_component_removal
from scanner.checks.component_support import problem_findings
from scanner.checks.crd_component_removal import migration_findings
from scanner.checks.registry import info_of
from scanner.components.catalog import Catalog, HopNote
from scanner.components.pins import ClusterPin
from scanner.components.state import (BLOCKER, UNKNOWN, WARNING, ComponentState, Migration, Problem, Step,
                                      Timeline, component_states, resolve)
from scanner.model import Finding, Manifest
from scanner.paths import where  # files named as every report names them
from scanner.versions import Minor, minor_range

if TYPE_CHECKING:
    from scanner.analysis import Analysis
    from scanner.options import ScanOptions
    from scanner.rulebook import Rulebook

__all__ = ["BLOCKER", "UNKNOWN", "WARNING", "ComponentState", "Migration", "Plan", "PlanInputError", "PlanRequest",
           "Problem", "Step", "Window", "build_plan", "component_states", "plan_of"]


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

    # Every finding a scan of the same tree reports, in the window of the hop it breaks (before the
    # first hop: already broken, or at any version): the window's verdict counts these.
    findings: list[Finding] = field(default_factory=list)

    @property
    def blocker_count(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warning_count(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

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
    timeline: Timeline | None = None
    input_errors: int = 0  # inputs that could not be read (the scan counts them in its verdict too)
    current_said_by: str = ""  # where `current` was read (scanner.current_minor), for a person
    analysis: "Analysis | None" = None  # what the plan is a view of (where the minors came from, inputs)

    @property
    def findings(self) -> list[Finding]:
        """What `kubehop scan` reports for the same tree and minors: one verdict, counted the same."""
        return [f for w in self.windows for f in w.findings]

    @property
    def blocker_count(self) -> int:
        return sum(w.blocker_count for w in self.windows)

    @property
    def warning_count(self) -> int:
        return sum(w.warning_count for w in self.windows)

    @property
    def blocked(self) -> bool:
        return self.blocker_count > 0


def build_plan(states: list[ComponentState], current: Minor, target: Minor, catalog: Catalog,
               manifests: Sequence[Manifest] = (), findings: Sequence[Finding] = (),
               distro: str = "kubernetes", current_from: ClusterPin | None = None,
               distro_from: str = "default", timeline: Timeline | None = None,
               component_findings: Sequence[Finding] | None = None) -> Plan:
    """The windows of a plan, drawn from the component state (`timeline`, resolved here when not given).

    `findings` are the scan's other findings (core APIs, fields, CRDs in the tree...); the
    component layer's own are `component_findings`, else made from the timeline as `scan` makes them."""
    timeline = timeline or resolve(states, current, target, catalog, manifests)
    windows = [Window(i + 1, hop.source, hop.target, before=list(hop.moves), problems=list(hop.problems))
               for i, hop in enumerate(timeline.hops)]
    windows[0].problems[:0] = timeline.problems
    _suggest_early_moves(windows, timeline.states)
    by_hop = {w.target: w for w in windows}
    for migration in timeline.migrations:
        (windows[0] if migration.hop is None else by_hop[migration.hop]).migrations.append(migration)
    _attach_findings(windows, findings, current, api=True)
    if component_findings is None:
        component_findings = problem_findings(timeline) + migration_findings(timeline, current)
    _attach_findings(windows, component_findings, current, api=False)
    for window in windows:
        window.notes = _notes(catalog, distro, window.target)
    return Plan(current, target, distro, current_from, distro_from, timeline.states, windows, timeline=timeline)


def _suggest_early_moves(windows: list[Window], states: list[ComponentState]) -> None:
    """After a hop, a move a later window needs may land already, if it runs on every minor between."""
    for state in states:
        key, last_move = state.key, 0
        for k, window in enumerate(windows):
            steps = [s for s in window.before if s.state == key]
            if not steps:
                continue
            step = steps[0]
            for j in range(last_move, k):
                between = minor_range(windows[j].target, window.source)
                if all(step.target.supports(m) for m in between):
                    windows[j].after.append(Step(step.component, step.source, step.target, step.pins,
                                                 f"may land from here on; required before the hop to {window.target}",
                                                 step.state))
                    break
            last_move = k


def _attach_findings(windows: list[Window], findings: Sequence[Finding], current: Minor, api: bool) -> None:
    """Each finding to the window of the hop where it breaks; what is broken already, or at any
    version, to the first. `api`: the errors are listed as the window's API blockers (the component
    layer's own are shown as its moves, problems and migrations instead)."""
    by_hop = {w.target: w for w in windows}
    for finding in findings:
        hop = max(finding.breaks_in, current.next()) if finding.breaks_in is not None else windows[0].target
        window = by_hop.get(hop, windows[-1] if hop > windows[-1].target else windows[0])
        window.findings.append(finding)
        if api and finding.severity == "error":
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
    current: Minor | None = None  # None: read it as scanner.current_minor says
    distro: str | None = None  # None: read it from the cluster's version string
    version_file: ClusterPin | None = None  # what a saved `kubectl version -o json` says (cli_shared.options_of)
    unknown: str = "warn"  # --unknown: what a fact nobody states counts as (warn, block, ignore)
    # Everything the scan of the same tree is given (exclusions, ignored rules, severities, the user's
    # rules, the baseline, --allow-network, --cluster-state, --helm-releases, --values...): the plan is
    # a view of the same analysis (None: the defaults).
    options: ScanOptions | None = None
    allow_network: bool = False  # without `options`
    cluster: str | None = None  # --cluster: of a repository of several clusters, plan this one


def plan_of(analysis: "Analysis", request: PlanRequest) -> Plan:
    """The plan of one cluster's analysis."""
    from scanner.components.catalog import load_catalog
    from scanner.current_minor import resolve_current
    from scanner.rulebook import load_rulebook

    found, current = analysis.current_from, analysis.current
    if current >= request.target:
        raise PlanInputError(f"the cluster is at {current} ({found.said_by}): --target {request.target} is not newer")
    catalog = load_catalog()
    rulebook = load_rulebook(request.options.rule_folders if request.options else ())
    rule_ids = {f.rule_id for f in analysis.findings}  # the layer is told by the rule: each rule once
    in_layer = {rule_id for rule_id in rule_ids if _from_component_layer(rule_id, rulebook)}
    layer = [f for f in analysis.findings if f.rule_id in in_layer]
    others = [f for f in analysis.findings if f.rule_id not in in_layer]
    # The distribution is the tree's word even where --from gave the minor.
    tree_pin = found.pin or resolve_current(request.target, version_file=request.version_file,
                                            pins=analysis.tree.cluster).pin
    distro, distro_from = _distro(request.distro, tree_pin)
    plan = build_plan(analysis.timeline.states, current, request.target, catalog, analysis.manifests, others,
                      distro, found.pin, distro_from, analysis.timeline, layer)
    plan.current_said_by = found.said_by
    plan.analysis = analysis
    plan.input_errors = len(analysis.input_errors)
    return plan


def _from_component_layer(rule_id: str, rulebook: Rulebook) -> bool:
    """Whether the component checks made its findings (a component's problem, a CRD rule's migration): the
    plan shows those as moves and migrations, not as API blockers."""
    return any(info_of(check, rule_id, rulebook) is not None for check in (component_support, crd_component_removal))


def _distro(given: str | None, pin: ClusterPin | None) -> tuple[str, str]:
    if given:
        return given, "--distro"
    if pin is not None and pin.distro:

        return pin.distro, f"{pin.version} at {where(pin.origin.path, pin.origin.line)}"
    return "kubernetes", "default"
