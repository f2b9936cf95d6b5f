"""Checks: each module looks at the manifests for one kind of upgrade blocker.

A check is a callable `check(manifests, context) -> Iterable[Finding]` (context.py: the context and
the helpers a check builds its findings with), listed in `all_checks()`, run by `run_checks`.
Checks never read files: sources did that.
"""

from __future__ import annotations

from typing import Iterable, Sequence

# ScanContext: what the analysis hands every check (context.py).
from scanner.checks.context import Check, ScanContext  # noqa: F401
from scanner.guard import debugging, unexpected
from scanner.model import Diagnostic, Finding, Manifest
from scanner.versions import Minor


def all_checks() -> list[Check]:
    return per_object_checks() + tree_checks()


def per_object_checks() -> list[Check]:
    """Checks that read each object's whole tree, one object at a time, and of the context only the
    target and the rulebook: the scan runs them on each file as it is read, while its nodes are held."""
    from scanner.checks import field_rules

    return [field_rules.check]


def tree_checks() -> list[Check]:
    """Checks that look across objects (CRDs, components, orders, the cluster) or read no node."""
    from scanner.checks import (api_references, api_removal, client_calls, client_tools, cluster_config,
                                cluster_objects, component_support, crd_component_removal, crd_schema, crd_served,
                                node_skew, order_components, order_concurrency, order_skew, stored_versions,
                                upgrade_orders)

    return [api_removal.check, api_references.check, crd_served.check, crd_schema.check, stored_versions.check,
            cluster_objects.check, node_skew.check, crd_component_removal.check, component_support.check,
            upgrade_orders.check, order_skew.check, order_concurrency.check, order_components.check,
            cluster_config.check, client_tools.check, client_calls.check]


def run_checks(manifests: Sequence[Manifest], context: ScanContext, problems: list[Diagnostic] | None = None,
               checks: Sequence[Check] | None = None) -> list[Finding]:
    """The findings of `checks` (default: all). With `problems`, a check that fails (a bug) is run again
    object by object: an object it still fails on becomes an input problem there, the others keep
    their findings."""
    findings: list[Finding] = []
    for check in all_checks() if checks is None else checks:
        try:
            findings.extend(check(manifests, context))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None or debugging():
                raise
            findings.extend(_object_by_object(check, manifests, context, problems, err))
    return sort_findings(findings)


def _object_by_object(check: Check, manifests: Sequence[Manifest], context: ScanContext,
                      problems: list[Diagnostic], err: Exception) -> list[Finding]:
    name, before = f"<{check.__module__.rpartition('.')[2]} check>", len(problems)
    try:
        common = list(check([], context))  # what the check finds in the context alone (cluster state)
    except Exception as again:  # noqa: BLE001 - it fails whatever the objects: the check as a whole
        problems.append(unexpected(name, again, what="run this check"))
        return []
    found: dict[Finding, None] = dict.fromkeys(common)
    for manifest in manifests:
        try:
            found.update(dict.fromkeys(check([manifest], context)))
        except Exception as failed:  # noqa: BLE001
            problems.append(unexpected(manifest.origin.path, failed, manifest.origin.line,
                                       f"check {manifest.object_ref}"))
    if len(problems) == before:  # pragma: no cover - the whole failed, but no part of it does
        problems.append(unexpected(name, err, what="run this check"))
    return list(found)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    far = Minor(99, 0)
    # Findings tied to no minor (CRDs, cluster state) come first: they block whatever the hop.
    return sorted(findings, key=lambda f: (
        not f.unscheduled, f.breaks_in or far, f.origin.path, f.origin.line, f.origin.column, f.rule_id))
