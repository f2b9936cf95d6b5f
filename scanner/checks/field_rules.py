"""Fields, volume types, annotations and labels that a still-served API stops honouring."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks import ScanContext
from scanner.model import Finding, Manifest, Origin
from scanner.pathexpr import Match
from scanner.rulebook import FieldCheck, FieldRule
from scanner.sources.yamldoc import scalar


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    field_rules = context.rulebook.field_rules
    for manifest in manifests:
        tree = field_rules.for_object(manifest.group, manifest.kind)
        if tree is None:
            continue
        for field_check, match in tree.find(manifest.node):
            if (field_check.concerns(manifest.api_version, context.target) and field_check.accepts(scalar(match.node))
                    and not field_check.excused(manifest.node)):
                yield _finding(manifest, field_check, match, context)


def _finding(manifest: Manifest, field_check: FieldCheck, match: Match, context: ScanContext) -> Finding:
    rule = field_check.rule
    removed = rule.removed_in is not None and rule.removed_in <= context.target
    mark = match.key.start_mark
    return Finding(
        rule_id=rule.id,
        severity="error" if removed else "warning",
        message=f"{match.where}: {_verdict(rule, removed)}",
        origin=Origin(manifest.origin.path, mark.line + 1, mark.column + 1, manifest.origin.via),
        api_version=manifest.api_version,
        kind=manifest.kind,
        name=manifest.name,
        namespace=manifest.namespace,
        breaks_in=rule.removed_in,
        deprecated_in=rule.deprecated_in,
        replacement=rule.replacement,
        note=rule.note,
        source_url=rule.source,
    )


def _verdict(rule: FieldRule, removed: bool) -> str:
    if removed:
        text = f"{rule.title} does not work from Kubernetes {rule.removed_in}"
    else:
        since = f" since {rule.deprecated_in}" if rule.deprecated_in else ""
        until = f" and stops working in {rule.removed_in}" if rule.removed_in else ""
        text = f"{rule.title} is deprecated{since}{until}"
    return f"{text}; use {rule.replacement}" if rule.replacement else text
