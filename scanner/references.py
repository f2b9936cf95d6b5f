"""Where objects name other objects by apiVersion and kind (rules/references.yaml), read once."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scanner import data
from scanner.pathexpr import PathExpr, PathSyntaxError, PathTree, compile_path

REFERENCES_FILE = "rules/references.yaml"


@dataclass(frozen=True)
class ReferenceField:
    """One place where a kind of object names another object (a health check, a scale target)."""

    id: str
    object: str  # <group>/<Kind> of the object holding the reference
    path: PathExpr  # to each reference item
    api_version: PathExpr  # in the item: the key holding the apiVersion
    kind: PathExpr  # in the item: the key holding the kind
    by_version: bool  # the controller looks the object up at its apiVersion (else by group and kind)
    group_only_kinds: frozenset[str]  # with by_version: kinds it still looks up by group and kind
    what: str
    breaks: str
    note: str | None
    source: str
    resolution: str

    def resolves_by_version(self, kind: str) -> bool:
        return self.by_version and kind not in self.group_only_kinds

    @classmethod
    def from_data(cls, entry: dict) -> "ReferenceField":
        return cls(
            id=entry["id"], object=entry["object"], path=_compile(entry["path"], entry["id"]),
            api_version=_compile(entry["apiVersion"], entry["id"]), kind=_compile(entry["kind"], entry["id"]),
            by_version=entry["resolves"] == "version", group_only_kinds=frozenset(entry.get("group_only_kinds", ())),
            what=entry["what"], breaks=entry["breaks"], note=entry.get("note"), source=entry["source"],
            resolution=entry["resolution"])


@dataclass(frozen=True)
class ReferenceFields:
    """The fields that name an API (rules/references.yaml), by the kind of object that holds them."""

    fields: tuple[ReferenceField, ...]
    trees: dict[tuple[str, str], PathTree[ReferenceField]]  # (group, kind) of the holding object -> its fields

    def for_object(self, group: str, kind: str) -> PathTree[ReferenceField] | None:
        return self.trees.get((group, kind))


@functools.cache
def load_reference_fields() -> ReferenceFields:
    fields: dict[str, ReferenceField] = {}
    trees: dict[tuple[str, str], PathTree[ReferenceField]] = {}
    for entry in data.load(REFERENCES_FILE)["references"]:
        field = ReferenceField.from_data(entry)
        if field.id in fields:
            raise data.DataError(f"{REFERENCES_FILE}: reference {field.id} is defined twice")
        fields[field.id] = field
        group, _, kind = field.object.rpartition("/")
        trees.setdefault((group, kind), PathTree()).add(field.path, field)
    return ReferenceFields(tuple(fields.values()), trees)


def _compile(text: str, where: str) -> PathExpr:
    try:
        return compile_path(text)
    except PathSyntaxError as err:
        raise data.DataError(f"{REFERENCES_FILE}: {where}: {err}") from None
