"""Custom resources at a version their CRD does not serve (error) or has deprecated (warning)."""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner.checks.context import ScanContext
from scanner.crds import Crd, object_finding, successor
from scanner.model import Finding, Manifest


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
            yield _finding(manifest, crd, "crd/unserved-version", "error",
                           f"the CRD {crd.name} ({crd.where}) does not serve {manifest.api_version}; "
                           f"it serves {served}: the API server refuses this object")
        elif version.deprecated:
            warning = version.deprecation_warning or f"{manifest.api_version} {manifest.kind} is deprecated"
            yield _finding(manifest, crd, "crd/deprecated-version", "warning",
                           f"the CRD {crd.name} ({crd.where}) deprecates this version: \"{warning}\"")


def _finding(manifest: Manifest, crd: Crd, rule_id: str, severity: str, message: str) -> Finding:
    replacement = successor(crd, manifest.api_version)
    if replacement and replacement not in message:
        message += f"; use {replacement}"
    return object_finding(manifest, rule_id, severity, message, replacement=replacement)
