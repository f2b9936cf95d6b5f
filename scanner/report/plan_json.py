"""The plan as JSON: one object per window, every step with the file and line to edit."""

from __future__ import annotations

from scanner import __version__
from scanner.freshness import data_checked
from scanner.model import Origin
from scanner.plan import Migration, Plan, Step, Window
from scanner.report import plan_orders
from scanner.paths import repo_path
from scanner.report.plain import log_json

SCHEMA_VERSION = 1


def location(origin: Origin) -> dict:
    return {"file": repo_path(origin.path), "line": origin.line, "column": origin.column}


def _step(step: Step) -> dict:
    return {"component": step.component.name, "install": step.state or step.component.name,
            "from": step.source.version, "to": step.target.version,
            "why": step.why, "source": step.target.source, "source_kind": step.target.source_kind,
            "edit": [location(o) for o in step.pins]}


def _migration(migration: Migration) -> dict:
    rule = migration.rule
    return {"rule": rule.id, "apiVersion": rule.api_version, "kind": rule.kind,
            "replacement": rule.replacement, "removed_in": migration.before, "already": migration.already,
            "release_unknown": migration.unknown,
            "note": rule.note, "source": rule.source,
            # "name" is namespace/name: the object reference without its kind
            "objects": [{**location(m.origin), "name": m.object_ref.partition(" ")[2]} for m in migration.objects]}


def _window(plan: Plan, window: Window) -> dict:
    return {
        "window": window.number,
        "from": str(window.source),
        "to": str(window.target),
        "before": [_step(s) for s in window.before],
        "migrations": [_migration(m) for m in window.migrations],
        "api_blockers": [{**location(f.origin), "rule": f.rule_id, "object": f.object_ref, "message": f.text}
                         for f in window.api_blockers],
        "after": [_step(s) for s in window.after],
        "notes": [{"distro": n.distro, "title": n.title, "detail": n.detail, "source": n.source,
                   "projected": n.projected} for n in window.notes],
        "problems": [{"severity": p.severity, "component": p.component, "install": p.state or p.component,
                      "message": p.text, "kind": p.kind, "support": p.support, "fix": list(p.fix)}
                     for p in window.problems],
        # Every finding `kubehop scan` reports that breaks at this hop (the window's counts are of these).
        "findings": [{**location(f.origin), "rule": f.rule_id, "severity": f.severity, "object": f.object_ref,
                      "message": f.text, "breaks_in": str(f.breaks_in) if f.breaks_in else None}
                     for f in window.findings],
        "blockers": window.blocker_count,
        "warnings": window.warning_count,
        "orders": plan_orders.json_entries(plan, window),
    }


def render(plan: Plan) -> str:
    pin = plan.current_from
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kubehop", "version": __version__, "data_checked": data_checked()},
        "from": str(plan.current),
        "from_source": None if pin is None else {**location(pin.origin), "version": pin.version, "what": pin.what},
        "target": str(plan.target),
        # where the minors came from, as `kubehop scan --format json` says it
        "target_source": plan.analysis.target_source if plan.analysis else None,
        "current_source": plan.analysis.current_source if plan.analysis else None,
        "configuration": plan.analysis.configuration if plan.analysis else None,
        "distro": plan.distro,
        "distro_source": plan.distro_from,
        "blockers": plan.blocker_count,  # counted as `kubehop scan` counts them: the same findings
        "warnings": plan.warning_count,
        "components": [{
            "name": s.component.name,
            # One entry per install: the pins of one version (the name alone when the tree pins one version).
            "install": s.key,
            # "catalog" (compat-matrix/), "chart-kubeVersion" (the chart's own constraint), "none" (no data).
            "data": "none" if s.component.no_data else "chart-kubeVersion" if s.component.chart_track else "catalog",
            "start": s.start.version if s.start else None,
            "end": s.final.version if s.final else None,
            "pins": [{**location(d.origin), "pin": d.pin, "what": d.what} for d in s.detections],
        } for s in plan.components],
        "windows": [_window(plan, w) for w in plan.windows],
        "orders_folder": plan.orders_folder,
        "order_notes": plan.order_notes,
    }
    return log_json(document)
