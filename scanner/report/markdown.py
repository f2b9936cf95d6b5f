"""Markdown for a pull-request comment or $GITHUB_STEP_SUMMARY: the verdict, a table per hop, details folded.

Made to be read in a comment 848 px wide: each hop's table has three columns that wrap (where and
which object, what breaks, the fix in a few words); a rule's note and source, and a finding's
steps, are folded under <details> below the table, once per rule. Objects that one rule finds
saying the same thing (a hundred HelmReleases on a removed version) share one row, their list
folded below the table: a reviewer reads each problem once, and a large tree still fits. The
whole stays under GitHub's comment limit (scanner.report.comment): when it would not, those lists
name their first objects only, and what still does not fit is cut. Text from the tree goes through scanner.report.md: it
renders as itself and links, mentions and marks up nothing.
"""

from __future__ import annotations

from itertools import groupby

from scanner import __version__
from scanner.model import Finding
from scanner.report import comment, count, counts, hop_label, md, minor_sources, nothing_checked, scan_span, verdict
from scanner.paths import where
from scanner.scan import ScanResult

MAX_LISTED_PROBLEMS = 50  # input problems and unrendered files listed; the rest are counted
SHARED_FROM = 3  # findings of one rule in one hop that say the same thing share a row from this many on
LISTED_WHEN_CUT = 50  # objects a shared row's list names when the comment must be cut
_MIGRATE = {"now": "migrate now (the replacement is served already)",
            "during-hop": "migrate during the hop (the replacement is served only later)"}
_ICON = {"error": "⛔", "warning": "⚠️", "notice": "ℹ️"}

escape = md.text  # the name other Markdown reports import


def render(result: ScanResult, color: bool = False, limit: int | None = comment.LIMIT,
           full_report: str | None = None) -> str:
    head, tail = _head(result), _tail(result)
    parts = _parts(result, None, full_report)
    if limit is not None and comment.size(head + "".join(p.text for p in parts) + tail) > limit:
        parts = _parts(result, LISTED_WHEN_CUT, full_report)
    return comment.fit(head, parts, tail, limit, full_report)


def _head(result: ScanResult) -> str:
    icon = "❌" if result.errors else "⚠️" if nothing_checked(result) else "✅"
    lines = [f"## kubehop: {scan_span(result)}", "",
             f"{icon} **{verdict(result, lambda path: md.code(path, in_table=False))}** ({counts(result)}) · "
             f"{count(result.objects, 'object')} in {count(result.files_read, 'file')}", "",
             # kubehop's own words, but for the configuration's path (from the tree), written as code
             _capital(minor_sources(result, lambda path: md.code(where(path), in_table=False))) + ".", ""]
    lines += _clusters(result) + _first(result)
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


def _first(result: ScanResult) -> list[str]:
    """What to do first: the finding the report lists first (it breaks earliest), with its fix; in a
    fleet, the clusters it breaks in too, as its row says them."""
    first = next(iter(result.errors), None) or next(iter(result.warnings), None)
    if first is None:
        return []
    label = hop_label(first, result)
    alike = sum(f.severity == first.severity and hop_label(f, result) == label for f in result.findings)
    what = "blocker" if first.severity == "error" else "warning"
    when = f"{label}; {_in_clusters(first, result)}" if result.clusters and first.clusters else label
    line = (f"**Start with** {md.code(where(first.origin.path, first.origin.line, first.origin.column), in_table=False)} "
            f"{md.text(first.object_ref)} ({md.text(when)}): {_fix(first)[0]}")
    if alike > 1:
        line += f"; then the table “{md.text(_capital(label))}” ({count(alike - 1, 'more ' + what)})"
    return [line + ".", ""]


def _clusters(result: ScanResult) -> list[str]:
    """A fleet's clusters, in the order it rolls out: each from its own minor, with its own counts (a
    finding in a shared base counts in each cluster it breaks, once in the verdict)."""
    if not result.clusters:
        return []
    lines = ["| Cluster | From | Blockers | Warnings |", "|---|---|---:|---:|"]
    for view in result.clusters:
        span = f"{view.analysis.current}\u00a0→\u00a0{result.target}" if view.analysis.current else "—"
        lines.append(f"| {md.text(view.cluster.name)} | {span} | {len(view.analysis.errors)} | "
                     f"{len(view.analysis.warnings)} |")
    return lines + [""]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _groups(result: ScanResult) -> list[tuple[str, list[Finding]]]:
    return [(label, list(group)) for label, group in groupby(result.findings, key=lambda f: hop_label(f, result))]


def _level(group: list[Finding], severity: str) -> int:
    return sum(f.severity == severity for f in group)


def _parts(result: ScanResult, listed: int | None, full_report: str | None) -> list[comment.Part]:
    """Each hop: its table, a row per finding or per shared row (`listed`: how many objects a shared
    row's list names; None: all), then the folds below it."""
    parts: list[comment.Part] = []
    for label, group in _groups(result):
        rows = _rows(group)
        heading = [f"### {md.text(label[0].upper() + label[1:])}", "", "| Where | What breaks | Fix |",
                   "|---|---|---|"]
        parts.append(comment.Part(_block(heading + [_row(rows[0], result)]), len(rows[0])))
        parts.extend(comment.Part(_block([_row(row, result)]), len(row)) for row in rows[1:])
        parts.extend(comment.Part(_block(["", *details])) for details in _folded(group, rows, listed, full_report))
        parts.append(comment.Part("\n"))
    return parts


def _rows(group: list[Finding]) -> list[list[Finding]]:
    """The table's rows: a finding each, but findings of one rule that say the same thing and share
    their fix share a row (from SHARED_FROM on), where the first of them stood."""
    alike: dict[tuple, list[Finding]] = {}
    for f in group:
        alike.setdefault(_likeness(f), []).append(f)
    rows, placed = [], set()
    for f in group:
        key = _likeness(f)
        if len(alike[key]) < SHARED_FROM:
            rows.append([f])
        elif key not in placed:
            placed.add(key)
            rows.append(alike[key])
    return rows


def _likeness(f: Finding) -> tuple:
    """What findings must share to share a row; a component's finding is about that component alone."""
    if f.kind == "Component":
        return (id(f),)
    return f.rule_id, f.severity, f.message, f.fix, f.replacement, f.migrate, f.note, f.source_url, f.remediation


def _row(row: list[Finding], result: ScanResult) -> str:
    f = row[0]
    if len(row) > 1:
        kinds = ", ".join(sorted({m.kind for m in row}))
        place = (f"**{count(len(row), 'object')}** in {count(len({m.origin.path for m in row}), 'file')}: "
                 f"{md.wrappable(md.text(kinds))}<br><sub>listed below the table</sub>")
    else:
        place = _place(f, result)
    fix = md.wrappable("<br>".join(_fix(f)))
    return f"| {place} | {_ICON.get(f.severity, '')} {md.wrappable(md.text(f.message))} | {fix} |"


def _place(f: Finding, result: ScanResult) -> str:
    place = md.path(where(f.origin.path, f.origin.line, f.origin.column))
    place += f"<br>{md.wrappable(md.text(f.object_ref))}"
    if f.clusters:
        place += f"<br><sub>{md.text(_in_clusters(f, result))}</sub>"
    if f.support:  # a component's state for the hop's minor: unsupported, unknown or unverified
        place += f" ({md.text(f.support)})"
    if f.origin.via:
        place += f"<br><sub>via {md.wrappable(md.text(f.origin.via))}</sub>"
    return place


def _in_clusters(f: Finding, result: ScanResult) -> str:
    """The clusters a finding breaks in, with the hop in each whose minor makes it another than the
    table's ("prod: already broken at 1.29")."""
    table = hop_label(f, result)
    by_hop: dict[str, list[str]] = {}
    for name in f.clusters:
        view = next((v.analysis for v in result.clusters if v.cluster.name == name), None)
        by_hop.setdefault(hop_label(f, view) if view is not None else table, []).append(name)
    said = [", ".join(names) + ("" if hop == table else f": {hop}") for hop, names in by_hop.items()]
    return f"cluster{'s' if len(f.clusters) > 1 else ''} " + "; ".join(said)


def _fix(f: Finding) -> list[str]:
    """The Fix column: the finding's own fix (its message says what breaks), else its replacement."""
    fix = [md.text(f.fix or f"use {f.replacement}")] if f.fix or f.replacement else []
    if f.kind == "Component":  # a component's fix is its moves: the steps below list them all
        return fix + (["all its moves: steps below"] if len(f.remediation) > 1 else []) or ["—"]
    if not fix and not f.unscheduled:
        fix.append("no replacement" + (": see the note below" if f.note else ""))
    if f.migrate:
        fix.append(_MIGRATE[f.migrate])
    if f.remediation:
        fix.append("steps below")
    return fix or (["see the note below"] if f.note else ["—"])


def _folded(group: list[Finding], rows: list[list[Finding]], listed: int | None,
            full_report: str | None) -> list[list[str]]:
    """Below a hop's table: one fold with each rule's note and source, one listing each shared row's
    objects, then one per row with steps."""
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
    blocks += [_listing(row, listed, full_report) for row in rows if len(row) > 1]
    for row in rows:
        f = row[0]
        if f.remediation:
            summary = (f"Steps for {where(f.origin.path, f.origin.line, f.origin.column)} {f.object_ref}"
                       if len(row) == 1 else f"Steps for the {count(len(row), 'object')} of {f.rule_id}")
            blocks.append(_details(summary, md.fenced(list(f.remediation), "text")))
    return blocks


def _listing(row: list[Finding], listed: int | None, full_report: str | None) -> list[str]:
    """The objects of a shared row, each at its file and line (the first `listed` of them, if given)."""
    shown = row if listed is None else row[:listed]
    items = [f"- {md.code(where(f.origin.path, f.origin.line, f.origin.column), in_table=False)} "
             f"{md.text(f.object_ref)}" + (f" <sub>via {md.text(f.origin.via)}</sub>" if f.origin.via else "")
             for f in shown]
    if len(shown) < len(row):
        whole = (f"{md.code(full_report, in_table=False)}, written beside this one" if full_report else
                 "the full report (`--output-file FILE` writes it to FILE.full.md)")
        items.append(f"- … {count(len(row) - len(shown), 'more object')}: all of them are in {whole}")
    return _details(f"The {count(len(row), 'object')} of {row[0].rule_id}", items)


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
