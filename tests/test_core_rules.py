"""The core API rules, proved against Kubernetes' own API data.

kubernetes-validate 1.37.0 ships the JSON schemas of minors 1.25-1.37 (converted from each
release's OpenAPI); rules/served-apis.yaml, generated from it and from 1.24.1, covers 1.15-1.37.
For every consecutive pair, each apiVersion/kind that disappears must have a rule with exactly
that removed_in, unless the rule declares why it differs (schemas_differ), and no rule may claim
a removal the schemas contradict.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from scanner import data
from scanner.rulebook import ApiRule, load_rulebook, load_served_apis
from scanner.versions import Minor, parse_minor
from scripts import gen_served_apis as gen

REPO = Path(__file__).resolve().parent.parent
GVK = tuple[str, str]
HAS_PACKAGE = importlib.util.find_spec("kubernetes_validate") is not None
NO_PACKAGE = pytest.mark.skipif(not HAS_PACKAGE, reason="kubernetes-validate is not installed (pip install '.[test]')")
RULES = load_rulebook().rules()
RULE_FILES = sorted(p.name for p in (REPO / "rules" / "core").glob("*.yaml"))


@functools.cache
def package_served() -> dict[Minor, set[GVK]]:
    """Kinds per minor, read from the installed kubernetes-validate by the generator's own code."""
    if not HAS_PACKAGE:
        return {}
    _, readers = gen.installed_schemas()
    return {Minor(*minor): gen.api_kinds(json.loads(read())) for minor, read in readers.items()}


def covered() -> list[Minor]:
    return sorted(package_served())


def disappearances() -> list[tuple[Minor, GVK]]:
    minors = covered()
    return [(after, gvk) for before, after in zip(minors, minors[1:])
            for gvk in sorted(package_served()[before] - package_served()[after])]


def rule_id(rule: ApiRule) -> str:
    return rule.id


def previous(minor: Minor) -> Minor:
    return Minor(minor.major, minor.minor - 1)


# --- (a) the data obeys its schema ---------------------------------------------------------

@pytest.mark.parametrize("name", RULE_FILES)
def test_rule_file_obeys_the_schema(name: str) -> None:
    document = data.load(f"rules/core/{name}")
    assert document["rules"], name
    for entry in document["rules"]:
        assert entry["id"] == f"{entry['apiVersion']}/{entry['kind']}"


@pytest.mark.parametrize("field, value", [
    ("removed_in", "1.x"), ("source", "http://kubernetes.io/"), ("apiVersion", "Apps/v1"), ("note", ""),
])
def test_schema_rejects_a_broken_rule(field: str, value: str) -> None:
    document = copy.deepcopy(data.read_yaml(REPO / "rules" / "core" / "batch.yaml"))
    document["rules"][0][field] = value
    with pytest.raises(data.DataError):
        data.validate(document, data.schema_for("rules/core/batch.yaml"), "batch.yaml")


def test_deprecation_comes_no_later_than_removal() -> None:
    assert [r.id for r in RULES if r.removed_in and r.deprecated_in > r.removed_in] == []


# --- (b) every kind that disappears between two covered minors has its rule ----------------

@NO_PACKAGE
@pytest.mark.parametrize("after, gvk", disappearances(), ids=lambda v: str(v) if isinstance(v, Minor) else "/".join(v))
def test_disappearing_api_has_a_rule(after: Minor, gvk: GVK) -> None:
    rule = load_rulebook().api_rules.get(gvk)
    assert rule is not None, f"{gvk[0]} {gvk[1]} stops being served in {after} but has no rule"
    assert rule.removed_in == after


def raw_rules() -> dict[str, dict]:
    """Every core rule as written, by id (for fields the scanner itself does not need)."""
    return {entry["id"]: entry for _, document in data.load_folder("rules/core") for entry in document["rules"]}


def schema_removal(gvk: GVK) -> tuple[Minor | None, Minor | None]:
    """(last minor rules/served-apis.yaml lists the kind in, first minor after that), Nones while served."""
    served = load_served_apis()
    _, last = served.spans[gvk]
    return (last, Minor(last.major, last.minor + 1)) if last is not None else (None, None)


def rule_removal(rule: ApiRule) -> Minor | None:
    """removed_in, with an announced removal past the newest minor counted as still served."""
    newest = load_served_apis().minors[-1]
    return rule.removed_in if rule.removed_in is not None and rule.removed_in <= newest else None


@pytest.mark.parametrize("rule", RULES, ids=rule_id)
def test_rule_agrees_with_the_schemas_of_every_minor(rule: ApiRule) -> None:
    """Against rules/served-apis.yaml (1.15-1.37): removed_in is the first minor whose schemas no longer
    list the kind, unless the rule declares why it differs (schemas_differ) and that is what differs."""
    gvk = (rule.api_version, rule.kind)
    assert gvk in load_served_apis().spans, f"{rule.id}: no minor's schemas list it"
    last, gone = schema_removal(gvk)
    differs = raw_rules()[rule.id].get("schemas_differ")
    if differs is None:
        assert rule_removal(rule) == gone, \
            f"{rule.id}: removed_in {rule.removed_in}, but the schemas list it last in {last}"
        return
    assert rule_removal(rule) != gone, f"{rule.id}: declares schemas_differ, yet it agrees with the schemas"
    assert differs["last_listed"] == (str(last) if last else None), \
        f"{rule.id}: schemas_differ says last listed in {differs['last_listed']}, the schemas say {last}"


def served_apis_disappearances() -> list[tuple[Minor, GVK]]:
    served = load_served_apis()
    return [(after, gvk) for before, after in zip(served.minors, served.minors[1:])
            for gvk in sorted(served.served_at(before) - served.served_at(after))]


@pytest.mark.parametrize("after, gvk", served_apis_disappearances(),
                         ids=lambda v: str(v) if isinstance(v, Minor) else "/".join(v))
def test_every_kind_the_schemas_drop_has_a_rule(after: Minor, gvk: GVK) -> None:
    """Every kind that disappears between two minors of 1.15-1.37 has a rule (its minor: the test above)."""
    rule = load_rulebook().api_rules.get(gvk)
    assert rule is not None, f"{gvk[0]} {gvk[1]} stops being listed in {after} but has no rule"


def test_the_deliberate_differences_are_the_known_ones() -> None:
    """APIs switched off by default before their code went (the 1.16 removals, deleted in 1.18) and the
    policy/v1beta1 Eviction body (accepted until 1.25, undocumented from 1.22): nothing else."""
    differing = sorted(rule_id for rule_id, entry in raw_rules().items() if "schemas_differ" in entry)
    assert len(differing) == 17 and "policy/v1beta1/Eviction" in differing, differing
    assert all(r.startswith(("apps/v1beta1/", "apps/v1beta2/", "extensions/v1beta1/")) for r in differing
               if r != "policy/v1beta1/Eviction"), differing
    assert "extensions/v1beta1/Ingress" not in differing


@NO_PACKAGE
def test_the_package_covers_the_minors_it_should() -> None:
    assert covered()[0] == Minor(1, 25) and covered()[-1] >= Minor(1, 37)
    assert len(disappearances()) > 40  # a sanity floor: the schemas really were read


# --- (c) no rule claims a removal the schemas contradict -----------------------------------

@NO_PACKAGE
@pytest.mark.parametrize("rule", RULES, ids=rule_id)
def test_rule_agrees_with_the_schemas(rule: ApiRule) -> None:
    served = package_served()
    gvk = (rule.api_version, rule.kind)
    newest = covered()[-1]
    if rule.removed_in is None or rule.removed_in > newest:
        assert gvk in served[newest], f"{rule.id} is said to be still served, but {newest} does not serve it"
        return
    if previous(rule.removed_in) in served:
        assert gvk in served[previous(rule.removed_in)], f"{rule.id}: not served at {previous(rule.removed_in)}"
    for minor in covered():
        if minor >= rule.removed_in:
            assert gvk not in served[minor], f"{rule.id}: removed in {rule.removed_in}, yet {minor} serves it"


# --- (d) the replacement is there when the old API goes --------------------------------------

@pytest.mark.parametrize("rule", [r for r in RULES if r.replacement], ids=rule_id)
def test_replacement_is_served_when_the_rule_bites(rule: ApiRule) -> None:
    """Checked with rules/served-apis.yaml (1.15-1.37), which test (e) ties to the package."""
    served_apis = load_served_apis()
    newest = served_apis.minors[-1]
    at = newest if rule.removed_in is None or rule.removed_in > newest else rule.removed_in
    assert (rule.replacement, rule.replacement_kind) in served_apis.served_at(at), \
        f"{rule.id}: {rule.replacement} {rule.replacement_kind} is not served at {at}"


# --- (e) rules/served-apis.yaml is what the generator computes -------------------------------

@NO_PACKAGE
def test_served_apis_file_matches_the_package() -> None:
    document = data.load("rules/served-apis.yaml")
    oldest = gen.minor_text((covered()[0].major, covered()[0].minor))
    expected = gen.serving_spans({(m.major, m.minor): kinds for m, kinds in package_served().items()})
    from_file = {
        (version, kind): (max(first, oldest, key=parse_minor), last)
        for version, kinds in document["apis"].items()
        for kind, (first, last) in kinds.items()
        if last is None or parse_minor(last) >= parse_minor(oldest)
    }
    assert from_file == expected
    assert [m for m in document["minors"] if parse_minor(m) >= covered()[0]] == [str(m) for m in covered()]


def test_generator_keeps_only_object_kinds() -> None:
    meta = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    list_meta = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
    gvk = lambda group, version, kind: {"group": group, "version": version, "kind": kind}  # noqa: E731
    document = {"$defs": {
        "a.Deployment": {"x-kubernetes-group-version-kind": [gvk("apps", "v1", "Deployment")],
                         "properties": {"metadata": meta}},
        "a.DeploymentList": {"x-kubernetes-group-version-kind": [gvk("apps", "v1", "DeploymentList")],
                             "properties": {"metadata": list_meta}},
        "meta.Status": {"x-kubernetes-group-version-kind": [gvk("", "v1", "Status")],
                        "properties": {"metadata": list_meta}},
        "meta.WatchEvent": {"x-kubernetes-group-version-kind": [gvk("", "v1", "WatchEvent"),
                                                                gvk("apps", "v1", "WatchEvent")],
                            "properties": {"object": {}}},
        "a.DeploymentSpec": {"properties": {"replicas": {"type": "integer"}}},
        "core.Pod": {"x-kubernetes-group-version-kind": [gvk("", "v1", "Pod")], "properties": {"metadata": meta}},
    }}
    assert gen.api_kinds(document) == {("apps/v1", "Deployment"), ("v1", "Pod")}


def test_generator_spans_and_gaps() -> None:
    a, b = ("x/v1", "A"), ("x/v1beta1", "B")
    assert gen.serving_spans({(1, 25): {a, b}, (1, 26): {a}, (1, 27): {a}}) == {a: ("1.25", None), b: ("1.25", "1.25")}
    with pytest.raises(ValueError, match="gap"):
        gen.serving_spans({(1, 25): {a}, (1, 26): set(), (1, 27): {a}})
    assert gen.minor_of("pkg/kubernetes-json-schema/v1.31.0-local/_definitions.json") == (1, 31)
    assert gen.minor_of("pkg/kubernetes-json-schema/v1.31.0-local-strict/_definitions.json") is None


def test_generated_file_is_marked_and_sorted() -> None:
    text = (REPO / "rules" / "served-apis.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Generated by scripts/gen_served_apis.py")
    versions = list(yaml.safe_load(text)["apis"])
    assert versions == sorted(versions)


def test_served_apis_cover_every_minor_kubehop_knows() -> None:
    book = load_rulebook()
    assert book.served.minors[0] < book.oldest and book.served.minors[-1] == book.newest
    assert Path(REPO / "scripts" / "gen_served_apis.py").is_file()
