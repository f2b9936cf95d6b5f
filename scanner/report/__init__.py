"""Reporters: a ScanResult in, text out. One module per format."""

from __future__ import annotations

from typing import Callable

from scanner.model import Finding
from scanner.scan import ScanResult


def render(result: ScanResult, fmt: str, color: bool = False) -> str:
    return reporter(fmt)(result, color)


def reporter(fmt: str) -> Callable[[ScanResult, bool], str]:
    from scanner.report import json_report, text

    return {"text": text.render, "json": json_report.render}[fmt]


FORMATS = ("text", "json")


def hop_label(finding: Finding, result: ScanResult) -> str:
    """The group a finding belongs to in a report: the hop where it breaks."""
    if finding.unscheduled:
        return "at any Kubernetes version"
    if finding.severity == "warning":
        return f"deprecated, still served at {result.target}"
    if result.current is not None and finding.breaks_in <= result.current:
        return f"already not served at {result.current}"
    return f"hop to {finding.breaks_in}"
