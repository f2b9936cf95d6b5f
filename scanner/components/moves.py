"""How one component crosses one hop: the releases to step through, and what stops it.

Three states for a (release, minor): supported, unsupported (a stated range excludes it), unknown.
A component moves only as far as the hop needs: to the oldest release stated to support it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from scanner.components.catalog import (SUPPORTED, UNKNOWN as UNSTATED, UNSUPPORTED as EXCLUDED, Catalog, Component,
                                        Release, Requirement)
from scanner.components.timeline import (BLOCKED, BLOCKER, NEWER_THAN_CLUSTER, REQUIRES, WARNING, ComponentState,
                                         Hop, Problem, Step)
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.pins import Detection


def route(component: Component, start: Release, a: Minor, b: Minor) -> tuple[list[Release], Problem | None, bool]:
    """The releases to step through, on Kubernetes a, so that the component runs on b.

    Returns the path, what stops the component, and whether the hop is unverified for it (no
    release states support for b, and none is stated to exclude it where it would run)."""
    support = start.support(b)
    if support == SUPPORTED:
        return [], None, False
    if support == EXCLUDED and start.min is not None and b < start.min:
        return [], Problem(WARNING, component.name, (
            f"{component.named(start.version)} states support for {start.support_text} only: "
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
            f"({component.short(goal.version)} supports {goal.support_text}): it cannot move before the hop"), BLOCKED,
            support=EXCLUDED), False
    maybe = [r for r in later if r.support(b) == UNSTATED and r.support(a) != EXCLUDED]
    if maybe:
        return _path(component, later, maybe[0]), None, True
    said = f"; {evidence(component, b)}" if later or component.releases[-1].order > start.order else ""
    return [], Problem(BLOCKER, component.name, (
        f"no known release of {component.title} supports Kubernetes {b}: {component.short(start.version)} supports "
        f"{start.support_text}{said}"), BLOCKED, support=EXCLUDED), False


def _path(component: Component, later: Sequence[Release], goal: Release) -> list[Release]:
    """To `goal`, through each minor between (at its newest patch the data lists) when the component
    moves one minor at a time."""
    if not component.one_minor_at_a_time:
        return [goal]
    between: dict[tuple[int, int], Release] = {}
    for release in later:
        if release.order >= goal.order:
            break
        if release.key != goal.key:
            between[release.key] = release  # the last one of each minor wins
    return [*between.values(), goal]


def evidence(component: Component, b: Minor) -> str:
    """What the data does say about the newest releases, for a hop nobody states support for."""
    newest = component.releases[-1]
    when = f", released {newest.released}" if newest.released else ""
    parts = [f"the newest release kubehop knows is {component.short(newest.version)}{when}, "
             f"{'stated range ' + newest.support_text if newest.support_text != 'unknown' else 'no stated range'}"]
    ranged = next((r for r in reversed(component.releases) if r.support_text != "unknown"), None)
    if ranged is not None and ranged is not newest:
        parts.append(f"the newest stated range is {component.short(ranged.version)}'s, {ranged.support_text}")
    return "; ".join(parts)


def no_range_said(release: Release, minor: str) -> str:
    """What the data says of a release for a minor it states nothing for ("1.29", "Kubernetes 1.29"): a
    release the data does not list says nothing at all (its range is unknown, not "no support")."""
    if not release.listed:
        return "is a release kubehop has no data on (its range is unknown)"
    if release.patch_unknown:
        minor_of = ".".join(map(str, release.key))
        if release.version != minor_of:  # a chart range past the chart versions the data lists (chart_patches)
            return (f"is pinned by a chart range that installs {release.version} or a later {minor_of} patch "
                    f"(from chart versions the data does not list), and those disagree on {minor} "
                    f"({release.support_text})")
        return (f"is pinned by a chart version that does not say which {minor_of} patch it ships, and "
                f"its patches disagree on {minor} ({release.support_text})")
    return f"does not state support for {minor}"


def steps(state: ComponentState, start: Release, path: list[Release], hop: Hop) -> list[Step]:
    steps, source = [], start
    for release in path:
        why = f"{release.version} supports {release.support_text}"
        if release.support(hop.target) == UNSTATED:
            said = f"supports {source.support_text}" if source.listed else no_range_said(source, str(hop.target))
            why = f"{source.version} {said}; {release.version} states nothing about " \
                  f"{hop.target} either (unverified)"
        elif release is path[-1] and source.support(hop.target) == UNSTATED:
            does = "that does" if source.listed else f"stated to support {hop.target}"
            why = (f"{source.version} {no_range_said(source, str(hop.target))}; {release.version} is the oldest release "
                   f"{does} ({release.support_text})")
        if release is not path[-1]:
            why += f" (one minor at a time: {release.version} comes first)"
        elif state.component.one_minor_at_a_time is None and _skips(state.component, source, release):
            why += "; whether minors may be skipped is unknown"
        if not source.listed and steps == []:
            why += f"; the data lists no release between {source.version} and {release.version}"
            if state.component.one_minor_at_a_time is True:
                why += " (it moves one minor at a time: take each in turn)"
        if release.support(hop.source) == EXCLUDED:
            why += f"; does not list {hop.source}, where it must run until the hop"
        steps.append(Step(state.component, source, release, state.pins, why, state.key))
        source = release
    return steps


def _skips(component: Component, source: Release, target: Release) -> bool:
    return len([r for r in component.releases if source.key < r.key <= target.key]) > 1


def with_requirements(moves: list[Step], states: dict[str, ComponentState], releases: dict[str, Release],
                       hop: Hop, catalog: Catalog, reported: set[tuple[str, str]]) -> list[Step]:
    """Moves a release requires of another component (Gateway API CRDs for Cilium) come first, for every
    install of it the tree has; a requirement with a condition only when the release's values meet it
    (`condition`). `states` and `releases` are by install (ComponentState.key)."""
    first: list[Step] = []
    for step in moves:
        for requirement in step.target.requires:
            name, version = requirement.component, requirement.version
            own = states.get(step.state or step.component.name)
            holds, why = condition(requirement, own.detections if own is not None else [])
            if holds is False:
                continue
            component = catalog.components.get(name)
            needed = component.release(version) if component else None
            installs = [key for key, state in states.items() if state.component.name == name]
            if needed is None or not installs:
                missing = "a release the data does not list" if installs else "not found in the tree"
                if (step.state, name) not in reported:  # once per install and requirement
                    reported.add((step.state, name))
                    text = f"{step.label} requires {name} {version}: {missing}"
                    if requirement.when_values:
                        text = (f"{step.label} requires {name} {version} when {requirement.when_values} is set "
                                f"({why}): {missing}") if holds else (
                            f"{step.label} requires {name} {version} when {requirement.when_values} is set, "
                            f"which kubehop cannot tell ({why}); if it is: {missing}")
                    hop.problems.append(Problem(WARNING, step.component.name, text, REQUIRES, hop.target, step.pins,
                                                source=requirement.source, state=step.state))
                continue
            for key in installs:
                have = releases.get(key)
                if have is not None and have.key < needed.key:
                    first.append(Step(component, have, needed, states[key].pins,
                                      f"required by {step.component.title} {step.target.version}", key))
                    releases[key] = needed
    return first + moves


def condition(requirement: Requirement, pins: Sequence[Detection]) -> tuple[bool | None, str]:
    """Whether a requirement's condition holds for the installation its pins describe: True when a pin's
    values set it, False when every pin's values are read and none does, None when that cannot be told;
    with what decided it."""
    if requirement.when_values is None:
        return True, ""
    path = requirement.when_values
    answers = [(p, p.values.setting(path)) if p.values is not None else
               (p, (None, f"{p.what} gives the chart no values kubehop reads")) for p in pins]
    for pin, (state, why) in answers:
        if state is True:
            return True, why
    unknown = [why for _, (state, why) in answers if state is None]
    if unknown or not answers:
        return None, "; ".join(dict.fromkeys(unknown)) or "no pin gives the chart values"
    return False, "; ".join(dict.fromkeys(why for _, (_, why) in answers))
