"""Components that cannot run on a hop's minor: a blocker at the line of the pin, with the moves
that unblock it; hops no release states support for are unverified (--unknown decides what that
counts as). Read from the component state, which the plan draws its windows from too.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import ScanContext
from scanner.model import Finding, Manifest


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    timeline = context.components
    if timeline is None:
        from scanner.components.tree import timeline_of_manifests

        timeline = timeline_of_manifests(manifests, context.target, context.current, context.unknown)
    from scanner.components.verdicts import problem_findings

    return problem_findings(timeline)
