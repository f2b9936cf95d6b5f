"""The plan of a repository of several clusters: one set of windows per cluster, each from its own
current minor, in the order the repository rolls out (its configuration's `rollout:`, else the order
of its `clusters:`, else by name). The
verdict counts each finding once, as `kubehop scan` of the same tree does (scanner.fleet).
`plan_paths`, the service behind `kubehop plan`, gives it, or the Plan of a repository of one
cluster (scanner.plan)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scanner.versions import Minor

from scanner.plan import Plan, PlanInputError, PlanRequest, plan_of

if TYPE_CHECKING:
    from scanner.analysis import Analysis
    from scanner.clusters import Cluster
    from scanner.model import Finding


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


def plan_paths(request: PlanRequest) -> tuple[Plan | FleetPlan, Analysis]:
    """Analyse a tree and plan its hops: the service behind `kubehop plan`. A repository of several
    clusters gets a plan per cluster (scanner.fleet), each from its own current minor."""
    from scanner.analysis import NoCurrentMinor
    from scanner.current_minor import given_by
    from scanner.options import ScanOptions
    from scanner.scan import scan

    options = request.options or ScanOptions(unknown=request.unknown, allow_network=request.allow_network)
    if request.current is not None and request.current >= request.target:
        raise PlanInputError(f"the cluster is at {request.current} ({given_by(options)}): --target "
                             f"{request.target} is not newer")
    try:
        analysis = scan(list(request.paths), request.target, request.current, options, request.version_file,
                        request.cluster, need_current=True)  # what `kubehop scan` analyses, the same way
    except NoCurrentMinor as why:
        from scanner.given_paths import MISSING, words
        from scanner.paths import repo_path

        missing = [words(repo_path(p), MISSING) for p in request.paths if p != "-" and not os.path.lexists(p)]
        raise PlanInputError("; ".join(missing) if missing else str(why)) from None  # the wrong path, first
    if len(analysis.clusters) > 1:
        plans = [(v.cluster, plan_of(v.analysis, request)) for v in analysis.clusters if v.analysis.current]
        return FleetPlan(plans, analysis), analysis
    return plan_of(analysis, request), analysis
