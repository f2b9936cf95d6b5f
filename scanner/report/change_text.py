"""A window's change set for a terminal and as JSON: what it writes, and what is left to a person."""

from __future__ import annotations

from scanner import __version__
from scanner.changes.model import ChangeSet, Manual
from scanner.paths import repo_path, where
from scanner.report.plain import log_json, log_lines
from scanner.words import count

SCHEMA_VERSION = 1


def title(change_set: ChangeSet) -> str:
    window, plan = change_set.window, change_set.plan
    of = f" of cluster {change_set.cluster}" if change_set.cluster else ""
    return f"W{window.number}{of} · Kubernetes {window.source} → {window.target} ({plan.distro})"


def render(change_set: ChangeSet) -> str:
    lines = [f"kubehop {__version__} plan, the change set of {title(change_set)}", f"  {_summary(change_set)}", ""]
    if change_set.shared:
        lines.append("Other clusters this moves")
        lines.extend(f"  {line}" for line in shared_lines(change_set))
    if change_set.moves:
        lines.append("Moves before the hop")
        for move in change_set.moves:
            lines.append(f"  {move.step.label}: {move.step.why}")
            lines.extend(f"    {where(e.path, e.line)}  {e.old} → {e.new}  ({e.what})" for e in move.edits)
            lines.extend(f"    {where(e.path, e.line)}  {e.old} → {e.new}  ({e.what}; kept in step)"
                         for e in move.in_step)
    if change_set.migrated:
        lines.append("API migrations")
        lines.extend(f"  {where(m.path, m.line)}  {m.object}: {m.old} → {m.new} ({m.why})" for m in change_set.migrated)
    if change_set.orders or change_set.hop:
        lines.append(f"The hop to {change_set.window.target}")
        lines.extend(f"  upgrade order {what}" for what in change_set.orders)
        lines.extend(f"  {where(e.path, e.line)}  {e.what}: {e.old} → {e.new}" for e in change_set.hop)
    if change_set.manual:
        lines.append(f"Left to a person ({len(change_set.manual)})")
        for manual in change_set.manual:
            lines.extend(manual_lines(manual, "  "))
    lines.extend(f"notice: {n}" for n in change_set.notices)
    return log_lines(lines)


def shared_lines(change_set: ChangeSet) -> list[str]:
    """A line per changed file another cluster of the fleet deploys too."""
    return [f"{repo_path(path)} is deployed by {', '.join(names)} too: {'they move' if len(names) > 1 else 'it moves'} "
            f"with this change on {'their' if len(names) > 1 else 'its'} next reconcile"
            for path, names in change_set.shared.items()]


def manual_lines(manual: Manual, indent: str) -> list[str]:
    head = f"{indent}{manual.what}: {manual.why}" + (f" ({manual.where})" if manual.where else "")
    return [head] + ([f"{indent}  run: {manual.command}"] if manual.command else [])


def _summary(change_set: ChangeSet) -> str:
    changed = [f for f in change_set.files if not f.new]
    added = [f for f in change_set.files if f.new]
    parts = [f"{count(len(changed), 'file')} to change"] + ([f"{len(added)} to add"] if added else [])
    parts.append(f"{count(len(change_set.manual), 'step')} left to a person")
    return "; ".join(parts)


def render_json(change_set: ChangeSet) -> str:
    from scanner.report.change_diff import file_diff

    window = change_set.window

    def edit(e) -> dict:
        return {"file": repo_path(e.path), "line": e.line, "from": e.old, "to": e.new, "what": e.what}

    return log_json({
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kubehop", "version": __version__},
        "window": window.number, "from": str(window.source), "to": str(window.target),
        "distro": change_set.plan.distro,
        **({"cluster": change_set.cluster,
            "shared": [{"file": repo_path(p), "clusters": list(names)} for p, names in change_set.shared.items()]}
           if change_set.cluster else {}),
        "complete": change_set.complete,
        "hop_waits": change_set.hop_waits,
        "moves": [{"component": m.step.component.name, "from": m.step.source.version, "to": m.step.target.version,
                   "why": m.step.why, "source": m.step.target.source, "edits": [edit(e) for e in m.edits],
                   "kept_in_step": [edit(e) for e in m.in_step],
                   "later": [{"from": s.source.version, "to": s.target.version} for s in m.later]}
                  for m in change_set.moves],
        "migrations": [{"file": repo_path(m.path), "line": m.line, "object": m.object, "from": m.old, "to": m.new,
                        "why": m.why} for m in change_set.migrated],
        "hop": {"orders": change_set.orders, "variables": [edit(e) for e in change_set.hop]},
        "manual": [{"what": m.what, "why": m.why, "where": m.where, "command": m.command} for m in change_set.manual],
        "files": [{"file": repo_path(f.path), "new": f.new, "changes": f.changes, "diff": file_diff(f)}
                  for f in change_set.files],
        "notices": change_set.notices,
    })
