"""One line per finding, as `kubectl get -o wide` lists objects: where, severity, rule, object, hop
and fix in aligned columns under a header, then input problems and the verdict. For a terminal or a
log that is read by `grep`; every value from the tree goes through scanner.report.plain."""

from __future__ import annotations

from scanner.model import Finding
from scanner.report import counts, hop_label, verdict
from scanner.paths import where
from scanner.report.plain import log_lines, printable
from scanner.scan import ScanResult

HEADER = ("FILE", "SEVERITY", "RULE", "OBJECT", "HOP", "FIX")


def fix_words(finding: Finding) -> str:
    """The fix in a few words: the finding's own (Finding.fix), else its replacement, else the first step
    of the remediation."""
    if finding.fix:
        return finding.fix
    if finding.replacement:
        return f"use {finding.replacement}"
    return finding.remediation[0].strip() if finding.remediation else ""


def cells(finding: Finding, result: ScanResult) -> tuple[str, ...]:
    place = where(finding.origin.path, finding.origin.line, finding.origin.column)
    return place, finding.severity, finding.rule_id, finding.object_ref, hop_label(finding, result), fix_words(finding)


def render(result: ScanResult, color: bool = False) -> str:
    rows = [HEADER, *([printable(c) for c in cells(f, result)] for f in result.findings)]
    widths = [max(len(row[n]) for row in rows) for n in range(len(HEADER) - 1)]
    lines = ["   ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]).rstrip()
             for row in rows] if result.findings else []
    lines += [f"{where(d.path, d.line)}: {d.level}: {d.message}" for d in result.diagnostics]
    lines.append(f"{verdict(result)} ({counts(result)})")
    return log_lines(lines)
