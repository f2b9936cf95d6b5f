"""Reporters: a ScanResult in, text out. One module per format."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable, Sequence

from scanner.model import Finding
from scanner.report.plain import printable
from scanner.words import count

if TYPE_CHECKING:  # the CLI reads FORMATS at start-up: no scan machinery imported for that
    from scanner.scan import ScanResult

# format name -> module under scanner.report that defines `render(result, color) -> str`
_MODULES = {
    "text": "text",
    "wide": "wide",
    "json": "json_report",
    "yaml": "yaml_report",
    "csv": "csv_report",
    "sarif": "sarif",
    "markdown": "markdown",
    "github": "github",
}
FORMATS = tuple(_MODULES)


def render(result: ScanResult, fmt: str, color: bool = False) -> str:
    return reporter(fmt)(result, color)


def documents(result: ScanResult, fmt: str, path: str | None, color: bool = False) -> list[tuple[str | None, str]]:
    """(file, text) to write for a report to `path` (None: standard output). A Markdown report longer
    than a comment is cut, and the whole of it goes beside it (scanner.report.comment)."""
    if fmt != "markdown":
        return [(path, render(result, fmt, color))]
    from scanner.report import comment, markdown

    return comment.outputs(lambda limit, full: markdown.render(result, limit=limit, full_report=full), path)


def reporter(fmt: str) -> Callable[[ScanResult, bool], str]:
    return importlib.import_module(f"scanner.report.{_MODULES[fmt]}").render


def hop_label(finding: Finding, result: ScanResult) -> str:
    """The group a finding belongs to in a report: the hop where it breaks."""
    if finding.not_deployed:  # what it would break is in its note; nothing applies the file
        return "not deployed"
    if finding.unscheduled:
        return "at any Kubernetes version"
    # A warning about a deprecation (or an error a severity override promoted, with no minor) is not a hop's;
    # a warning or notice about a hop (an upgrade order's) is.
    if finding.breaks_in is None or (finding.severity != "error" and finding.deprecated_in is not None):
        return f"deprecated, still works at {result.target}"
    if result.current is not None and finding.breaks_in <= result.current:
        return f"already broken at {result.current}" if finding.severity == "error" else f"at {result.current}"
    return f"hop to {finding.breaks_in}"


def scan_span(result: ScanResult) -> str:
    if result.clusters:
        return f"{count(len(result.clusters), 'cluster')} up to {result.target}"
    return f"{result.current} → {result.target}" if result.current else f"up to {result.target}"


# One verdict, worded once: `scan` and `plan` of the same tree count the same findings (the plan's are
# what a scan reports: scanner.plan.Plan.findings) and say it in these words, in every format.

def verdict_words(target: object, blockers: int) -> str:
    return f"blocked: {target} cannot be reached as is" if blockers else f"nothing blocks {target}"


def count_words(findings: Sequence[Finding], unreadable: int = 0) -> str:
    levels = [f.severity for f in findings]
    parts = [count(levels.count("error"), "blocker"), count(levels.count("warning"), "warning")]
    if "notice" in levels:
        parts.append(count(levels.count("notice"), "notice"))
    if unreadable:
        parts.append(count(unreadable, "unreadable input"))
    return ", ".join(parts)


def nothing_checked(result: ScanResult) -> bool:
    """No Kubernetes object was read, nor anything else kubehop checks (a component or cluster version
    pin, a client tool pin, cluster configuration), and nothing was found: "nothing blocks" would claim
    too much."""
    tree = result.tree
    pinned = tree is not None and bool(tree.detections or tree.cluster)
    return result.objects == 0 and not result.findings and not (result.tool_pins or result.cluster_config or pinned)


def verdict(result: ScanResult, name: Callable[[str], str] = printable) -> str:
    """The verdict; a scan that read no Kubernetes object and found nothing checked nothing, and says so
    (why: a path given that does not exist or holds no object; how many files the exclusions left out)
    rather than that nothing blocks. `name` writes a path given (the configuration's `paths` are the
    tree's) for the format."""
    if nothing_checked(result):
        excluded = result.silenced.get("excluded", 0)
        from scanner.given_paths import words

        why = "; ".join(words(name(path), why) for path, why in result.nothing_in) or "no Kubernetes object was read"
        return f"nothing checked for {result.target}: {why}" + (
            f", {count(excluded, 'file')} left out by `exclude`" if excluded else "")
    return verdict_words(result.target, len(result.errors))


# Where a minor came from (ScanResult.target_source, current_source), in words; the configuration's own
# file is named by the caller, in its format.
_SET_BY = {"default": "by default (the newest minor kubehop knows)", "cluster-state": "read from the cluster dump",
           "version-file": "read from --cluster-version-file", "upgrade-orders": "read from the tree's upgrade orders",
           "version-variables": "read from the tree's version variables"}


def minor_sources(result: ScanResult, file_name: Callable[[str], str]) -> str:
    """e.g. "target 1.36 set by the configuration .kubehop.yaml; from 1.31 set by --from"; `file_name`
    writes the configuration's path for the format (it comes from the tree)."""
    def said(source: str | None, flag: str) -> str:
        if source == "flag":
            return f"set by {flag}"
        if source == "configuration":
            return f"set by the configuration {file_name(result.configuration or '?')}"
        return _SET_BY.get(source or "", "given")

    text = f"target {result.target} {said(result.target_source, '--target')}"
    if result.current is not None:
        text += f"; from {result.current} {said(result.current_source, '--from')}"
    return text


def counts(result: ScanResult) -> str:
    return count_words(result.findings, len(result.input_errors))
