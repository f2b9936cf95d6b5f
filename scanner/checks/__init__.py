"""Checks: each module looks at the manifests for one kind of upgrade blocker.

A check is a callable `check(manifests, context) -> Iterable[Finding]`,
listed in CHECKS. Checks never read files: sources did that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from scanner.model import Finding, Manifest, Origin
from scanner.rulebook import ApiRule, FieldRule, Rulebook
from scanner.versions import Minor


@dataclass(frozen=True)
class ScanContext:
    target: Minor
    rulebook: Rulebook
    current: Minor | None = None  # --from: the minor the cluster runs today


Check = Callable[[Sequence[Manifest], ScanContext], Iterable[Finding]]


def all_checks() -> list[Check]:
    from scanner.checks import api_removal, field_rules

    return [api_removal.check, field_rules.check]


def rule_finding(manifest: Manifest, rule: ApiRule | FieldRule, removed: bool, message: str,
                 origin: Origin | None = None, **extra) -> Finding:
    """A finding about `manifest` from a rule (API or field: both carry id, minors, replacement, note, source)."""
    return Finding(
        rule_id=rule.id,
        severity="error" if removed else "warning",
        message=message,
        origin=origin or manifest.origin,
        api_version=manifest.api_version,
        kind=manifest.kind,
        name=manifest.name,
        namespace=manifest.namespace,
        breaks_in=rule.removed_in,
        deprecated_in=rule.deprecated_in,
        replacement=rule.replacement,
        note=rule.note,
        source_url=rule.source,
        **extra,
    )


def run_checks(manifests: Sequence[Manifest], context: ScanContext) -> list[Finding]:
    findings: list[Finding] = []
    for check in all_checks():
        findings.extend(check(manifests, context))
    return sort_findings(findings)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    far = Minor(99, 0)
    return sorted(findings, key=lambda f: (
        f.breaks_in or far, f.origin.path, f.origin.line, f.origin.column, f.rule_id))
