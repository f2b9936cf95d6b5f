"""Markdown for a pull-request comment or $GITHUB_STEP_SUMMARY: the verdict, a table per hop, details folded.

Made to be read in a comment 848 px wide: each hop's table has three columns that wrap (where and
which object, what breaks, the fix in a few words); a rule's note and source, and a finding's
steps, are folded under <details> below the table, once per rule. The whole stays under GitHub's
comment limit (scanner.report.comment). Text from the tree goes through scanner.report.md: it
renders as itself and links, mentions and marks up nothing.
"""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.model import Finding
from scanner.report import comment, count, counts, hop_label, md, scan_span, verdict
from scanner.report.paths import where
from scanner.scan import ScanResult

MAX_LISTED_PROBLEMS = 50  # input problems and unrendered files listed; the rest are counted
_MIGRATE = {"now": "migrate now (the replacement is served already)",
            "during-hop": "migrate during the hop (the replacement is served only later)"}
_ICON = {"error": "⛔", "warning": "⚠️", "notice": "ℹ️"}

escape = md.text  # the name other Markdown reports import


def render(result: ScanResult, color: bool = False, limit: int | None = comment.LIMIT,
           full_report: str | None = None) -> str:
    return comment.fit(_head(result), _parts(result), _tail(result), limit, full_report)


def _head(result: ScanResult) -> str:
    icon = "❌" if result.errors else "✅"
    lines = [f"## kubehop: {scan_span(result)}", "",
             f"{icon} **{verdict(result)}** ({counts(result)}) · "
             f"{count(result.objects, 'object')} in {count(result.files_read, 'file')}", ""]
    groups = _groups(result)
    if groups:
        notices = any(f.severity == "notice" for f in result.findings)
        lines += ["| Hop | Blockers | Warnings |" + (" Notices |" if notices else ""),
                  "|---|---:|---:|" + ("---:|" if notices else "")]
        for label, group in groups:
            row = f"| {md.text(label)} | {_level(group, 'error')} | {_level(group, 'warning')} |"
            lines.append(row + (f" {_level(group, 'notice')} |" if notices else ""))
        lines.append("")
    return _block(lines)


def _groups(result: ScanResult) -> list[tuple[str, list[Finding]]]:
    return [(label, list(group)) for label, group in groupby(result.findings, key=lambda f: hop_label(f, result))]


def _level(group: list[Finding], severity: str) -> int:
    return sum(f.severity == severity for f in group)


def _parts(result: ScanResult) -> list[comment.Part]:
    parts: list[comment.Part] = []
    for label, group in _groups(result):
        rows = [_row(f) for f in group]
        heading = [f"### {md.text(label[0].upper() + label[1:])}", "", "| Where | What breaks | Fix |",
                   "|---|---|---|"]
        parts.append(comment.Part(_block(heading + rows[:1]), 1))
        parts.extend(comment.Part(_block([row]), 1) for row in rows[1:])
        parts.extend(comment.Part(_block(["", *details])) for details in _folded(group))
        parts.append(comment.Part("\n"))
    return parts


def _row(f: Finding) -> str:
    place = md.path(where(f.origin.path, f.origin.line, f.origin.column))
    place += f"<br>{md.wrappable(md.text(f.object_ref))}"
    if f.support:  # a component's state for the hop's minor: unsupported, unknown or unverified
        place += f" ({md.text(f.support)})"
    if f.origin.via:
        place += f"<br><sub>via {md.wrappable(md.text(f.origin.via))}</sub>"
    breaks, successor = _split(f)
    fix = md.wrappable("<br>".join(_fix(f, successor)))
    return f"| {place} | {_ICON.get(f.severity, '')} {md.wrappable(md.text(breaks))} | {fix} |"


def _split(f: Finding) -> tuple[str, str | None]:
    """The message without the fix it ends with (the Fix column says it): "; use X" of an API,
    ": move it to …" of a component."""
    head, sep, tail = f.message.rpartition("; use ")
    if sep and f.replacement and tail.startswith(f.replacement):
        return head, f"use {tail}"
    head, sep, tail = f.message.partition(": move it ")
    if sep and f.kind == "Component":
        return head, f"move it {tail}"
    return f.message, None


def _fix(f: Finding, successor: str | None) -> list[str]:
    fix = [md.text(successor or f"use {f.replacement}")] if successor or f.replacement else []
    if f.kind == "Component":  # a component's fix is its moves: the steps below list them all
        return fix + (["all its moves: steps below"] if len(f.remediation) > 1 else []) or ["—"]
    if not fix and not f.unscheduled:
        fix.append("no replacement" + (": see the note below" if f.note else ""))
    if f.migrate:
        fix.append(_MIGRATE[f.migrate])
    if f.remediation:
        fix.append("steps below")
    return fix or (["see the note below"] if f.note else ["—"])


def _folded(group: list[Finding]) -> list[list[str]]:
    """Below a hop's table: one fold with each rule's note and source, then one per finding with steps."""
    rules: dict[tuple[str, str | None, str | None], int] = {}
    for f in group:
        if f.note or f.source_url:
            key = (f.rule_id, f.note, f.source_url)
            rules[key] = rules.get(key, 0) + 1
    blocks = []
    if rules:
        items = [f"- {md.code(rule_id, in_table=False)} ({count(n, 'finding')})"
                 + (f", {md.link('source', source)}" if source else "") + (f": {md.prose(note)}" if note else "")
                 for (rule_id, note, source), n in rules.items()]
        blocks.append(_details(f"Notes and sources: {count(len(rules), 'rule')}", items))
    for f in group:
        if f.remediation:
            summary = f"Steps for {where(f.origin.path, f.origin.line, f.origin.column)} {f.object_ref}"
            blocks.append(_details(summary, md.fenced("\n".join(f.remediation), "text")))
    return blocks


def _details(summary: str, body: list[str]) -> list[str]:
    return [f"<details><summary>{md.html_text(summary)}</summary>", "", *body, "", "</details>"]


def _tail(result: ScanResult) -> str:
    lines: list[str] = []
    if result.diagnostics:
        lines += [f"### Input problems: {len(result.diagnostics)}", ""]
        listed = result.diagnostics[:MAX_LISTED_PROBLEMS]
        lines += [f"- {d.level}: {md.code(where(d.path, d.line), in_table=False)}: {md.text(d.message)}"
                  for d in listed]
        if len(listed) < len(result.diagnostics):
            lines.append(f"- … {count(len(result.diagnostics) - len(listed), 'more input problem')}")
        lines.append("")
    if result.unrendered:
        lines += [f"### Not rendered: {count(len(result.unrendered), 'file')}", ""]
        lines += [f"- {md.code(where(d.path), in_table=False)}: {md.text(d.message)}"
                  for d in result.unrendered[:MAX_LISTED_PROBLEMS]]
        if len(result.unrendered) > MAX_LISTED_PROBLEMS:
            lines.append(f"- … {count(len(result.unrendered) - MAX_LISTED_PROBLEMS, 'more file')}")
        lines.append("")
    lines += [f"> notice: {md.text(n)}" for n in result.notices]
    if result.notices:
        lines.append("")
    lines.append(f"<sub>kubehop {__version__}, data checked {result.data_checked}</sub>")
    return _block(lines)


def _block(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)
