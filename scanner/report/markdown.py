"""Markdown for a pull-request comment or $GITHUB_STEP_SUMMARY: a table per hop, then the details.

Everything taken from the scanned files (paths, names, messages) is escaped: a manifest
in a pull request must not be able to inject links, HTML or @-mentions into the comment.
"""

from __future__ import annotations

import re
from itertools import groupby

from scanner import __version__
from scanner.model import Finding
from scanner.report import count, counts, hop_label, scan_span, verdict
from scanner.report.paths import repo_path
from scanner.scan import ScanResult

# A pull-request comment holds 65,536 characters: finding rows stop at this many characters and
# input problems at this many lines; the rest is counted, not listed.
DETAILS_BUDGET = 50_000
MAX_LISTED_PROBLEMS = 50
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~@&$])")
_MIGRATE = {"now": "migrate now (replacement already served)",
            "during-hop": "migrate during the hop (replacement served only later)"}


def escape(text: str) -> str:
    """Plain text that renders as itself in a GitHub Markdown table cell."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def render(result: ScanResult, color: bool = False) -> str:
    icon = "❌" if result.errors else "✅"
    lines = [
        f"## kubehop: {scan_span(result)}",
        "",
        f"{icon} **{verdict(result)}** ({counts(result)}; "
        f"{count(result.objects, 'object')} in {count(result.files_read, 'file')})",
        "",
    ]
    groups = [(label, list(group)) for label, group in
              groupby(result.findings, key=lambda f: hop_label(f, result))]
    if groups:
        lines += ["| Hop | Blockers | Warnings |", "|---|---:|---:|"]
        lines += [f"| {escape(label)} | {_errors(group)} | {len(group) - _errors(group)} |"
                  for label, group in groups]
        lines.append("")
    lines += _details(groups)
    lines += _input_problems(result)
    lines.append(f"<sub>kubehop {__version__}, data checked {result.data_checked}</sub>")
    return "\n".join(lines) + "\n"


def _errors(group: list[Finding]) -> int:
    return sum(1 for f in group if f.severity == "error")


def _details(groups: list[tuple[str, list[Finding]]]) -> list[str]:
    lines: list[str] = []
    budget = DETAILS_BUDGET
    for label, group in groups:
        lines += [f"### {escape(label[0].upper() + label[1:])}", "",
                  "| Where | Object | What breaks | Fix |", "|---|---|---|---|"]
        rows = [_row(f) for f in group]
        shown = 0
        while shown < len(rows) and len(rows[shown]) <= budget:
            budget -= len(rows[shown])
            shown += 1
        lines += rows[:shown]
        if shown < len(rows):
            budget = 0  # findings stay in order: once one is left out, so are all after it
            lines.append(f"| … | {count(len(rows) - shown, 'more finding')} (see the SARIF or JSON report) | | |")
        lines.append("")
    return lines


def _where(path: str, *position: int | None) -> str:
    return escape(":".join([repo_path(path), *(str(n) for n in position if n)]))


def _row(f: Finding) -> str:
    where = _where(f.origin.path, f.origin.line, f.origin.column)
    if f.origin.via:
        where += escape(f" (via {f.origin.via})")
    rule = f"{f.message} (rule {f.rule_id}"
    rule_cell = escape(rule) + (f", [source]({f.source_url}))" if f.source_url else ")")
    return f"| {where} | {escape(f.object_ref)} | {rule_cell} | {'<br>'.join(map(escape, _fix(f)))} |"


def _fix(f: Finding) -> list[str]:
    fix = []
    if f.replacement or not f.unscheduled:
        fix.append(f"use {f.replacement}" if f.replacement else "no replacement")
    fix += [_MIGRATE[f.migrate]] if f.migrate else []
    fix += [f.note] if f.note else []
    return fix + list(f.remediation)


def _input_problems(result: ScanResult) -> list[str]:
    lines: list[str] = []
    if result.diagnostics:
        lines += [f"### Input problems: {len(result.diagnostics)}", ""]
        listed = result.diagnostics[:MAX_LISTED_PROBLEMS]
        lines += [f"- {d.level}: {_where(d.path, d.line)}: {escape(d.message)}" for d in listed]
        if len(listed) < len(result.diagnostics):
            lines.append(f"- … {count(len(result.diagnostics) - len(listed), 'more input problem')}")
        lines.append("")
    if result.unrendered:
        lines += [f"### Not rendered: {count(len(result.unrendered), 'file')}", ""]
        lines += [f"- {_where(d.path)}: {escape(d.message)}" for d in result.unrendered[:MAX_LISTED_PROBLEMS]]
        if len(result.unrendered) > MAX_LISTED_PROBLEMS:
            lines.append(f"- … {count(len(result.unrendered) - MAX_LISTED_PROBLEMS, 'more file')}")
        lines.append("")
    lines += [f"> notice: {escape(n)}" for n in result.notices]
    return lines
