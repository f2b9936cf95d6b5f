"""Built-in API versions the target minor no longer serves (or has deprecated).

Its rules are rules/core's, one per apiVersion and kind (a project's own rule folders add more).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.findings import minors_said, rule_finding
from scanner.model import Finding, Manifest
from scanner.nodes import mapping_get
from scanner.rulebook import ApiRule, Rulebook, Successor

SCOPE = TREE


def _rules(rulebook: Rulebook) -> dict[str, RuleInfo]:
    return {rule.id: _describe(rule, rulebook) for rule in rulebook.rules()}


def _describe(rule: ApiRule, rulebook: Rulebook) -> RuleInfo:
    """What a core rule says, whatever the target: the replacement is the one the newest minor serves."""
    if rule.removed_in:
        title = f"not served from Kubernetes {rule.removed_in}"
    else:
        title = f"deprecated since Kubernetes {rule.deprecated_in}"
    successor = rulebook.successor(rule, rulebook.newest).api_version
    description = minors_said(f"Kubernetes {rule.deprecated_in}", rule.removed_in and f"Kubernetes {rule.removed_in}",
                              successor, rule.note)
    return RuleInfo(title, description, "error" if rule.removed_in else "warning", rule.source, rule)


RULES = Rules(_rules, pattern="<apiVersion>/<Kind>", data="rules/core")

PROJECTED = "projected"  # how a report names a fact that rests on pre-release sources only


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    rules = context.rulebook.api_rules
    said: dict[tuple[str, str], tuple[Verdict, str]] = {}  # the verdict and message of each rule met, made once
    for manifest in manifests:
        key = (manifest.api_version, manifest.kind)
        rule = rules.get(key)
        if rule is not None and rule.deprecated_in <= context.target:
            if key not in said:
                verdict_ = verdict(rule, context)
                said[key] = verdict_, f"{rule.api_version} {rule.kind} {verdict_.state}{verdict_.instead}"
            yield _finding(manifest, rule, *said[key])


@dataclass(frozen=True)
class Verdict:
    """What a rule says of its API on the target minor, worded for any subject (an object, a reference)."""

    removed: bool
    state: str  # "is no longer served from Kubernetes 1.25", "is deprecated since …"
    fix: str | None  # "use batch/v1 (served from 1.21)"; None when nothing replaces it
    instead: str  # when nothing replaces it, what to do, said after the state ("; no API replaces it: …"); or ""
    replacement: str | None  # the apiVersion the target serves instead
    replacement_kind: str  # its kind (the rule's own, unless the successor is another kind)
    migrate: str | None  # with --from: "now" or "during-hop"


def verdict(rule: ApiRule, context: ScanContext) -> Verdict:
    """The rule's verdict on the target (deprecated_in <= target)."""
    removed = rule.removed_in is not None and rule.removed_in <= context.target
    if removed:
        state = f"is no longer served from Kubernetes {rule.removed_in}"
    elif rule.removed_in:
        state = f"is deprecated since {rule.deprecated_in} and stops being served in {rule.removed_in}"
    else:
        state = f"is deprecated since {rule.deprecated_in}"
    if rule.projected and rule.removed_in is not None:
        state += f" ({PROJECTED}: announced before {rule.removed_in}'s release, not yet confirmed by its release notes)"
    successor = context.rulebook.successor(rule, context.target)
    fix, instead = None, ""
    if successor.api_version:
        fix = f"use {successor.api_version}" + ("" if successor.kind == rule.kind else f" {successor.kind}")
        if successor.served_from:
            fix += f" (served from {successor.served_from})"
    elif successor.instead:
        gone = "" if rule.replacement is None else f" on {context.target}"
        instead = f"; no API replaces it{gone}: {successor.instead}"
    return Verdict(removed, state, fix, instead, successor.api_version, successor.kind,
                   _when_to_migrate(successor, context))


def _finding(manifest: Manifest, rule: ApiRule, said: Verdict, message: str) -> Finding:
    # An apiVersion a Flux Kustomization's variable filled in is edited where the variable is set.
    origin = manifest.filled_at(mapping_get(manifest.node, "apiVersion")) if manifest.filled else None
    return rule_finding(manifest, rule, said.removed, message, origin, replacement=said.replacement,
                        migrate=said.migrate, fix=said.fix)


def _when_to_migrate(successor: Successor, context: ScanContext) -> str | None:
    """With --from: can the replacement be adopted on today's cluster, or only later?"""
    if context.current is None or successor.api_version is None:
        return None
    since = context.rulebook.served.first_served(successor.api_version, successor.kind)
    if since is None:
        return None
    return "now" if since <= context.current else "during-hop"
