"""The rules and API facts kubehop knows, read once from the data folders."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from scanner import data
from scanner.versions import Minor, parse_minor


@dataclass(frozen=True, slots=True)
class ApiRule:
    id: str
    api_version: str
    kind: str
    deprecated_in: Minor
    removed_in: Minor | None
    replacement: str | None
    replacement_kind: str
    note: str
    source: str

    def is_served_at(self, minor: Minor) -> bool:
        return self.removed_in is None or minor < self.removed_in

    @classmethod
    def from_data(cls, entry: dict) -> "ApiRule":
        return cls(
            id=entry["id"],
            api_version=entry["apiVersion"],
            kind=entry["kind"],
            deprecated_in=parse_minor(entry["deprecated_in"]),
            removed_in=parse_minor(entry["removed_in"]) if entry["removed_in"] else None,
            replacement=entry["replacement"],
            replacement_kind=entry.get("replacement_kind", entry["kind"]),
            note=entry["note"],
            source=entry["source"],
        )


@dataclass(frozen=True)
class ServedApis:
    """Which minors serve each built-in apiVersion/kind (from Kubernetes' own OpenAPI data)."""

    minors: tuple[Minor, ...]
    spans: dict[tuple[str, str], tuple[Minor, Minor | None]]

    def first_served(self, api_version: str, kind: str) -> Minor | None:
        span = self.spans.get((api_version, kind))
        return span[0] if span else None

    def served_at(self, minor: Minor) -> set[tuple[str, str]]:
        return {key for key, (first, last) in self.spans.items()
                if first <= minor and (last is None or minor <= last)}

    def is_builtin(self, api_version: str) -> bool:
        return any(key[0] == api_version for key in self.spans)


@dataclass(frozen=True)
class Rulebook:
    checked: str
    oldest: Minor
    newest: Minor
    api_rules: dict[tuple[str, str], ApiRule]
    served: ServedApis

    def known(self, minor: Minor) -> bool:
        return self.oldest <= minor <= self.newest

    def rules(self) -> list[ApiRule]:
        return sorted(self.api_rules.values(),
                      key=lambda r: (r.removed_in or Minor(99, 0), r.api_version, r.kind))


# The data folders a project's own rule folders may add to (see the configuration's `rules`).
USER_EXTENSIBLE = ("rules/core",)


@functools.cache
def load_rulebook(extra_rules: tuple[Path, ...] = ()) -> Rulebook:
    """The project's rules plus those of a user's rule folders (laid out like rules/)."""
    for folder in extra_rules:
        data.check_rules_folder(folder, USER_EXTENSIBLE)
    meta = data.load("rules/kubernetes.yaml")
    api_rules: dict[tuple[str, str], ApiRule] = {}
    for where, document in data.load_folder("rules/core", extra_rules=extra_rules):
        for entry in document["rules"]:
            rule = ApiRule.from_data(entry)
            key = (rule.api_version, rule.kind)
            if key in api_rules:
                raise data.DataError(f"{where}: {rule.id} duplicates {api_rules[key].id}")
            api_rules[key] = rule
    return Rulebook(
        checked=meta["checked"],
        oldest=parse_minor(meta["oldest_minor"]),
        newest=parse_minor(meta["newest_minor"]),
        api_rules=api_rules,
        served=load_served_apis(),
    )


def load_served_apis() -> ServedApis:
    document = data.load("rules/served-apis.yaml")
    spans = {
        (api_version, kind): (parse_minor(first), parse_minor(last) if last else None)
        for api_version, kinds in document["apis"].items()
        for kind, (first, last) in kinds.items()
    }
    return ServedApis(tuple(parse_minor(m) for m in document["minors"]), spans)
