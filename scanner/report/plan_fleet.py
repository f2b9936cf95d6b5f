"""The plan of a repository of several clusters, in each format: every cluster's own plan under its
name, what no cluster deploys, and one verdict counting each finding once (as the scan does)."""

from __future__ import annotations

import json

from scanner import __version__
from scanner.fleet_plan import FleetPlan
from scanner.freshness import data_checked
from scanner.report import count_words, md, plan_json, plan_markdown, plan_text, verdict_words
from scanner.paths import repo_path, where
from scanner.report.plain import log_json, log_lines, printable
from scanner.words import count


def verdict(fleet: FleetPlan) -> str:
    return (f"{verdict_words(fleet.target, fleet.blocker_count)} "
            f"({count_words(fleet.findings, len(fleet.analysis.input_errors))})")


def _title(fleet: FleetPlan) -> str:
    return f"kubehop {__version__} plan: {count(len(fleet.plans), 'cluster')} to Kubernetes {fleet.target}"


def render_text(fleet: FleetPlan) -> str:
    parts = [log_lines([_title(fleet), verdict(fleet), ""])]
    for cluster, plan in fleet.plans:
        parts.append(log_lines([f"== Cluster {cluster.name}: {plan.current} → {plan.target}",
                                f"   declared by {cluster.declared_by}; deploys {', '.join(cluster.paths)}", ""]))
        parts.append(plan_text.render(plan) + "\n")
    unplanned = fleet.unplanned
    if unplanned:
        lines = [f"== Deployed by no cluster: {count(len(unplanned), 'finding')}"]
        lines += [f"  {where(f.origin.path, f.origin.line, f.origin.column)}  {f.severity}  {f.object_ref}: "
                  f"{f.text}" for f in unplanned]
        parts.append(log_lines(lines + [""]))
    parts.append(log_lines([verdict(fleet)]))
    return "".join(parts)


def render_json(fleet: FleetPlan) -> str:
    document = {
        "schema_version": plan_json.SCHEMA_VERSION,
        "tool": {"name": "kubehop", "version": __version__, "data_checked": data_checked()},
        "target": str(fleet.target),
        "blockers": fleet.blocker_count,  # each finding once, as `kubehop scan` counts them
        "warnings": fleet.warning_count,
        "clusters": [{"name": cluster.name, "declared_by": cluster.declared_by,
                      "paths": [repo_path(p) for p in cluster.paths], **json.loads(plan_json.render(plan))}
                     for cluster, plan in fleet.plans],
        "unplanned": [{**plan_json.location(f.origin), "rule": f.rule_id, "severity": f.severity,
                       "object": f.object_ref, "message": f.text} for f in fleet.unplanned],
    }
    return log_json(document)


def render_markdown(fleet: FleetPlan) -> str:
    icon = "❌" if fleet.blocked else "✅"
    lines = [f"## {md.text(_title(fleet))}", "", f"{icon} **{md.text(verdict(fleet))}**", ""]
    lines += [f"- {md.text(cluster.name)}: {plan.current}\u00a0→\u00a0{plan.target}, "
              f"{md.text(plan_text.verdict(plan))}" for cluster, plan in fleet.plans]
    text = "".join(line + "\n" for line in lines) + "\n"
    for cluster, plan in fleet.plans:
        body = plan_markdown.render(plan, limit=None).replace("\n## ", "\n### ")
        text += f"\n## Cluster {md.text(printable(cluster.name))}\n\n" + body.replace("## ", "### ", 1)
    if fleet.unplanned:
        text += f"\n## Deployed by no cluster\n\n" + "".join(
            f"- {md.code(where(f.origin.path, f.origin.line))} {md.text(f.object_ref)}: {md.text(f.text)}\n"
            for f in fleet.unplanned)
    return md.document(text)
