"""When each Kubernetes minor came out (rules/kubernetes.yaml `releases`): which minors a fact read on
a given day can speak for, and which minors are not out yet (projected)."""

from __future__ import annotations

import functools

from scanner import data
from scanner.versions import Minor, parse_minor


@functools.cache
def _releases() -> tuple[tuple[Minor, str, bool], ...]:
    """(minor, day of its .0 release, out) for every minor listed, oldest first."""
    listed = data.load("rules/kubernetes.yaml").get("releases") or ()
    return tuple(sorted((parse_minor(r["minor"]), r["released"], r.get("status") != "scheduled") for r in listed))


def newest_out_on(day: str) -> Minor | None:
    """The newest minor released on or before `day` (YYYY-MM-DD); None when none is listed by then."""
    out = [minor for minor, released, done in _releases() if done and released <= day]
    return out[-1] if out else None


def scheduled(minor: Minor) -> str | None:
    """The day a minor that is not out yet is scheduled for; None when it is out or not listed."""
    return next((released for m, released, done in _releases() if m == minor and not done), None)
