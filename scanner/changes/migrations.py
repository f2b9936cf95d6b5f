"""The API migrations a window needs, made by `kubehop fix`'s engine.

Only what the window's hop needs: the apiVersions and kinds of its API blockers and of the
third-party CRD migrations its moves force (Flux's image.toolkit.fluxcd.io/v1beta2 before 2.9).
A file the change set edits otherwise (a HelmRelease whose chart version moves too) is migrated on
top of those edits. What the engine leaves to a person is listed with its reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from scanner.changes.model import Manual, Migrated
from scanner.changes.scalar_edit import NotEditable
from scanner.changes.texts import Texts
from scanner.fix import fix, fix_text
from scanner.fix.migrations import Migration, load_migrations
from scanner.fix.plan import Planner
from scanner.model import Finding
from scanner.paths import where

_BOM = "\ufeff"
# Blockers that restate a component's support at an order's version: the moves (or what is left of
# them to a person) say it.
_SAID_BY_MOVES = ("upgrade-order/component-support",)


@dataclass(frozen=True)
class _WindowPlanner(Planner):
    """fix's planner, held to the apiVersions and kinds the window needs."""

    wanted: frozenset[tuple[str, str]] = frozenset()

    def decide(self, api_version: str, kind: str) -> Migration | str | None:
        if (api_version, kind) not in self.wanted:
            return None
        return super().decide(api_version, kind)


def migrate(window, planner: Planner, paths: Sequence[str], exclusions: Sequence, texts: Texts,
            manual: list[Manual]) -> list[Migrated]:
    """Run the fix engine for the window's needs over `paths`; record the files in `texts`."""
    needs = _needs(window)
    if not needs:
        return []
    held = _WindowPlanner(planner.target, planner.current, planner.rulebook, planner.ignore, frozenset(needs))
    result = fix(paths, held, exclusions)
    for change in result.files:
        path = change.path
        fixed = change.fixed
        if path in texts.current and texts.current[path] != texts.original.get(path):
            again = fix_text(path, texts.current[path], held, chart_template=_in_templates(path))
            if not again.files:
                manual.append(Manual("API migration", "the file's other edits leave nothing fix can migrate in it; "
                                                      "migrate it by hand", where(path)))
                continue
            fixed = again.files[0].fixed
        try:
            texts.replace(path, fixed.removeprefix(_BOM), f"API migration of {change.migrated} object(s)")
        except NotEditable as why:
            manual.append(Manual("API migration", f"not written ({why})", where(path)))
    for left in result.left:
        manual.append(Manual(f"migrate {left.object}", left.reason, where(left.path, left.line)))
    manual.extend(Manual("API migration", d.message, where(d.path, d.line)) for d in result.diagnostics
                  if d.level == "error")
    changed = {os.path.realpath(p) for p in texts.current if texts.current[p] != texts.original.get(p)}
    return _migrated(window, needs, changed, manual)


def _needs(window) -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> why the window needs it moved."""
    needs: dict[tuple[str, str], str] = {}
    for finding in window.api_blockers:
        needs.setdefault((finding.api_version, finding.kind), _removed(finding))
    for migration in window.migrations:
        needs.setdefault((migration.rule.api_version, migration.rule.kind), f"before {migration.before}, which removes it")
    return needs


def _removed(finding: Finding) -> str:
    return f"removed in {finding.breaks_in}" if finding.breaks_in else "not served"


def _migrated(window, needs: dict[tuple[str, str], str], changed: set[str], manual: list[Manual]) -> list[Migrated]:
    """The window's objects the migration moved; those it did not are a person's (with the finding's words)."""
    migrations = load_migrations()
    done: list[Migrated] = []
    left = {(m.where, m.what) for m in manual}
    objects = [(f.origin.path, f.origin.line, f.object_ref, f.api_version, f.kind, f.text)
               for f in window.api_blockers if not f.rule_id.startswith(_SAID_BY_MOVES)]
    objects += [(o.origin.path, o.origin.line, o.object_ref, o.api_version, o.kind,
                 f"{m.rule.api_version} {m.rule.kind} is removed in {m.before}")
                for m in window.migrations for o in m.objects]
    seen = set()
    for path, line, ref, api_version, kind, message in objects:
        if (path, line, ref) in seen:
            continue
        seen.add((path, line, ref))
        migration = migrations.get((api_version, kind))
        place = where(path, line)
        if migration is not None and os.path.realpath(path) in changed and (place, f"migrate {ref}") not in left:
            done.append(Migrated(path, line, ref, api_version, migration.new, needs[(api_version, kind)]))
        elif (place, f"migrate {ref}") not in left:
            manual.append(Manual(f"fix {ref}", message, place))
    return done


def _in_templates(path: str) -> bool:
    folder = os.path.dirname(os.path.abspath(path))
    return os.path.basename(folder) == "templates" and os.path.isfile(os.path.join(folder, "..", "Chart.yaml"))
