"""Text report for a terminal or a CI job log: findings grouped by hop, then input problems and a
summary. Nothing from the tree is printed raw (scanner.report.plain)."""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.report import count, counts, hop_label, minor_sources, nothing_checked, scan_span, verdict
from scanner.report.paths import where
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
    for label, group in groupby(result.findings, key=lambda f: hop_label(f, result)):
        group = list(group)
        lines.append(paint(f"{label[0].upper()}{label[1:]}: {count(len(group), 'finding')}", "head"))
        for f in group:
            at = p(where(f.origin.path, f.origin.line, f.origin.column))
            lines.append(f"  {at}  {paint(f.severity, f.severity)}  {p(f.object_ref)}")
            if f.origin.via:
                lines.append(f"      via {p(f.origin.via)}")
            lines.append(f"      {p(f.text)}")
            if f.note:
                lines.append(f"      {paint('note:', 'dim')} {p(f.note)}")
            if f.remediation:
                lines.append(f"      {paint('fix:', 'dim')}")
                lines.extend(f"        {p(step)}" for step in f.remediation)
            when = {"now": " (replacement already served: migrate now)",
                    "during-hop": " (replacement served only later: migrate during the hop)"}.get(f.migrate, "")
            lines.append(f"      {paint('rule:', 'dim')} {p(f.rule_id)}{when}")
        lines.append("")
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


def _summary(result: ScanResult, paint) -> str:
    style = "error" if result.errors else "warning" if nothing_checked(result) else "ok"
    return f"{paint(verdict(result), style)} ({counts(result)})"
