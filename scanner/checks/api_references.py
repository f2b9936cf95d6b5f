"""API versions named inside objects: a health check, a scale target, a receiver's resources.

rules/references.yaml lists where a kind of object names another object by apiVersion and kind.
Such a reference is judged like an object of the apiVersion it names, by the same data: built-in
APIs by the core rules (checks/api_removal.py), third-party ones by the CRD rules and the component
release each hop runs (components/state.py, as checks/crd_component_removal.py). The finding is at
the reference's apiVersion line and says what breaks when the controller can no longer resolve it.

A controller that looks the object up by group and kind only (`resolves: group`) keeps working when
just the version it names is gone: such a reference is reported only once its group no longer
serves the kind (a move to another group, or no successor at all).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.checks.api_removal import verdict
from scanner.checks.findings import rule_finding
from scanner.model import Finding, Manifest
from scanner.references import REFERENCES_FILE, ReferenceField, load_reference_fields
from scanner.rulebook import ApiRule, Rulebook
from scanner.nodes import scalar
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.catalog import CrdRule
    from scanner.components.state import Timeline


SCOPE = TREE


def _rules(_rulebook: Rulebook) -> dict[str, RuleInfo]:
    return {field.id: _describe(field) for field in load_reference_fields().fields}


def _describe(field: ReferenceField) -> RuleInfo:
    holder = field.object.rpartition("/")[2]
    lookup = ("Its controller looks the object up at that version." if field.by_version else
              "Its controller looks the object up by group and kind: only a kind its group no longer serves breaks it.")
    description = (f"A {holder} names {field.what} by apiVersion and kind, judged like an object of that apiVersion "
                   f"(the core rules, the CRD rules and the component release each hop runs). {lookup} Once it "
                   f"no longer resolves, {field.breaks}." + (f" {field.note}" if field.note else ""))
    return RuleInfo(f"{field.what} of a {holder} names an API version a hop stops serving", description, "error",
                    field.source, field)


RULES = Rules(_rules, pattern="reference/<group>/<Kind>/<field>", data=REFERENCES_FILE)


@dataclass(frozen=True)
class Named:
    """One reference in one object: `where` (spec.healthChecks[0]) names api_version and kind."""

    manifest: Manifest
    field: ReferenceField
    where: str
    api_version: str
    kind: str
    key: Any  # the apiVersion key node: where the finding points

    @property
    def by_version(self) -> bool:
        return self.field.resolves_by_version(self.kind)

    @property
    def subject(self) -> str:
        return f"{self.where} names {self.api_version} {self.kind}"


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    named = list(_named(manifests))
    if not named:
        return
    core = context.rulebook.api_rules
    third_party = _crd_rules() if any((n.api_version, n.kind) not in core for n in named) else {}
    used = {(n.api_version, n.kind) for n in named if (n.api_version, n.kind) in third_party}
    timeline = _timeline(manifests, context, used) if used else None
    for reference in named:
        key = (reference.api_version, reference.kind)
        if key in core:
            finding = _core_finding(reference, core[key], context)
        elif key in used and timeline is not None:
            finding = _component_finding(reference, third_party[key], timeline, context)
        else:
            continue
        if finding is not None:
            yield finding


def _named(manifests: Sequence[Manifest]) -> Iterator[Named]:
    fields = load_reference_fields()
    for manifest in manifests:
        tree = fields.for_object(manifest.group, manifest.kind)
        if tree is None or manifest.node is None:
            continue
        for field, item in tree.find(manifest.node):
            version = next(field.api_version.find(item.node), None)
            kind = scalar(next((m.node for m in field.kind.find(item.node)), None))
            api_version = scalar(version.node) if version is not None else None
            if api_version and kind:  # no apiVersion: the controller's default, nothing named
                yield Named(manifest, field, item.where, api_version.strip(), kind.strip(), version.key)


# --- built-in APIs: the core rules ------------------------------------------------------------------

def _core_finding(reference: Named, rule: ApiRule, context: ScanContext) -> Finding | None:
    if rule.deprecated_in > context.target:
        return None
    said = verdict(rule, context)
    breaks_in = rule.removed_in
    if reference.by_version:
        message = f"{reference.subject}, which {said.state}"
        if said.removed:
            message += f": {reference.field.breaks}"
        elif rule.removed_in:
            message += f"; from then on {reference.field.breaks}"
    else:
        group = rule.api_version.rpartition("/")[0]
        breaks_in = _group_serves_until(context.rulebook, group, rule.kind)
        if breaks_in is None or breaks_in > context.target:
            return None  # another version of the group serves the kind: the reference still resolves
        message = (f"{reference.subject}; from Kubernetes {breaks_in} no version of {group or 'the core group'} "
                   f"serves {rule.kind}: {reference.field.breaks}")
    removed = breaks_in is not None and breaks_in <= context.target
    return rule_finding(reference.manifest, rule, removed, message + said.instead,
                        reference.manifest.origin_at(reference.key),
                        **_reference_fields(reference, said.replacement, said.replacement_kind),
                        breaks_in=breaks_in, migrate=said.migrate, fix=said.fix)


def _group_serves_until(rulebook: Rulebook, group: str, kind: str) -> Minor | None:
    """The first minor from which no version of `group` serves `kind`; None while one still does.
    Each version stops where its rule says, else after the last minor whose API data lists it."""
    ends = []
    for (api_version, name), (_, last) in rulebook.served.spans.items():
        if name == kind and api_version.rpartition("/")[0] == group:
            rule = rulebook.api_rules.get((api_version, name))
            ends.append(rule.removed_in if rule is not None else last.next() if last is not None else None)
    return None if not ends or None in ends else max(ends)


# --- third-party APIs: the CRD rules and the component release each hop runs ---------------------------

def _crd_rules() -> dict[tuple[str, str], CrdRule]:
    from scanner.components.catalog import load_crd_rules

    return {(rule.api_version, rule.kind): rule for rule in load_crd_rules()}


def _timeline(manifests: Sequence[Manifest], context: ScanContext, used: set[tuple[str, str]]) -> Timeline | None:
    from scanner.checks.crd_component_removal import component_timeline

    return component_timeline(manifests, context, used)


def _component_finding(reference: Named, rule: CrdRule, timeline: Timeline, context: ScanContext) -> Finding | None:
    from scanner.checks.crd_component_removal import migration_breaks_in, migration_severity
    from scanner.components.state import removal

    if not reference.by_version and _same_group_and_kind(rule):
        return None  # looked up by group and kind, which the replacement still serves
    migration = removal(timeline, rule)
    severity = migration_severity(migration, timeline) if migration is not None else None
    if severity is None:
        return None
    what = f"{reference.subject}, which"
    if migration.unknown:
        message = (f"{what} {migration.before} and later no longer serve, and kubehop cannot tell which "
                   f"{rule.component} release runs (no pin it can read): if it is {rule.removed_in} or later, "
                   f"{reference.field.breaks}")
    elif migration.already:
        message = (f"{what} the {rule.component} release the tree pins no longer serves ({migration.before} "
                   f"removed it): {reference.field.breaks}")
    else:
        message = (f"{what} {migration.before} no longer serves, and {migration.needed_by} needs that "
                   f"release: {reference.field.breaks}")
    manifest = reference.manifest
    return Finding(severity=severity, message=message, origin=manifest.origin_at(reference.key),
                   api_version=manifest.api_version, kind=manifest.kind, name=manifest.name,
                   namespace=manifest.namespace, breaks_in=migration_breaks_in(migration, context.current),
                   source_url=rule.source, support="unknown" if migration.unknown else None,
                   fix=rule.use,
                   **_reference_fields(reference, rule.replacement))


def _same_group_and_kind(rule: CrdRule) -> bool:
    return rule.replacement is not None and \
        rule.replacement.rpartition("/")[0] == rule.api_version.rpartition("/")[0]


def _reference_fields(reference: Named, replacement: str | None, kind: str | None = None) -> dict:
    """What every finding about a reference carries: its rule, note, and the edit that clears it."""
    fix = (f"set {reference.where}.apiVersion to {replacement}",) if replacement else ()
    if fix and kind and kind != reference.kind:
        fix = (f"{fix[0]} and {reference.where}.kind to {kind}",)
    return dict(rule_id=reference.field.id, note=reference.field.note, replacement=replacement, remediation=fix)
