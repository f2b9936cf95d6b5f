"""Fields, volume types, annotations and labels that a still-served API stops honouring."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks import ScanContext, rule_finding
from scanner.model import Finding, Manifest
from scanner.pathexpr import Match
from scanner.rulebook import FieldCheck, FieldRule
from scanner.nodes import scalar


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
                        manifest.origin_at(match.key))


def _verdict(rule: FieldRule, removed: bool) -> str:
    if removed:
        text = f"{rule.title} does not work from Kubernetes {rule.removed_in}"
    else:
        since = f" since {rule.deprecated_in}" if rule.deprecated_in else ""
        until = f" and stops working in {rule.removed_in}" if rule.removed_in else ""
        text = f"{rule.title} is deprecated{since}{until}"
    return f"{text}; use {rule.replacement}" if rule.replacement else text
