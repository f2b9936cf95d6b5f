"""Built-in API versions the target minor no longer serves (or has deprecated)."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks import ScanContext, rule_finding
from scanner.model import Finding, Manifest
from scanner.rulebook import ApiRule, Successor


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    rules = context.rulebook.api_rules
    for manifest in manifests:
        rule = rules.get((manifest.api_version, manifest.kind))
        if rule is not None and rule.deprecated_in <= context.target:
            yield _finding(manifest, rule, context)


def _finding(manifest: Manifest, rule: ApiRule, context: ScanContext) -> Finding:
    removed = rule.removed_in is not None and rule.removed_in <= context.target
    what = f"{rule.api_version} {rule.kind}"
    if removed:
        message = f"{what} is no longer served from Kubernetes {rule.removed_in}"
    elif rule.removed_in:
        message = f"{what} is deprecated since {rule.deprecated_in} and stops being served in {rule.removed_in}"
    else:
        message = f"{what} is deprecated since {rule.deprecated_in}"
    successor = context.rulebook.successor(rule, context.target)
    if successor.api_version:
        message += f"; use {successor.api_version}" + ("" if successor.kind == rule.kind else f" {successor.kind}")
        if successor.served_from:
            message += f" (served from {successor.served_from})"
    elif successor.instead:
        gone = "" if rule.replacement is None else f" on {context.target}"
        message += f"; no API replaces it{gone}: {successor.instead}"
    return rule_finding(manifest, rule, removed, message, replacement=successor.api_version,
                        migrate=_when_to_migrate(successor, context))


def _when_to_migrate(successor: Successor, context: ScanContext) -> str | None:
    """With --from: can the replacement be adopted on today's cluster, or only later?"""
    if context.current is None or successor.api_version is None:
        return None
    since = context.rulebook.served.first_served(successor.api_version, successor.kind)
    if since is None:
        return None
    return "now" if since <= context.current else "during-hop"
