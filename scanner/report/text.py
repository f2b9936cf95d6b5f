"""Text report for a terminal: findings grouped by hop, then input problems and a summary."""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.report import count, counts, hop_label, scan_span, verdict
from scanner.report.paths import where
from scanner.scan import ScanResult

_COLORS = {"error": "31", "warning": "33", "notice": "36", "head": "1", "dim": "2", "ok": "32"}


def render(result: ScanResult, color: bool = False) -> str:
    def paint(text: str, style: str) -> str:
        return f"\033[{_COLORS[style]}m{text}\033[0m" if color else text

    lines = [paint(f"kubehop {__version__}: {scan_span(result)}, "
                   f"{count(result.objects, 'object')} in {count(result.files_read, 'file')}", "head"), ""]
    for label, group in groupby(result.findings, key=lambda f: hop_label(f, result)):
        group = list(group)
        lines.append(paint(f"{label[0].upper()}{label[1:]}: {count(len(group), 'finding')}", "head"))
        for f in group:
            lines.append(f"  {where(f.origin.path, f.origin.line, f.origin.column)}  "
                         f"{paint(f.severity, f.severity)}  {f.object_ref}")
            if f.origin.via:
                lines.append(f"      via {f.origin.via}")
            lines.append(f"      {f.message}")
            if f.note:
                lines.append(f"      {paint('note:', 'dim')} {f.note}")
            if f.remediation:
                lines.append(f"      {paint('fix:', 'dim')}")
                lines.extend(f"        {step}" for step in f.remediation)
            when = {"now": " (replacement already served: migrate now)",
                    "during-hop": " (replacement served only later: migrate during the hop)"}.get(f.migrate, "")
            lines.append(f"      {paint('rule:', 'dim')} {f.rule_id}{when}")
        lines.append("")
    if result.diagnostics:
        lines.append(paint(f"Input problems: {len(result.diagnostics)}", "head"))
        lines.extend(f"  {paint(d.level, 'error' if d.level == 'error' else 'dim')}  {where(d.path, d.line)}: "
                     f"{d.message}" for d in result.diagnostics)
        lines.append("")
    if result.unrendered:
        lines.append(paint(f"Not rendered: {count(len(result.unrendered), 'file')}", "head"))
        lines.extend(f"  {where(d.path)}: {d.message}" for d in result.unrendered)
        lines.append("")
    lines.extend(f"notice: {n}" for n in result.notices)
    lines.append(_summary(result, paint))
    return "\n".join(lines) + "\n"


def _summary(result: ScanResult, paint) -> str:
    return f"{paint(verdict(result), 'error' if result.errors else 'ok')} ({counts(result)})"
