"""Fields, volume types, annotations and labels that a still-served API stops honouring.

Its rules are rules/fields', one per field, volume type, annotation or label (a project's own rule
folders add more). It reads each object alone: the scan runs it as each file is read.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import OBJECT, RuleInfo, Rules, ScanContext
from scanner.checks.findings import minors_said, rule_finding
from scanner.model import Finding, Manifest, Origin
from scanner.pathexpr import Match
from scanner.rulebook import FieldCheck, FieldRule, Rulebook
from scanner.nodes import scalar
from scanner.versions import Minor

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
    # Whether the tree installs a CSI migration's driver is known once the whole tree is read: these
    # findings say it is not, and scanner.csi_migration settles them (installed_drivers).
    breaks = field_check.breaks_in()
    removed = breaks is not None and breaks <= context.target
    return rule_finding(manifest, rule, removed, f"{match.where}: {verdict(field_check, breaks, removed)}",
                        _origin(manifest, field_check, match), breaks_in=breaks,
                        fix=f"use {rule.replacement}" if rule.replacement else None)


def _origin(manifest: Manifest, field_check: FieldCheck, match: Match) -> Origin:
    """The key's line; for a rule about a value (a provisioner's name) set in another file than the key
    (a chart's values.yaml, not the template that prints it: sources/helm/values_lines.py), the value's."""
    at = manifest.origin_at(match.key)
    if field_check.values and match.node is not match.key:
        value_at = manifest.origin_at(match.node)
        if value_at.path != at.path:
            return value_at
    return at


def verdict(field_check: FieldCheck, breaks: Minor | None, removed: bool) -> str:
    """What a finding of `field_check` says of what it matched, the rule's CSI driver not in the tree."""
    rule, migration = field_check.rule, field_check.rule.csi_migration
    unless = "" if migration is None else \
        f" unless the {migration.driver} CSI driver is installed on the cluster (kubehop sees none in the tree)"
    if removed:
        if migration is not None and field_check.provisioning:
            return (f"{rule.title} provisions nothing from Kubernetes {breaks} (CSI migration, on by default from "
                    f"then, has no in-tree fallback for provisioning){unless}")
        return f"{rule.title} does not work from Kubernetes {breaks}{unless}"
    since = f" since {rule.deprecated_in}" if rule.deprecated_in else ""
    until = f" and stops working in {breaks}{unless}" if breaks else ""
    return f"{rule.title} is deprecated{since}{until}"
