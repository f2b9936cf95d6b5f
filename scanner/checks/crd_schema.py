"""Custom resources whose fields break their CRD version's openAPIV3Schema.

A resource at a version its CRD no longer serves is checked against the version to move to
(the storage version): that shows the fields to drop with the apiVersion change.

A value holding a `${VAR}` placeholder (Flux postBuild substitution, clusterctl and envsubst
templates) is not the value the API server gets: its pattern, type or format is not judged.
A kustomize patch (Manifest.patch) is a partial object: nothing it leaves out is reported.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks.context import TREE, ScanContext
from scanner.checks.findings import crd_lifecycle_rules, object_finding
from scanner.crds import Crd, CrdVersion
from scanner.model import Finding, Manifest
from scanner.nodes import locate

if TYPE_CHECKING:  # scanner.openapi pulls in jsonschema: imported only when a CRD is in the tree
    from scanner.openapi import CrdSchema, SchemaProblem

SCOPE = TREE
UNKNOWN_FIELD, INVALID_VALUE, UNUSABLE = "crd/unknown-field", "crd/invalid-value", "crd/schema-unusable"
RULES = crd_lifecycle_rules({
    UNKNOWN_FIELD: ("error", "a field the custom resource's schema does not define"),
    INVALID_VALUE: ("error", "a value the custom resource's schema refuses"),
    UNUSABLE: ("warning", "a CRD schema kubehop cannot apply: its custom resources are not validated"),
})

# ${VAR}, ${VAR:=default}, ${VAR:-default}: substituted before the object reaches the API server.
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:=\-+?][^{}]*)?\}")


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if not len(context.crds):
        return
    schemas = _Schemas()
    for manifest in manifests:
        crd = None if manifest.text_only else context.crds.for_object(manifest.api_version, manifest.kind)
        version = _version_to_check(crd, manifest.api_version) if crd else None
        if version is None or version.schema is None:
            continue
        validator = schemas.get(crd, version)
        if validator is not None:
            yield from (_finding(manifest, crd, version, p) for p in validator.problems(manifest.body)
                        if not _placeholder(p.value) and not (manifest.patch and _partial(p)))
    yield from schemas.unusable_findings()


def _partial(problem: SchemaProblem) -> bool:
    """A kustomize patch's part that is no problem: what it leaves to the base (a required field),
    and the strategic-merge directives ($patch, $setElementOrder/…), which kustomize consumes."""
    return problem.incomplete or any(isinstance(step, str) and step.startswith("$") for step in problem.path)


def _version_to_check(crd: Crd, api_version: str) -> CrdVersion | None:
    version = crd.version_of(api_version)
    if version is not None and version.served:
        return version
    storage = crd.storage_version
    return crd.version(storage) if storage and crd.serves(storage) else None


class _Schemas:
    """One validator per CRD version, built on first use; the versions whose schema is unusable."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str], CrdSchema] = {}
        self._broken: dict[tuple[str, str], str] = {}
        self._crds: dict[str, Crd] = {}

    def get(self, crd: Crd, version: CrdVersion) -> CrdSchema | None:
        from scanner.openapi import CrdSchema, UnusableSchema

        key = (crd.name, version.name)
        if key not in self._built and key not in self._broken:
            self._crds[crd.name] = crd
            try:
                self._built[key] = CrdSchema(version.schema, version.status_subresource)
            except UnusableSchema as err:
                self._broken[key] = str(err)
        return None if key in self._broken else self._built[key]

    def unusable_findings(self) -> Iterable[Finding]:
        for (name, version), reason in sorted(self._broken.items()):
            yield object_finding(self._crds[name].manifest, UNUSABLE, "warning",
                                 f"the openAPIV3Schema of version {version} cannot be applied ({reason}); "
                                 f"its custom resources were not validated")


def _finding(manifest: Manifest, crd: Crd, version: CrdVersion, problem: SchemaProblem) -> Finding:
    field = _dotted(problem.path)
    checked = f"{crd.group}/{version.name}"
    if checked == manifest.api_version:
        schema_of = f"the schema of {checked} {crd.kind} (CRD {crd.name})"
    else:
        schema_of = f"the schema of {checked} {crd.kind}, the version to move to (CRD {crd.name})"
    at = manifest.origin_at(locate(manifest.node, problem.path))
    if problem.unknown_field:
        return object_finding(manifest, UNKNOWN_FIELD, "error",
                              f"{field}: unknown field; {schema_of} has no such field", at, fix="remove it")
    return object_finding(manifest, INVALID_VALUE, "error", f"{field or '(object)'}: {problem.message} in {schema_of}",
                          at)


def _placeholder(value: object) -> bool:
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None


def _dotted(path: tuple[str | int, ...]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else str(step)
    return text
