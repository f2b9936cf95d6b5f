"""The checks' helpers that make findings: from a rule of the rulebook, about a custom resource,
about an upgrade order. The other layers hand the checks facts; only checks make a Finding.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

from scanner import data
from scanner.checks.context import RegistryError, RuleInfo, Rules
from scanner.model import Finding, Manifest, Origin

if TYPE_CHECKING:
    from scanner.orders.kinds import OrderKind
    from scanner.orders.read import UpgradeOrder
    from scanner.rulebook import ApiRule, FieldRule
    from scanner.versions import Minor

CRD_LIFECYCLE = "rules/lifecycle/crd.yaml"


def rule_finding(manifest: Manifest, rule: ApiRule | FieldRule, removed: bool, message: str,
                 origin: Origin | None = None, **extra) -> Finding:
    """A finding about `manifest` from a rule (API or field: both carry id, minors, replacement, note, source).

    `extra` sets further Finding fields, or overrides the rule's (the replacement the target serves; the id
    and minor of a finding about a reference to the rule's API)."""
    fields = dict(rule_id=rule.id, breaks_in=rule.removed_in, deprecated_in=rule.deprecated_in,
                  replacement=rule.replacement, note=rule.note, source_url=rule.source)
    return Finding(
        severity="error" if removed else "warning",
        message=message,
        origin=origin or manifest.origin,
        api_version=manifest.api_version,
        kind=manifest.kind,
        name=manifest.name,
        namespace=manifest.namespace,
        **{**fields, **extra},
    )


def minors_said(deprecated_in: object, removed_in: object, replacement: str | None, note: str | None,
                stops: str = "No longer served from") -> str:
    """A rule's minors, replacement and note, as sentences: the description of a rule the data declares."""
    facts = []
    if deprecated_in:
        facts.append(f"Deprecated in {deprecated_in}.")
    if removed_in:
        facts.append(f"{stops} {removed_in}.")
    if replacement:
        facts.append(f"Replacement: {replacement}.")
    if note:
        facts.append(note)
    return " ".join(facts)


# --- CRD rules (rules/lifecycle/crd.yaml) ------------------------------------------------------------

def crd_lifecycle_rules(declared: dict[str, tuple[str, str]]) -> Rules:
    """The CRD rules a check reports, {id: (default severity, title)}: what each means and where
    Kubernetes documents it are in rules/lifecycle/crd.yaml, which must know every id."""
    def build(_rulebook) -> dict[str, RuleInfo]:
        said = _crd_lifecycle()
        unknown = sorted(declared.keys() - said.keys())
        if unknown:
            raise RegistryError(f"{CRD_LIFECYCLE} does not describe {', '.join(unknown)}")
        return {rule_id: RuleInfo(title, said[rule_id]["summary"], severity, said[rule_id]["source"])
                for rule_id, (severity, title) in declared.items()}

    return Rules(build)


@functools.cache
def _crd_lifecycle() -> dict[str, dict]:
    return {r["id"]: r for r in data.load(CRD_LIFECYCLE)["rules"]}


def object_finding(manifest: Manifest, rule_id: str, severity: str, message: str,
                   origin: Origin | None = None, **details: Any) -> Finding:
    """A finding of a CRD rule about one object (by default at its apiVersion line)."""
    return Finding(rule_id=rule_id, severity=severity, message=message, origin=origin or manifest.origin,
                   api_version=manifest.api_version, kind=manifest.kind, name=manifest.name,
                   namespace=manifest.namespace, source_url=_crd_lifecycle()[rule_id]["source"], **details)


# --- upgrade orders -----------------------------------------------------------------------------------

def order_finding(order: UpgradeOrder, rule_id: str, severity: str, message: str, breaks_in: Minor | None,
                  origin: Origin | None = None, source: str | None = None,
                  remediation: tuple[str, ...] = ()) -> Finding:
    """A finding about an upgrade order, at the line of the field (the version's by default)."""
    manifest = order.manifest
    return Finding(rule_id=rule_id, severity=severity, message=message, origin=origin or order.origin,
                   api_version=manifest.api_version, kind=manifest.kind, name=manifest.name,
                   namespace=manifest.namespace, breaks_in=breaks_in, source_url=source or order.kind.source,
                   remediation=remediation)


def order_kind_source(has: Callable[[OrderKind], Any]) -> str | None:
    """Where the first order kind whose controller does `has` documents it (rules/upgrade-orders.yaml):
    the help of a rule about what such a controller enforces."""
    from scanner.orders.kinds import order_kinds

    return next((kind.source for kind in order_kinds().values() if has(kind)), None)
