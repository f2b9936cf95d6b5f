"""Components that cannot run on a hop's minor: a blocker at the line of the pin, with the moves
that unblock it; hops no release states support for are unverified (--unknown decides what that
counts as). Read from the component state, which the plan draws its windows from too: `plan`
takes its component findings from here, so both count the same things.

Its rules are `component/<name>/<kind>`: one per component of the catalog (compat-matrix/) and
kind of problem the component state reports (scanner.components.timeline); those of a chart tracked by
its own kubeVersion (component/chart/<chart>/<kind>) and of a component with no data
(component/<name>/no-data) are named from what the tree pins, told by their form.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.components.timeline import (BLOCKED, BLOCKER, NEWER_THAN_CLUSTER, NO_DATA, OUTSIDE_RANGE,
                                         REQUIRED_MOVE, REQUIRES, UNKNOWN, UNKNOWN_RELEASE, UNKNOWN_SUPPORT,
                                         UNSUPPORTED, UNVERIFIED, Problem, Timeline)
from scanner.model import Finding, Manifest, Origin
from scanner.paths import where

SCOPE = TREE
COMPONENT_RULES = "component/"  # the rule ids start with this
_SEVERITY = {BLOCKER: "error", UNKNOWN: "warning"}  # anything else: "warning"
_ALSO_EDIT = 10  # the other pins a finding names; a chart pinned by a hundred releases says how many more

# Each kind of problem: its default severity, what it says, and what it means.
_KINDS = {
    UNSUPPORTED: ("error", "the pinned release does not support a hop's minor",
                  "The release the tree pins states a range of Kubernetes minors that leaves out a hop's: move it, "
                  "one release at a time where it must, before that hop."),
    UNKNOWN_SUPPORT: ("warning", "the pinned release does not state support for a hop's minor",
                      "The release the tree pins says nothing of a hop's minor and a later one supports it: move it "
                      "before the hop (--unknown says what an unstated fact counts as)."),
    UNVERIFIED: ("warning", "no release states support for a hop's minor",
                 "No release kubehop knows states support for the minor: the hop is unverified for the component; "
                 "check the project's own notes before it (--unknown)."),
    BLOCKED: ("error", "no known release runs on a hop's minor",
              "No release kubehop knows supports the minor (or both sides of the hop): keep the cluster below it."),
    UNKNOWN_RELEASE: ("warning", "which release runs cannot be told from the pins",
                      "The pins name no release kubehop knows, or install whatever is newest: its moves cannot be "
                      "planned (--unknown)."),
    OUTSIDE_RANGE: ("warning", "the cluster already runs outside the release's stated range",
                    "The release the tree pins does not list the cluster's current minor."),
    NEWER_THAN_CLUSTER: ("warning", "the release states support only from a later minor",
                         "The release the tree pins states support from a minor above a hop's."),
    REQUIRES: ("warning", "a release needs another component that is not there",
               "A release the component moves to requires a release of another component that the data does not "
               "list or the tree does not pin."),
    REQUIRED_MOVE: ("warning", "another component's release needs this one to move",
                    "A release another component moves to requires a newer release of this one: move it first."),
}


def _rules(_rulebook) -> dict[str, RuleInfo]:
    from scanner.components.catalog import load_catalog

    return {f"{COMPONENT_RULES}{name}/{kind}": RuleInfo(
                f"{component.title}: {title}", f"{description} What kubehop knows of {component.title}'s releases is "
                f"in compat-matrix/{name}.yaml; each finding names the source of its release.", severity)
            for name, component in load_catalog().components.items()
            for kind, (severity, title, description) in _KINDS.items()}


def _chart_rule(rule_id: str) -> RuleInfo | None:
    """component/chart/<chart>/<kind>: a chart kubehop tracks by its own versions, the kubeVersion each
    states (scanner.components.charts), named from what the tree pins."""
    chart, _, kind = rule_id.removeprefix(f"{COMPONENT_RULES}chart/").rpartition("/")
    if not rule_id.startswith(f"{COMPONENT_RULES}chart/") or not chart or kind not in _KINDS:
        return None
    severity, title, description = _KINDS[kind]
    return RuleInfo(f"a chart: {title}", f"{description} A chart kept in the tree, or whose repository's index "
                    "kubehop read, is tracked by its own versions and the kubeVersion each states.", severity)


def _no_data_rule(rule_id: str) -> RuleInfo | None:
    """component/<name>/no-data: what the tree deploys that no data file names (scanner.components.unlisted),
    named from the tree (a chart, a remote base, an operator's image)."""
    from scanner.components.catalog import load_catalog

    name = rule_id.removeprefix(COMPONENT_RULES).removesuffix(f"/{NO_DATA}")
    if not rule_id.startswith(COMPONENT_RULES) or not rule_id.endswith(f"/{NO_DATA}") or not name \
            or name in load_catalog().components:
        return None
    return RuleInfo("a component kubehop has no data on", "The tree deploys it and no file of compat-matrix/ names "
                    "it, nor does its chart state a kubeVersion: its support for every hop is unknown (--unknown "
                    "says what that counts as); check the project's own compatibility notes before the hops.",
                    "warning")


def _made(rule_id: str) -> RuleInfo | None:
    return _chart_rule(rule_id) or _no_data_rule(rule_id)


RULES = Rules(_rules, pattern="component/<name>/<kind>", data="compat-matrix", made=_made)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    timeline = context.components
    if timeline is None:
        from scanner.components.tree import timeline_of_manifests

        timeline = timeline_of_manifests(manifests, context.target, context.current, context.unknown)
    return problem_findings(timeline)


def problem_findings(timeline: Timeline) -> list[Finding]:
    return [_problem_finding(problem, timeline) for problem in timeline.all_problems if problem.pins]


def _problem_finding(problem: Problem, timeline: Timeline) -> Finding:
    state = next(s for s in timeline.states if s.key == (problem.state or problem.component))
    first = state.detections[0]
    # A pin a Flux variable filled in is where the variable is set; its `via` says where it is used.
    via = f"{first.what}; {first.origin.via}" if first.origin.via else first.what
    origin = Origin(first.origin.path, first.origin.line, first.origin.column, via=via)
    others = problem.pins[1:]
    also = tuple(f"also edit {where(o.path, o.line)}" for o in others[:_ALSO_EDIT])
    if len(others) > _ALSO_EDIT:
        also += (f"and {len(others) - _ALSO_EDIT} more pins of the same version (`kubehop components` lists them)",)
    return Finding(f"{COMPONENT_RULES}{problem.component}/{problem.kind}", _SEVERITY.get(problem.severity, "warning"),
                   problem.message, origin, "", "Component", problem.component, breaks_in=problem.minor,
                   source_url=problem.source or ((state.start.source or None) if state.start else None),
                   remediation=problem.fix + also, support=problem.support, fix=problem.advice)
