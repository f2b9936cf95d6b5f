"""What the CustomResourceDefinitions among the manifests say about their custom resources.

Every `apiextensions.k8s.io/v1` CRD (from plain files, a chart's crds/ folder, a rendered
chart or a cluster dump) gives its group's served versions, storage version, deprecations
and per-version schema. Nothing here is specific to a group: the CRDs are the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from scanner.model import Manifest, Origin
from scanner.nodes import key_node, mapping_get
from scanner.paths import where

CRD_API_VERSION = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"


@dataclass(frozen=True)
class CrdVersion:
    """One version of a CustomResourceDefinition: served, stored, deprecated, and its schema."""

    name: str
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    schema: dict | None  # openAPIV3Schema
    status_subresource: bool


@dataclass(frozen=True)
class Crd:
    """A CustomResourceDefinition from the tree or a cluster dump: its names, scope and versions."""

    name: str  # <plural>.<group>, the name kubectl takes
    group: str
    kind: str
    namespaced: bool
    versions: tuple[CrdVersion, ...]  # in spec order
    manifest: Manifest
    conversion: str  # spec.conversion.strategy: None (apiVersion changes only) or Webhook
    stored_versions: tuple[str, ...] = ()  # status.storedVersions: only a cluster's CRD has them

    def version(self, name: str) -> CrdVersion | None:
        return next((v for v in self.versions if v.name == name), None)

    def version_of(self, api_version: str) -> CrdVersion | None:
        """The entry of an object's version (the part of its apiVersion after the group)."""
        return self.version(api_version.rpartition("/")[2])

    def serves(self, name: str) -> bool:
        version = self.version(name)
        return version is not None and version.served

    @property
    def served(self) -> list[str]:
        return [v.name for v in self.versions if v.served]

    @property
    def storage_version(self) -> str | None:
        return next((v.name for v in self.versions if v.storage), None)

    @property
    def versions_origin(self) -> Origin:
        """The line of spec.versions: where the served set is edited."""
        key = key_node(mapping_get(self.manifest.node, "spec"), "versions")
        return self.manifest.origin if key is None else self.manifest.origin_at(key)

    @property
    def where(self) -> str:
        origin = self.manifest.origin
        return where(origin.path, origin.line)


class CrdIndex:
    """CRDs by (group, kind) and by name; the first definition of a name wins."""

    def __init__(self, crds: Iterable[Crd] = ()):
        self._by_name: dict[str, Crd] = {}
        for crd in crds:
            self._by_name.setdefault(crd.name, crd)
        self._by_kind = {(c.group, c.kind): c for c in reversed(list(self._by_name.values()))}

    @classmethod
    def from_manifests(cls, manifests: Iterable[Manifest]) -> "CrdIndex":
        return cls(crd for m in _first_of_each_name(manifests) for crd in [parse_crd(m)] if crd is not None)

    def then(self, other: "CrdIndex") -> "CrdIndex":
        """This index, completed by the CRDs of `other` it does not define."""
        return CrdIndex([*self, *other])

    def for_object(self, api_version: str, kind: str) -> Crd | None:
        return self._by_kind.get((api_version.rpartition("/")[0], kind))

    def named(self, name: str) -> Crd | None:
        return self._by_name.get(name)

    def served_apis(self) -> set[tuple[str, str]]:
        """(group/version, Kind) of every version served: a cluster running these CRDs lists them in its
        discovery too."""
        return {(f"{crd.group}/{version}", crd.kind) for crd in self for version in crd.served}

    def __iter__(self) -> Iterator[Crd]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)


def _first_of_each_name(manifests: Iterable[Manifest]) -> Iterator[Manifest]:
    """The CRDs among `manifests`, a repeat of a name already seen left unread (the first one wins)."""
    seen: set[str] = set()
    for manifest in manifests:
        if is_crd(manifest) and not (manifest.name and manifest.name in seen):
            if manifest.name:
                seen.add(manifest.name)
            yield manifest


def successor(crd: Crd, api_version: str) -> str | None:
    """The apiVersion to move a custom resource to: its CRD's served storage version."""
    storage = crd.storage_version
    if storage is None or not crd.serves(storage) or api_version == f"{crd.group}/{storage}":
        return None
    return f"{crd.group}/{storage}"


def is_crd(manifest: Manifest) -> bool:
    return manifest.kind == CRD_KIND and manifest.api_version == CRD_API_VERSION


def parse_crd(manifest: Manifest) -> Crd | None:
    """The CRD a manifest declares, or None when it is too malformed to say anything."""
    body = manifest.body
    spec = as_dict(body.get("spec"))
    names = as_dict(spec.get("names"))
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not all(isinstance(v, str) and v for v in (group, kind, plural)):
        return None
    versions = tuple(v for v in map(_parse_version, as_list(spec.get("versions"))) if v is not None)
    stored = as_list(as_dict(body.get("status")).get("storedVersions"))
    return Crd(
        name=manifest.name or f"{plural}.{group}",
        group=group,
        kind=kind,
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        versions=versions,
        manifest=manifest,
        conversion=str(as_dict(spec.get("conversion")).get("strategy") or "None"),
        stored_versions=tuple(v for v in stored if isinstance(v, str)),
    )


def _parse_version(entry: Any) -> CrdVersion | None:
    entry = as_dict(entry)
    if not isinstance(entry.get("name"), str):
        return None
    schema = as_dict(entry.get("schema")).get("openAPIV3Schema")
    warning = entry.get("deprecationWarning")
    return CrdVersion(
        name=entry["name"],
        served=entry.get("served") is True,
        storage=entry.get("storage") is True,
        deprecated=entry.get("deprecated") is True,
        deprecation_warning=warning if isinstance(warning, str) else None,
        schema=schema if isinstance(schema, dict) else None,
        status_subresource="status" in as_dict(entry.get("subresources")),
    )


def as_dict(value: Any) -> dict:
    """`value` when it is a mapping, else empty: malformed input reads as absent, never as a crash."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """`value` when it is a non-empty string, else None (a list or a map where a name belongs)."""
    return value if isinstance(value, str) and value else None
