"""The JSON report as YAML (`-o yaml`, as kubectl writes it): the same keys, the same values, written
by plain.log_yaml."""

from __future__ import annotations

import json

from scanner.report import json_report
from scanner.report.plain import log_yaml
from scanner.scan import ScanResult


def from_json(text: str) -> str:
    """A JSON document kubehop wrote (a scan's, a plan's), as YAML."""
    return log_yaml(json.loads(text))


def render(result: ScanResult, color: bool = False) -> str:
    return from_json(json_report.render(result))
