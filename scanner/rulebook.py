"""The rules and API facts kubehop knows, read once from the data folders."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner import data
from scanner.pathexpr import Glob, PathExpr, PathSyntaxError, PathTree, compile_path, is_empty
from scanner.versions import Minor, parse_minor


@dataclass(frozen=True, slots=True)
class ApiRule:
    """A Kubernetes API's deprecation and removal (rules/core): the minors, the replacement, the source."""

    id: str
    api_version: str
    kind: str
    deprecated_in: Minor
    removed_in: Minor | None
    replacement: str | None
    replacement_kind: str
    note: str
    source: str
    instead: str | None = None  # with no replacement: what to do instead
    projected: bool = False  # removed_in rests on pre-release sources only (status: projected)

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
            instead=entry.get("instead"),
            projected=entry.get("status") == "projected",
        )


@dataclass(frozen=True, slots=True)
class Successor:
    """What an API's objects move to on a given minor: the end of its chain of replacements."""

    api_version: str | None  # None: nothing replaces it there
    kind: str
    instead: str | None = None  # with no api_version: what to do instead (the last rule's `instead`)
    served_from: Minor | None = None  # set when the minor asked about does not serve it yet


@dataclass(frozen=True, slots=True)
class CsiMigration:
    """The CSI driver that CSI migration sends an in-tree volume plugin's operations to."""

    driver: str  # the CSIDriver object's name, e.g. ebs.csi.aws.com
    on_by_default_in: Minor  # from then the in-tree provisioner provisions only through the driver
    source: str


@dataclass(frozen=True, slots=True)
class FieldRule:
    """A field of an API that a minor deprecates or removes (rules/fields), and the paths it is found at."""

    id: str
    title: str
    deprecated_in: Minor | None  # None: deprecated, but the source names no minor
    removed_in: Minor | None
    replacement: str | None
    note: str
    source: str
    csi_migration: CsiMigration | None = None

    @classmethod
    def from_data(cls, entry: dict) -> "FieldRule":
        migration = entry.get("csi_migration")
        return cls(
            id=entry["id"],
            title=entry["title"],
            deprecated_in=parse_minor(entry["deprecated_in"]) if entry["deprecated_in"] else None,
            removed_in=parse_minor(entry["removed_in"]) if entry["removed_in"] else None,
            replacement=entry["replacement"],
            note=entry["note"],
            source=entry["source"],
            csi_migration=CsiMigration(migration["driver"], parse_minor(migration["on_by_default_in"]),
                                       migration["source"]) if migration else None,
        )

    def applies_at(self, target: Minor) -> bool:
        """Deprecated (or gone) by the target minor."""
        first = self.deprecated_in or self.removed_in
        return first is None or first <= target


@dataclass(frozen=True, slots=True)
class FieldCheck:
    """What one rule asks of what its path reaches in one kind of object."""

    rule: FieldRule
    values: tuple[Glob, ...] = ()
    unless: tuple[PathExpr, ...] = ()  # any of these present: the object already uses the replacement
    api_versions: frozenset[str] = frozenset()  # empty: every version of the kind
    entry: bool = False  # the path ends at a map entry (PathExpr.ends_at_entry): its key is what counts
    provisioning: bool = False  # it names the in-tree provisioner: under CSI migration, no fallback

    def breaks_in(self, driver_installed: bool = False) -> Minor | None:
        """The first minor where what it matched stops working: with the rule's CSI driver installed,
        none (CSI migration keeps it working); without, a provisioner already when migration is on by
        default, anything else when the in-tree driver is gone."""
        migration = self.rule.csi_migration
        if migration is None:
            return self.rule.removed_in
        if driver_installed:
            return None
        return migration.on_by_default_in if self.provisioning else self.rule.removed_in

    def concerns(self, api_version: str, target: Minor) -> bool:
        return self.rule.applies_at(target) and (not self.api_versions or api_version in self.api_versions)

    def accepts(self, value: str | None) -> bool:
        return not self.values or (value is not None and any(v.match(value) for v in self.values))

    def holds(self, node: Any) -> bool:
        """The object sets what the path reaches: a field with an empty value (null, "", []) is not set."""
        return self.entry or not is_empty(node)

    def excused(self, root: Any) -> bool:
        return any(path.ends_at_entry or not is_empty(match.node) for path in self.unless for match in path.find(root))


# One `match` of a field rule, compiled: the rule, its path, its `unless` paths, its `values` and
# `apiVersions` (a tuple: each dataclass made costs every start of kubehop about 0.4 ms).
_FieldMatch = tuple[FieldRule, PathExpr, tuple[PathExpr, ...], tuple[Glob, ...], frozenset[str], bool]


class FieldRules:
    """The field rules, and for each (API group, kind) the one tree of every path to look at in such an
    object ("" is the core group). A tree is built the first time an object of its kind is checked: a
    run on one file builds the few its objects need, not the hundred the rules reach."""

    def __init__(self, rules: tuple[FieldRule, ...],
                 matches: dict[tuple[str, str], list[tuple[PathExpr, _FieldMatch]]]):
        self.rules = rules
        self._matches = matches  # (group, kind) -> (the path to where the match starts, the match)
        self._trees: dict[tuple[str, str], PathTree[FieldCheck]] = {}

    def for_object(self, group: str, kind: str) -> PathTree[FieldCheck] | None:
        key = (group, kind)
        tree = self._trees.get(key)
        if tree is None and key in self._matches:
            tree = self._trees[key] = _tree(self._matches[key])
        return tree


def _tree(matches: list[tuple[PathExpr, _FieldMatch]]) -> PathTree[FieldCheck]:
    tree: PathTree[FieldCheck] = PathTree()
    for prefix, (rule, path, unless, values, api_versions, provisioning) in matches:
        check = FieldCheck(rule, values, tuple(prefix.then(u) for u in unless), api_versions, path.ends_at_entry,
                           provisioning)
        tree.add(prefix.then(path), check)
    return tree


def load_field_rules(extra_rules: tuple[Path, ...] = ()) -> FieldRules:
    """rules/fields/*.yaml (and a user's <folder>/fields/*.yaml), with `object: pod` spread over
    every pod template of rules/workloads.yaml."""
    pod_templates = _pod_templates()
    rules: dict[str, FieldRule] = {}
    matches: dict[tuple[str, str], list[tuple[PathExpr, _FieldMatch]]] = {}
    for where, document in data.load_folder("rules/fields", extra_rules=extra_rules):
        for entry in document["rules"]:
            rule = FieldRule.from_data(entry)
            if rule.id in rules:
                raise data.DataError(f"{where}: rule {rule.id} is defined twice")
            rules[rule.id] = rule
            for match in entry["match"]:
                if match.get("provisioning") and rule.csi_migration is None:
                    raise data.DataError(f"{where}: rule {rule.id}: `provisioning` needs the rule's csi_migration")
                compiled = (rule, _compile(match["path"], f"{where}: {rule.id}"),
                            tuple(_compile(text, f"{where}: {rule.id}") for text in match.get("unless", ())),
                            tuple(Glob(v) for v in match.get("values", ())), frozenset(match.get("apiVersions", ())),
                            bool(match.get("provisioning")))
                for key, prefix in _objects(match["object"], pod_templates):
                    matches.setdefault(key, []).append((prefix, compiled))
    return FieldRules(tuple(rules.values()), matches)


ObjectPaths = list[tuple[tuple[str, str], PathExpr]]  # (API group, kind) and a path into such an object


def _pod_templates() -> ObjectPaths:
    document = data.load("rules/workloads.yaml")
    return [((_group(group), workload["kind"]),
             _compile(workload["pod"], f"rules/workloads.yaml: {workload['kind']}"))
            for workload in document["workloads"] for group in workload["groups"]]


def _objects(object_: str, pod_templates: ObjectPaths) -> ObjectPaths:
    """The (group, kind) objects a match applies to, each with the path to where the rule's path starts."""
    if object_ == "pod":
        return pod_templates
    group, _, kind = object_.rpartition("/")
    return [((_group(group), kind), compile_path(""))]


def _group(name: str) -> str:
    return "" if name == "core" else name


def _compile(text: str, where: str) -> PathExpr:
    try:
        return compile_path(text)
    except PathSyntaxError as err:
        raise data.DataError(f"{where}: {err}") from None


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

    def group_versions(self) -> frozenset[str]:
        """Every built-in group/version, of any minor."""
        return frozenset(api_version for api_version, _ in self.spans)


@dataclass(frozen=True)
class Rulebook:
    """Every rule of a scan: the API rules, the APIs each minor serves, the field rules, the minors known."""

    checked: str
    oldest: Minor
    newest: Minor
    api_rules: dict[tuple[str, str], ApiRule]
    served: ServedApis
    field_rules: FieldRules

    def known(self, minor: Minor) -> bool:
        return self.oldest <= minor <= self.newest

    @property
    def projected(self) -> Minor:
        """The next minor, before its release: accepted as a target, its served APIs projected."""
        return self.newest.next()

    def accepts(self, minor: Minor) -> bool:
        return self.known(minor) or minor == self.projected

    def served_at(self, minor: Minor) -> set[tuple[str, str]]:
        """What `minor` serves; for the projected minor, the newest schemas minus the removals announced
        up to it."""
        if minor <= self.newest:
            return self.served.served_at(minor)
        gone = {key for key, rule in self.api_rules.items() if rule.removed_in is not None and rule.removed_in <= minor}
        return self.served.served_at(self.newest) - gone

    def projection_notice(self, minor: Minor) -> str | None:
        if minor <= self.newest:
            return None
        return (f"Kubernetes {minor} is not released: the APIs it serves are projected ({self.newest}'s schemas minus "
                f"the removals announced for {minor}) and every component's support for it is unknown")

    def successor(self, rule: ApiRule, target: Minor) -> Successor:
        """The replacement a cluster at `target` serves: follow `replacement` past every version
        that is itself gone by `target` (flowcontrol v1beta1 -> v1beta2 -> v1 on 1.29 or later)."""
        seen = {rule.id}
        while rule.replacement is not None:
            key = (rule.replacement, rule.replacement_kind)
            following = self.api_rules.get(key)
            if following is None or following.removed_in is None or following.removed_in > target \
                    or following.id in seen:
                first = self.served.first_served(*key)
                return Successor(*key, served_from=first if first is not None and first > target else None)
            seen.add(following.id)
            rule = following
        return Successor(None, rule.kind, rule.instead)

    def rules(self) -> list[ApiRule]:
        return sorted(self.api_rules.values(),
                      key=lambda r: (r.removed_in or Minor(99, 0), r.api_version, r.kind))


# The data folders a project's own rule folders may add to (see the configuration's `rules`).
USER_EXTENSIBLE = ("rules/core", "rules/fields")


def load_rulebook(extra_rules: tuple[Path, ...] = ()) -> Rulebook:
    """The project's rules plus those of a user's rule folders (laid out like rules/), read once a
    process: `load_rulebook()` and `load_rulebook(())` are the same book."""
    return _load_rulebook(tuple(extra_rules))


@functools.cache
def _load_rulebook(extra_rules: tuple[Path, ...]) -> Rulebook:
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
        checked=meta["data_checked"],
        oldest=parse_minor(meta["oldest_minor"]),
        newest=parse_minor(meta["newest_minor"]),
        api_rules=api_rules,
        served=load_served_apis(),
        field_rules=load_field_rules(extra_rules),
    )


def load_served_apis() -> ServedApis:
    document = data.load("rules/served-apis.yaml")
    spans = {
        (api_version, kind): (parse_minor(first), parse_minor(last) if last else None)
        for api_version, kinds in document["apis"].items()
        for kind, (first, last) in kinds.items()
    }
    return ServedApis(tuple(parse_minor(m) for m in document["minors"]), spans)
