"""One window of a plan as the change set its pull request needs (scanner.changes holds the parts).

In order, on the files as each step leaves them: the hop's upgrade orders, the component moves
(scanner.changes.pin_edits), the cluster version variables, then the API migrations the window needs
(the fix engine, on top of the other edits). What blocks the window with no move to write (a
component no release can carry over the hop) is listed for a person, as is everything the steps
could not write.
"""

from __future__ import annotations

import os
from typing import Sequence

from scanner.changes import hop, migrations, pin_edits
from scanner.changes.model import ChangeSet, Manual
from scanner.changes.texts import Texts
from scanner.components.state import BLOCKED, BLOCKER
from scanner.fix.plan import Planner
from scanner.rulebook import load_rulebook


class NoSuchWindow(Exception):
    """The plan has no window of that number."""


def tree_root(paths: Sequence[str]) -> str:
    """The real path of the folder holding every scanned path: nothing outside it is changed."""
    on_disk = [os.path.abspath(p) for p in paths if p != "-"]
    folders = [p if os.path.isdir(p) else os.path.dirname(p) for p in on_disk]
    return os.path.realpath(os.path.commonpath(folders)) if folders else os.path.realpath(".")


def change_set(plan, analysis, number: int, paths: Sequence[str], options, root: str | None = None) -> ChangeSet:
    """Window `number` of `plan` (a view of `analysis` of `paths`, read with ScanOptions `options`);
    nothing outside `root` (default: the folder holding `paths`) is edited."""
    if not 1 <= number <= len(plan.windows):
        raise NoSuchWindow(f"the plan has {len(plan.windows)} window(s): W1 to W{len(plan.windows)}"
                           if plan.windows else "the plan has no window")
    window = plan.windows[number - 1]
    result = ChangeSet(plan, window)
    texts = Texts(root or tree_root(paths))
    tree = analysis.tree
    index = _chart_index(tree, window, analysis.timeline.states, options)
    result.moves, manual = pin_edits.moves(window.before, analysis.timeline.states, tree.detections, texts, index)
    result.manual.extend(manual)
    planner = Planner(window.target, window.source, load_rulebook(options.rule_folders), options.ignore)
    result.migrated = migrations.migrate(window, planner, _with_objects(window, paths, texts.root), options.exclude,
                                         texts, result.manual)
    moved = {m.step.state or m.step.component.name for m in result.moves}  # installs, not components
    result.manual.extend(Manual(p.component or "component", p.text, _first_pin(p))
                         for p in window.problems if p.severity == BLOCKER and p.kind == BLOCKED
                         and (p.state or p.component) not in moved)
    if result.manual:  # the hop comes last: the run that leaves nothing else to a person writes it
        result.hop_waits = True
        result.manual.append(Manual(f"the hop to {window.target}", (
            "not written yet: it waits for the steps above (a chain of one-minor-at-a-time moves lands a step at a "
            "time); once they are done, run the same kubehop plan --window command again: the run that leaves nothing "
            "else to a person writes the hop")))
    else:
        result.orders = hop.upgrade_orders(analysis.orders, number, window.source, window.target, texts,
                                           result.manual, result.notices)
        result.hop = hop.version_variables(tree.cluster, window.source, window.target, texts, result.manual)
    result.files = texts.files()
    return result


def _with_objects(window, paths: Sequence[str], root: str) -> list[str]:
    """`paths` and the files of the objects the window migrates: a fleet's cluster reads a shared base
    outside its own paths through its kustomizations, and the base is where the object is written."""
    from scanner.containment import within

    files = [f.origin.path for f in window.api_blockers] + [o.origin.path for m in window.migrations for o in m.objects]
    return list(paths) + [f for f in dict.fromkeys(files)
                          if os.path.isfile(f) and within(os.path.realpath(f), os.path.realpath(root))]


def _first_pin(problem) -> str:
    from scanner.paths import where

    return where(problem.pins[0].path, problem.pins[0].line) if problem.pins else ""


def _chart_index(tree, window, states, options) -> dict[tuple[str, int], list[str]]:
    """Chart versions the repository indexes list for the chart pins the window moves, by pin (path,
    line): helm's cache, and the network with --allow-network (scanner.components.chart_index)."""
    from scanner.components.chart_index import chart_versions

    moving = {s.component.name for s in window.before}
    lines = {(d.origin.path, d.origin.line) for d in tree.detections if d.component in moving and d.source == "chart"}
    lines |= {(d.origin.path, d.origin.line) for s in states if s.component.name in moving for d in s.detections}
    pins = [pin for pin in tree.charts if (pin.origin.path, pin.origin.line) in lines]
    if not pins:
        return {}
    found = chart_versions(pins, options.allow_network)
    return {(pin.origin.path, pin.origin.line): [v.version for v in found.for_pin(pin)] for pin in pins}
