"""Text report for a terminal: findings grouped by hop, then input problems and a summary."""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.report import hop_label
from scanner.scan import ScanResult

_COLORS = {"error": "31", "warning": "33", "head": "1", "dim": "2", "ok": "32"}


def render(result: ScanResult, color: bool = False) -> str:
    def paint(text: str, style: str) -> str:
        return f"\033[{_COLORS[style]}m{text}\033[0m" if color else text

    span = f"{result.current} → {result.target}" if result.current else f"up to {result.target}"
    lines = [paint(f"kubehop {__version__}: {span}, "
                   f"{result.objects} objects in {result.files_read} files", "head"), ""]
    for label, group in groupby(result.findings, key=lambda f: hop_label(f, result)):
        group = list(group)
        lines.append(paint(f"{label[0].upper()}{label[1:]}: {_count(len(group), 'finding')}", "head"))
        for f in group:
            where = f"{f.origin.path}:{f.origin.line}:{f.origin.column}"
            lines.append(f"  {where}  {paint(f.severity, f.severity)}  {f.object_ref}")
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
        lines.extend(f"  {paint(d.level, 'error' if d.level == 'error' else 'dim')}  {d}"
                     for d in result.diagnostics)
        lines.append("")
    if result.unrendered:
        lines.append(paint(f"Not rendered: {_count(len(result.unrendered), 'file')}", "head"))
        lines.extend(f"  {d.path}: {d.message}" for d in result.unrendered)
        lines.append("")
    lines.extend(f"notice: {n}" for n in result.notices)
    lines.append(_summary(result, paint))
    return "\n".join(lines) + "\n"


def _summary(result: ScanResult, paint) -> str:
    errors, warnings = len(result.errors), len(result.warnings)
    parts = [_count(errors, "blocker"), _count(warnings, "warning")]
    if result.input_errors:
        parts.append(_count(len(result.input_errors), "unreadable input"))
    verdict = (paint(f"blocked: {result.target} cannot be reached as is", "error") if errors
               else paint(f"nothing blocks {result.target}", "ok"))
    return f"{verdict} ({', '.join(parts)})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
