"""The component moves of a window, written where the running system reads each pin.

Every pin the plan edits for a move (a HelmRelease's chart version, an Argo CD targetRevision, a
kustomization's helmCharts version or remote ?ref=, a Chart.yaml dependency, a Flux source's ref, a
version variable or release URL) is set to the move's release in the pin's own style. Pins of the
same component that the plan does not plan from (a bootstrap kustomization beside the OCIRepository
Flux reconciles itself from) move with it when they install the same release. A component that moves
one minor at a time takes the first step of its chain here; the rest are listed, and a later run of
the same window writes each once the one before has landed. Labels, images and generated files are a
person's, with the command that regenerates the file where the data names one.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable, Sequence

from scanner.changes.model import Edit, Manual, Move
from scanner.changes.pin_text import Target, is_exact, moved_pin, with_version
from scanner.changes.release_version import missing_exact, target_for
from scanner.changes.scalar_edit import NotEditable
from scanner.changes.texts import Texts
from scanner.components.catalog import Component, Generated, Release
from scanner.components.pins import Detection
from scanner.semver import parse_version
from scanner.components.timeline import ComponentState, Step
from scanner.paths import repo_path, where

_EDITABLE = ("source", "chart", "kustomize", "url", "variable")
_URLS = ("kustomize", "url")
_COMPONENTS = re.compile(r"^[a-z0-9-]+(?:,[a-z0-9-]+)*$")
_HEAD_LINES = 10  # where a generated file's marker is looked for


def moves(window_steps: Sequence[Step], states: Sequence[ComponentState], others: Sequence[Detection],
          texts: Texts, index: dict[tuple[str, int], list[str]]) -> tuple[list[Move], list[Manual]]:
    """The moves written and the steps left to a person. `others`: every pin the tree holds (those the
    plan does not plan from are kept in step); `index`: chart versions a repository index lists, by pin
    (path, line)."""
    by_install = {s.key: s for s in states}
    written: list[Move] = []
    manual: list[Manual] = []
    generated_done: set[str] = set()
    planned = {(d.origin.path, d.origin.line, d.origin.column) for s in states for d in s.detections}
    for install, chain in _chains(window_steps):
        state = by_install.get(install)
        if state is None:
            continue
        component, name = state.component, state.component.name
        first_only = component.one_minor_at_a_time is True and len(chain) > 1
        step = chain[0] if first_only else Step(component, chain[0].source, chain[-1].target, chain[0].pins,
                                                chain[-1].why)
        later = tuple(chain[1:]) if first_only else ()
        if _skips_unlisted(step):
            manual.append(Manual(f"{name} {step.source.version} → {step.target.version}", (
                f"{component.title} moves one minor at a time and kubehop's data lists no release between "
                f"{step.source.version} and {step.target.version}: take each minor in turn by hand"),
                where(state.pins[0].path, state.pins[0].line) if state.pins else ""))
            continue
        edits, in_step = [], []
        for detection in state.detections:
            edit = _write(detection, component, step, texts, index, manual, generated_done)
            edits += [edit] if edit else []
        for detection in _kept_in_step(state, others, step, planned):
            edit = _write(detection, component, step, texts, index, manual, generated_done, quiet=True)
            in_step += [edit] if edit else []
        if later:
            manual.append(Manual(f"{name} {' → '.join([_label(later[0].source)] + [_label(s.target) for s in later])}",
                                 f"{component.title} moves one minor at a time: once {_label(step.target)} has "
                                 "landed and is healthy, run the same kubehop plan --window command again to write the "
                                 "next step", where(state.pins[0].path, state.pins[0].line) if state.pins else ""))
        if edits or in_step:
            written.append(Move(step, tuple(edits), later, tuple(in_step)))
    return written, manual


def _skips_unlisted(step: Step) -> bool:
    """A one-minor-at-a-time move out of a release the data does not list, past the next minor."""
    source, target = step.source.key, step.target.key
    return step.component.one_minor_at_a_time is True and not step.source.listed and \
        (source[0] != target[0] or target[1] - source[1] > 1)


def _chains(steps: Sequence[Step]) -> Iterable[tuple[str, list[Step]]]:
    """The window's steps per install (ComponentState.key: a component the tree pins at two versions
    moves twice), in the plan's order (requirements first)."""
    chains: dict[str, list[Step]] = {}
    for step in steps:
        chains.setdefault(step.state or step.component.name, []).append(step)
    return chains.items()


def _kept_in_step(state: ComponentState, others: Sequence[Detection], step: Step,
                  planned: set[tuple[str, int, int]]) -> list[Detection]:
    """Pins of the component the plan does not plan from (no install's: `planned`) that install the same
    release as the step's source (a bootstrap kustomization beside the running source)."""
    return [d for d in others if d.component == state.component.name and d.source in _EDITABLE
            and (d.origin.path, d.origin.line, d.origin.column) not in planned
            and any(r.key == step.source.key for r in d.releases)]


def _label(release: Release) -> str:
    return release.version


def _write(detection: Detection, component: Component, step: Step, texts: Texts,
           index: dict[tuple[str, int], list[str]], manual: list[Manual], generated_done: set[str],
           quiet: bool = False) -> Edit | None:
    """Set one pin for `step`; what cannot be set goes to `manual` (`quiet`: a pin kept in step says nothing)."""
    origin = detection.origin
    place = where(origin.path, origin.line, origin.column)
    label = f"{component.name} {step.source.version} → {step.target.version}"
    generated = _generated(component.generated, origin.path)
    if generated is not None:
        if origin.path not in generated_done:
            generated_done.add(origin.path)
            manual.append(Manual(label, f"the file is generated ({generated.marker!r}): write it again with the "
                                        "command, do not edit it", place,
                                 _command(generated, step.target, origin.path, texts)))
        return None
    if detection.source not in _EDITABLE:
        if not quiet:
            manual.append(Manual(label, f"{detection.what} is a {detection.source} pin ({detection.pin!r}), not what "
                                        f"installs {component.title}: set it to a {step.target.version} release "
                                        "where the tree installs it", place))
        return None
    if detection.floating:
        if not quiet:
            manual.append(Manual(label, f"{detection.what} pins {detection.pin!r}, which installs whatever is newest: "
                                        f"pin a {step.target.version} release", place))
        return None
    target = target_for(component, step.target, detection, index.get((origin.path, origin.line), []))
    new = moved_pin(detection.pin, target) if isinstance(target, Target) else None
    if new == detection.pin or _exact_at_or_past(detection.pin, target):
        return None  # it installs the release already (a range: the newest of its line)
    if step.source.key not in _installs(detection):
        if not quiet:  # writing it would skip the moves between what it pins and the move's start
            manual.append(Manual(label, f"{detection.what} pins {detection.pin!r}, not {step.source.version} the move "
                                        "starts from: the tree's pins disagree, or an earlier window's moves have not "
                                        "landed (write those first)", place))
        return None
    if new is None:
        if not quiet:
            manual.append(Manual(label, _why_not(detection, component, step, target), place))
        return None
    change = (lambda url: with_version(url, detection.pin, new)) if detection.source in _URLS else \
        (lambda value: new if value == detection.pin else None)
    try:
        edit = texts.edit(origin.path, origin.line, origin.column, change, detection.what)
    except NotEditable as why:
        if not quiet:
            manual.append(Manual(label, f"{detection.what}: set {detection.pin!r} to {new!r} by hand ({why})", place))
        return None
    texts.note(origin.path, f"{label}: {detection.what} {edit.old} → {edit.new}")
    return edit


def _exact_at_or_past(pin: str, target: Target | str) -> bool:
    """An exact pin on the target's line, at its version or a later patch (1.17.1 for 1.17.0)."""
    if not is_exact(pin) or not isinstance(target, Target) or target.exact is None:
        return False
    have, want = parse_version(pin.lstrip("= ")), parse_version(target.exact)
    return have is not None and want is not None and tuple(have.floor[:len(target.line)]) == target.line \
        and have.floor >= want.floor


def _installs(detection: Detection) -> set[tuple[int, int]]:
    """The release lines the pin installs: those the data lists, else the line it names itself."""
    if detection.releases:
        return {r.key for r in detection.releases}
    parsed = parse_version(detection.pin.lstrip("=~^ "))
    return {tuple(parsed.floor[:2])} if parsed is not None and parsed.precision >= 2 else set()


def _why_not(detection: Detection, component: Component, step: Step, target: Target | str) -> str:
    if isinstance(target, str):
        return f"{detection.what} pins {detection.pin!r}: {target}"
    if is_exact(detection.pin):
        return f"{detection.what} pins {detection.pin!r}: {missing_exact(component, step.target, target)}"
    line = ".".join(map(str, target.line))
    return (f"{detection.what} pins {detection.pin!r}, which kubehop cannot move to one line in its style "
            f"(it admits several, or none it can read): make it admit {line} by hand")


def _generated(generated: Generated | None, path: str) -> Generated | None:
    """The component's generated-file facts when `path` carries their marker in its first lines."""
    if generated is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = [handle.readline() for _ in range(_HEAD_LINES)]
    except OSError:
        return None
    return generated if any(generated.marker in line for line in head) else None


def _command(generated: Generated, release: Release, path: str, texts: Texts) -> str:
    """The command that writes the file again at `release`; the file's own component list, when it
    is one kubehop can quote safely, else a placeholder."""
    parsed = ".".join((release.version.split(".") + ["0", "0"])[:3])
    components = "<components>"
    if generated.components_header:
        try:
            text = texts.text(path)
        except NotEditable:
            text = ""
        for line in text.split("\n")[:_HEAD_LINES]:
            if line.startswith(generated.components_header):
                listed = line[len(generated.components_header):].strip()
                components = listed if _COMPONENTS.match(listed) else components
    return generated.command.format(version=generated.version_prefix + parsed, components=components,
                                    path=shlex.quote(repo_path(path)))
