"""Helm chart templates: only a plain top-level `apiVersion:` line is rewritten, as text."""

from __future__ import annotations

import re

from scanner.fix.migrations import Migration
from scanner.fix.plan import Planner
from scanner.fix.result import Left

_API_VERSION = re.compile(r"^apiVersion:[ \t]*(['\"]?)(?P<value>[A-Za-z0-9./-]+)\1[ \t]*(#.*)?\r?$")
_KIND = re.compile(r"^kind:[ \t]*(['\"]?)(?P<value>[A-Za-z0-9]+)\1[ \t]*(#.*)?\r?$")


def rewrite_template(lines: list[str], chunks: list[range], path: str, planner: Planner) -> tuple[int, list[Left]]:
    """Rewrite `lines` in place; returns how many objects moved and those left to a person."""
    migrated, left = 0, []
    for chunk in chunks:
        api_line = _first(lines, chunk, _API_VERSION)
        kind_line = _first(lines, chunk, _KIND)
        if api_line is None or kind_line is None:
            continue  # a templated apiVersion or kind: nothing can be known without rendering
        api = _API_VERSION.match(lines[api_line])
        kind = _KIND.match(lines[kind_line])["value"]
        decision = planner.decide(api["value"], kind)
        if isinstance(decision, Migration) and decision.is_version_bump:
            lines[api_line] = lines[api_line][:api.start("value")] + decision.new + lines[api_line][api.end("value"):]
            migrated += 1
        elif decision is not None:
            reason = decision if isinstance(decision, str) else _why_not(decision)
            left.append(Left(path, api_line + 1, f"{kind} (Helm template)", reason))
    return migrated, left


def _why_not(migration: Migration) -> str:
    if migration.operations:
        what = f"moving to {migration.new} changes fields too"
    else:
        reasons = "; ".join(u.reason for u in migration.unsafe)
        what = f"moving to {migration.new} needs a look at values only a rendered template has ({reasons})"
    return f"{what}; in a Helm template only a plain apiVersion line is rewritten: edit it by hand ({migration.source})"


def _first(lines: list[str], chunk: range, pattern: re.Pattern) -> int | None:
    return next((i for i in chunk if pattern.match(lines[i])), None)
