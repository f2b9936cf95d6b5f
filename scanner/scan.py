"""`kubehop scan` as a service: paths in, the analysis out (scanner.analysis). The CLI and the tests
call this; `plan`, `components` and `inventory` are other views of the same analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.analysis import Analysis
from scanner.options import ScanOptions
from scanner.policy import apply_policy
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.pins import ClusterPin

ScanResult = Analysis  # what the reports of a scan read

__all__ = ["ScanOptions", "ScanResult", "apply_policy", "scan"]


def scan(paths: list[str], target: Minor, current: Minor | None = None, options: ScanOptions = ScanOptions(),
         version_file: ClusterPin | None = None, cluster: str | None = None) -> Analysis:
    """The analysis of `paths`; of each cluster on its own where the repository declares several
    (scanner.fleet), or of `cluster` alone."""
    from scanner.fleet import analyse_fleet

    return analyse_fleet(paths, target, current, options, only=cluster, version_file=version_file)
