"""Fields, volume types, annotations and labels that a still-served API stops honouring.

Its rules are rules/fields', one per field, volume type, annotation or label (a project's own rule
folders add more). It reads each object alone: the scan runs it as each file is read.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import OBJECT, RuleInfo, Rules, ScanContext
from scanner.checks.findings import minors_said, rule_finding
from scanner.model import Finding, Manifest
from scanner.pathexpr import Match
from scanner.rulebook import FieldCheck, FieldRule, Rulebook
from scanner.nodes import scalar

SCOPE = OBJECT


def _rules(rulebook: Rulebook) -> dict[str, RuleInfo]:
    return {rule.id: _describe(rule) for rule in rulebook.field_rules.rules}


def _describe(rule: FieldRule) -> RuleInfo:
    if rule.removed_in:
        title = f"{rule.title} does not work from Kubernetes {rule.removed_in}"
    else:
        since = f" since Kubernetes {rule.deprecated_in}" if rule.deprecated_in else ""
        title = f"{rule.title} is deprecated{since}"
    description = minors_said(rule.deprecated_in and f"Kubernetes {rule.deprecated_in}",
                              rule.removed_in and f"Kubernetes {rule.removed_in}", rule.replacement, rule.note,
                              stops="Stops working in")
    return RuleInfo(title, description, "error" if rule.removed_in else "warning", rule.source, rule)


RULES = Rules(_rules, pattern="field/<topic>/<name>", data="rules/fields")


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    field_rules = context.rulebook.field_rules
    for manifest in manifests:
        tree = field_rules.for_object(manifest.group, manifest.kind)
        if tree is None:
            continue
        for field_check, match in tree.find(manifest.node):
            if (field_check.concerns(manifest.api_version, context.target) and field_check.holds(match.node)
                    and field_check.accepts(scalar(match.node)) and not field_check.excused(manifest.node)):
                yield _finding(manifest, field_check, match, context)


def _finding(manifest: Manifest, field_check: FieldCheck, match: Match, context: ScanContext) -> Finding:
    rule = field_check.rule
    removed = rule.removed_in is not None and rule.removed_in <= context.target
    return rule_finding(manifest, rule, removed, f"{match.where}: {_verdict(rule, removed)}",
                        manifest.origin_at(match.key), fix=f"use {rule.replacement}" if rule.replacement else None)


def _verdict(rule: FieldRule, removed: bool) -> str:
    if removed:
        return f"{rule.title} does not work from Kubernetes {rule.removed_in}"
    since = f" since {rule.deprecated_in}" if rule.deprecated_in else ""
    until = f" and stops working in {rule.removed_in}" if rule.removed_in else ""
    return f"{rule.title} is deprecated{since}{until}"
