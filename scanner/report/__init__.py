"""Reporters: a ScanResult in, text out. One module per format."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable

from scanner.model import Finding
from scanner.words import count

if TYPE_CHECKING:  # the CLI reads FORMATS at start-up: no scan machinery imported for that
    from scanner.scan import ScanResult

# format name -> module under scanner.report that defines `render(result, color) -> str`
_MODULES = {
    "text": "text",
    "json": "json_report",
    "sarif": "sarif",
    "markdown": "markdown",
    "github": "github",
}
FORMATS = tuple(_MODULES)


def render(result: ScanResult, fmt: str, color: bool = False) -> str:
    return reporter(fmt)(result, color)


def reporter(fmt: str) -> Callable[[ScanResult, bool], str]:
    return importlib.import_module(f"scanner.report.{_MODULES[fmt]}").render


def hop_label(finding: Finding, result: ScanResult) -> str:
    """The group a finding belongs to in a report: the hop where it breaks."""
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
    return f"{result.current} → {result.target}" if result.current else f"up to {result.target}"


def verdict(result: ScanResult) -> str:
    if result.errors:
        return f"blocked: {result.target} cannot be reached as is"
    return f"nothing blocks {result.target}"


def counts(result: ScanResult) -> str:
    parts = [count(len(result.errors), "blocker"), count(len(result.warnings), "warning")]
    noticed = sum(f.severity == "notice" for f in result.findings)
    if noticed:
        parts.append(count(noticed, "notice"))
    if result.input_errors:
        parts.append(count(len(result.input_errors), "unreadable input"))
    return ", ".join(parts)
