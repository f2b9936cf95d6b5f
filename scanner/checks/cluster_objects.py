"""Objects in the cluster dump that the new CRDs will not serve, at their apiVersion or in managedFields.

An object stored at a version its CRD no longer lists cannot be read; a managedFields entry
naming such a version makes the next write fail converting it.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from yaml.nodes import SequenceNode

from scanner import kubectl
from scanner.checks.context import TREE, ScanContext
from scanner.checks.findings import crd_lifecycle_rules, object_finding
from scanner.crds import Crd
from scanner.model import Finding, Manifest, Origin
from scanner.nodes import key_node, mapping_get, scalar

SCOPE = TREE
AT_UNSERVED, MANAGED_FIELDS = "crd/object-at-unserved-version", "crd/managed-fields-unserved-version"
RULES = crd_lifecycle_rules({
    AT_UNSERVED: ("error", "an object in the cluster at a version the new CRD does not serve"),
    MANAGED_FIELDS: ("error", "managed fields in the cluster name a version the new CRD does not serve"),
})


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if context.cluster is None:
        return
    for obj in context.cluster.objects:
        crd = context.crds.for_object(obj.api_version, obj.kind)
        if crd is None or crd is context.cluster.crds.named(crd.name):
            continue  # only a CRD the tree brings is new; the cluster's own serves what it dumped
        if not crd.serves(_version(obj.api_version)):
            yield _at_unserved_version(obj, crd, context)
        stale = [(entry, api_version) for entry, api_version in _managed_fields(obj)
                 if _group(api_version) == crd.group and not crd.serves(_version(api_version))]
        if stale:
            yield _stale_managed_fields(obj, crd, stale)


def _at_unserved_version(obj: Manifest, crd: Crd, context: ScanContext) -> Finding:
    live = context.cluster.crds.named(crd.name)
    stored = f" (the cluster's status.storedVersions: [{', '.join(live.stored_versions)}])" if live else ""
    version = _version(obj.api_version)
    rewrite = (f"Rewrite it at {crd.storage_version} before applying the CRD, once the cluster's CRD stores "
               f"{crd.storage_version} (see the crd/stored-version-dropped steps):", [kubectl.rewrite(crd, obj)])
    if crd.version(version) is None:
        return _finding(obj, crd, AT_UNSERVED, "error", obj.origin,
                        f"the cluster holds it at {obj.api_version}, which the new CRD {crd.name} ({crd.where}) "
                        f"drops from spec.versions{stored}: stored at that version, it cannot be read once "
                        f"the CRD is applied", rewrite)
    # Still listed, no longer served: the object stays readable at the served versions.
    return _finding(obj, crd, AT_UNSERVED, "warning", obj.origin,
                    f"the cluster holds it at {obj.api_version}, which the new CRD {crd.name} ({crd.where}) "
                    f"keeps but no longer serves{stored}: clients still using {version} fail, and {version} "
                    f"cannot leave spec.versions until the object is rewritten", rewrite)


def _stale_managed_fields(obj: Manifest, crd: Crd, stale: list) -> Finding:
    first_entry = stale[0][0]
    key = key_node(first_entry, "apiVersion")
    origin = obj.origin_at(key)
    managers = ", ".join(sorted({f"{scalar(mapping_get(e, 'manager')) or '?'} at {v}" for e, v in stale}))
    return _finding(
        obj, crd, MANAGED_FIELDS, "error", origin,
        f"metadata.managedFields name versions the new CRD {crd.name} ({crd.where}) does not serve "
        f"({managers}): after the update a write to this object can fail converting them "
        f"(\"request to convert CR from an invalid group/version\")",
        ("Before the update, while those versions are served, reset its managed fields:",
         [kubectl.clear_managed_fields(crd, obj)]))


def _finding(obj: Manifest, crd: Crd, rule_id: str, severity: str, origin: Origin, message: str,
             step: tuple[str, list[str]]) -> Finding:
    return object_finding(obj, rule_id, severity, message, origin,
                          replacement=f"{crd.group}/{crd.storage_version}" if crd.storage_version else None,
                          remediation=kubectl.numbered([step], start=None))


def _managed_fields(obj: Manifest) -> Iterable[tuple]:
    """(entry node, apiVersion) of each metadata.managedFields entry."""
    entries = mapping_get(mapping_get(obj.node, "metadata"), "managedFields")
    if isinstance(entries, SequenceNode):
        for entry in entries.value:
            api_version = scalar(mapping_get(entry, "apiVersion"))
            if api_version and key_node(entry, "apiVersion") is not None:
                yield entry, api_version


def _version(api_version: str) -> str:
    return api_version.rpartition("/")[2]


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]
