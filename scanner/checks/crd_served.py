"""Custom resources at a version their CRD does not serve (error) or has deprecated (warning)."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import TREE, ScanContext
from scanner.checks.findings import crd_lifecycle_rules, object_finding
from scanner.crds import Crd, successor
from scanner.model import Finding, Manifest

SCOPE = TREE
UNSERVED, DEPRECATED = "crd/unserved-version", "crd/deprecated-version"
RULES = crd_lifecycle_rules({
    UNSERVED: ("error", "a custom resource at a version its CRD does not serve"),
    DEPRECATED: ("warning", "a custom resource at a version its CRD deprecates"),
})


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if not len(context.crds):
        return
    for manifest in manifests:
        crd = context.crds.for_object(manifest.api_version, manifest.kind)
        if crd is None:
            continue
        version = crd.version_of(manifest.api_version)
        if version is None or not version.served:
            served = ", ".join(crd.served) or "no version"
            yield _finding(manifest, crd, UNSERVED, "error",
                           f"the CRD {crd.name} ({crd.where}) does not serve {manifest.api_version}; "
                           f"it serves {served}: the API server refuses this object")
        elif version.deprecated:
            warning = version.deprecation_warning or f"{manifest.api_version} {manifest.kind} is deprecated"
            yield _finding(manifest, crd, DEPRECATED, "warning",
                           f"the CRD {crd.name} ({crd.where}) deprecates this version: \"{warning}\"")


def _finding(manifest: Manifest, crd: Crd, rule_id: str, severity: str, message: str) -> Finding:
    replacement = successor(crd, manifest.api_version)
    fix = f"use {replacement}" if replacement and replacement not in message else None
    return object_finding(manifest, rule_id, severity, message, replacement=replacement, fix=fix)
