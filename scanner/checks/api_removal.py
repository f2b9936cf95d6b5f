"""Built-in API versions the target minor no longer serves (or has deprecated)."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks import ScanContext, rule_finding
from scanner.model import Finding, Manifest
from scanner.rulebook import ApiRule


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
    if rule.replacement:
        successor = rule.replacement + ("" if rule.replacement_kind == rule.kind else f" {rule.replacement_kind}")
        message += f"; use {successor}"
    return rule_finding(manifest, rule, removed, message, migrate=_when_to_migrate(rule, context))


def _when_to_migrate(rule: ApiRule, context: ScanContext) -> str | None:
    """With --from: can the replacement be adopted on today's cluster, or only later?"""
    if context.current is None or rule.replacement is None:
        return None
    since = context.rulebook.served.first_served(rule.replacement, rule.replacement_kind)
    if since is None:
        return None
    return "now" if since <= context.current else "during-hop"
