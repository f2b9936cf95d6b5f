"""The mechanical migrations `kubehop fix` knows: data from rules/migrations/, read once."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from scanner import data


@dataclass(frozen=True)
class Unsafe:
    """A value that changes meaning in the new version: objects holding it are left to a person."""

    path: str
    equals: Any
    reason: str


@dataclass(frozen=True)
class Migration:
    old: tuple[str, ...]  # apiVersions migrated from
    new: str
    kinds: tuple[str, ...]
    operations: tuple[dict, ...]  # {"move": {...}} or {"default": {...}}, applied in order
    unsafe: tuple[Unsafe, ...]
    source: str

    @property
    def is_version_bump(self) -> bool:
        """Only apiVersion changes: the one rewrite safe in a Helm template's text."""
        return not self.operations and not self.unsafe


@functools.cache
def load_migrations() -> dict[tuple[str, str], Migration]:
    """(old apiVersion, kind) -> its migration."""
    table: dict[tuple[str, str], Migration] = {}
    for where, document in data.load_folder("rules/migrations"):
        for entry in document["migrations"]:
            migration = Migration(
                old=tuple(entry["from"]), new=entry["to"], kinds=tuple(entry["kinds"]),
                operations=tuple(entry["operations"]),
                unsafe=tuple(Unsafe(**u) for u in entry.get("unsafe", ())),
                source=entry["source"])
            for key in ((old, kind) for old in migration.old for kind in migration.kinds):
                if key in table:
                    raise data.DataError(f"{where}: a migration from {key[0]} {key[1]} is already declared")
                table[key] = migration
    return table
