"""Text report for a terminal or a CI job log: findings grouped by hop, then input problems and a
summary. Nothing from the tree is printed raw (scanner.report.plain)."""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.report import count, counts, hop_label, minor_sources, nothing_checked, scan_span, verdict
from scanner.paths import where
from scanner.report.plain import log_text, printable
from scanner.scan import ScanResult

_COLORS = {"error": "31", "warning": "33", "notice": "36", "head": "1", "dim": "2", "ok": "32"}


def render(result: ScanResult, color: bool = False) -> str:
    def paint(text: str, style: str) -> str:
        return f"\033[{_COLORS[style]}m{text}\033[0m" if color else text

    p = printable  # every value from the tree (or a user's rules) is printed through it
    lines = [paint(f"kubehop {__version__}: {scan_span(result)}, "
                   f"{count(result.objects, 'object')} in {count(result.files_read, 'file')} "
                   f"(data checked {result.data_checked})", "head"),
             paint(p(minor_sources(result, where)), "dim"), ""]
    if result.clusters:
        for view in result.clusters:
            lines += _cluster_lines(view, paint)
    else:
        lines += _hop_lines(result, paint)
    if result.diagnostics:
        lines.append(paint(f"Input problems: {len(result.diagnostics)}", "head"))
        lines.extend(f"  {paint(d.level, 'error' if d.level == 'error' else 'dim')}  "
                     f"{p(where(d.path, d.line))}: {p(d.message)}" for d in result.diagnostics)
        lines.append("")
    if result.unrendered:
        lines.append(paint(f"Not rendered: {count(len(result.unrendered), 'file')}", "head"))
        lines.extend(f"  {p(where(d.path))}: {p(d.message)}" for d in result.unrendered)
        lines.append("")
    lines.extend(f"notice: {p(n)}" for n in result.notices)
    lines.append(_summary(result, paint))
    return log_text("\n".join(lines)) + "\n"


def _hop_lines(result: ScanResult, paint, indent: str = "", cluster: str | None = None) -> list[str]:
    """The findings grouped by hop; in a fleet, a finding shared with other clusters names them."""
    p, lines = printable, []
    for label, group in groupby(result.findings, key=lambda f: hop_label(f, result)):
        group = list(group)
        lines.append(indent + paint(f"{label[0].upper()}{label[1:]}: {count(len(group), 'finding')}", "head"))
        for f in group:
            at = p(where(f.origin.path, f.origin.line, f.origin.column))
            lines.append(f"{indent}  {at}  {paint(f.severity, f.severity)}  {p(f.object_ref)}")
            others = [c for c in f.clusters if c != cluster]
            if cluster is not None and others:
                lines.append(f"{indent}      {paint('also breaks:', 'dim')} {p(', '.join(others))}")
            if f.origin.via:
                lines.append(f"{indent}      via {p(f.origin.via)}")
            lines.append(f"{indent}      {p(f.text)}")
            if f.note:
                lines.append(f"{indent}      {paint('note:', 'dim')} {p(f.note)}")
            if f.remediation:
                lines.append(f"{indent}      {paint('fix:', 'dim')}")
                lines.extend(f"{indent}        {p(step)}" for step in f.remediation)
            when = {"now": " (replacement already served: migrate now)",
                    "during-hop": " (replacement served only later: migrate during the hop)"}.get(f.migrate, "")
            lines.append(f"{indent}      {paint('rule:', 'dim')} {p(f.rule_id)}{when}")
        lines.append("")
    return lines


def _cluster_lines(view, paint) -> list[str]:
    """One cluster of a fleet: where it is declared, its span and where its current minor was read,
    then its findings by hop."""
    p, analysis, cluster = printable, view.analysis, view.cluster
    lines = [paint(f"Cluster {p(cluster.name)}: {scan_span(analysis)}, {counts(analysis)}", "head"),
             paint(f"  declared by {p(cluster.declared_by)}; deploys {p(', '.join(cluster.paths))}", "dim")]
    if analysis.current_from.said_by:
        lines.append(paint(f"  from {analysis.current}: {p(analysis.current_from.said_by)}", "dim"))
    lines.append("")
    return lines + (_hop_lines(analysis, paint, "  ", cluster.name) or ["  nothing found", ""])


def _summary(result: ScanResult, paint) -> str:
    style = "error" if result.errors else "warning" if nothing_checked(result) else "ok"
    return f"{paint(verdict(result), style)} ({counts(result)})"
