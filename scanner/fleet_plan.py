"""The plan of a repository of several clusters: one set of windows per cluster, each from its own
current minor, in the order the repository lists its clusters (its `clusters:`, else by name). The
verdict counts each finding once, as `kubehop scan` of the same tree does (scanner.fleet)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.analysis import Analysis
    from scanner.clusters import Cluster
    from scanner.model import Finding
    from scanner.plan import Plan


@dataclass
class FleetPlan:
    plans: list[tuple[Cluster, Plan]]
    analysis: Analysis  # the fleet's: every cluster's findings, each once

    @property
    def target(self) -> Minor:
        return self.analysis.target

    @property
    def findings(self) -> list[Finding]:
        return self.analysis.findings

    @property
    def blocker_count(self) -> int:
        return len(self.analysis.errors)

    @property
    def warning_count(self) -> int:
        return len(self.analysis.warnings)

    @property
    def blocked(self) -> bool:
        return self.blocker_count > 0

    @property
    def unplanned(self) -> list[Finding]:
        """Findings of files no planned cluster deploys (scanner.fleet's "no cluster" group)."""
        planned = {c.name for c, _ in self.plans}
        return [f for f in self.analysis.findings if not planned.intersection(f.clusters)]
