"""The registry of checks (scanner/checks/registry.py): every check declares its rules and its scope,
every finding a scan makes is of a rule its check declares, an undeclared one is refused, and the
reports' rule metadata (SARIF's rules, `kubehop rules --checks`) is the registry's."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, cli_runner
from scanner.checks import OBJECT, TREE, ScanContext, field_rules, per_object_checks, run_checks, tree_checks
from scanner.checks.registry import (RegistryError, UndeclaredRule, check_name, checks, describe, info_of,
                                     rules_of)
from scanner.cli import cli
from scanner.model import EXIT_INPUT, Finding
from scanner.rulebook import load_rulebook
from scanner.scan import ScanOptions, scan
from scanner.versions import parse_minor

ORDERS = FIXTURES / "orders"
HOMELAB, CELLCAST = FIXTURES / "homelab", FIXTURES / "cellcast"
CLUSTER_CONFIG = FIXTURES / "cluster-config"

# Scans of the fixtures, each with the checks it makes fire: (paths, target, --from, options).
SCANS = {
    "examples": ([REPO / "examples"], "1.36", "1.31", {}),
    "core-rules": ([FIXTURES / "rules" / "core"], "1.36", None, {}),
    "field-rules": ([FIXTURES / "rules" / "fields"], "1.36", None, {}),
    "references": ([FIXTURES / "references"], "1.36", None, {}),
    "flux-homelab": ([FIXTURES / "flux-homelab"], "1.36", "1.31", {}),
    "homelab": ([HOMELAB / "tree"], "1.36", None, {"cluster_state": (str(HOMELAB / "cluster"),)}),
    "cellcast": ([CELLCAST / "tree"], "1.35", None, {"cluster_state": (str(CELLCAST / "cluster"),)}),
    "orders": ([ORDERS / name for name in ("knu-skip", "k3s-floating", "k3s-no-prepare", "knu-worker-first",
                                            "k3s-agent-ahead", "capi-skew", "k3s-cilium")], "1.37", None, {}),
    "orders-three-workers": ([ORDERS / "knu-max-unavailable-2"], "1.37", None,
                             {"cluster_state": (str(ORDERS / "dumps" / "three-workers"),)}),
    "orders-one-control-plane": ([ORDERS / "knu"], "1.37", None,
                                 {"cluster_state": (str(ORDERS / "dumps" / "single-control-plane"),)}),
    "cluster-config": ([CLUSTER_CONFIG / "tree"], "1.36", None, {}),
    "client-tools": ([CLUSTER_CONFIG / "tree" / "infra", CLUSTER_CONFIG / "tree" / "ci"], "1.36", "1.31", {}),
    "client-calls": ([CLUSTER_CONFIG / "tree" / "agent"], "1.36", None, {"cluster_state": tuple(
        str(CLUSTER_CONFIG / "dumps" / name) for name in ("metrics.txt", "audit.log", "version.json"))}),
}
# Each rule family (the check that declares it) and the scans that make it fire.
FAMILIES = {
    "api_removal": ["examples", "core-rules"],
    "field_rules": ["examples", "field-rules"],
    "api_references": ["references"],
    "component_support": ["examples", "flux-homelab"],
    "crd_component_removal": ["examples", "flux-homelab"],
    "crd_served": ["homelab", "cellcast"],
    "crd_schema": ["homelab"],
    "stored_versions": ["homelab"],
    "cluster_objects": ["homelab"],
    "node_skew": ["homelab"],
    "upgrade_orders": ["orders"],
    "order_skew": ["orders"],
    "order_components": ["orders", "flux-homelab"],
    "order_concurrency": ["orders-three-workers", "orders-one-control-plane"],
    "cluster_config": ["cluster-config"],
    "client_tools": ["client-tools"],
    "client_calls": ["client-calls"],
    "duplicate_keys": [],  # needs helm: test_a_duplicate_key_of_a_render_is_declared
}
BOOK = load_rulebook()
_scanned: dict[str, object] = {}


def scanned(name: str, monkeypatch=None):
    """The scan of SCANS[name], with KUBEHOP_DEBUG=1: a finding of an undeclared rule raises."""
    if name not in _scanned:
        paths, target, current, options = SCANS[name]
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("KUBEHOP_DEBUG", "1")
            _scanned[name] = scan([str(p) for p in paths], parse_minor(target),
                                  parse_minor(current) if current else None, ScanOptions(render=False, **options))
    return _scanned[name]


def declaring(rule_id: str) -> str | None:
    return next((check_name(c) for c in checks() if info_of(c, rule_id, BOOK) is not None), None)


def test_every_check_module_is_in_the_registry_with_its_scope():
    names = {check_name(c): c.SCOPE for c in checks()}
    assert names.keys() == FAMILIES.keys()  # a new check needs its family scanned above
    assert [check_name(c) for c in per_object_checks()] == ["field_rules"] and names["field_rules"] == OBJECT
    assert {check_name(c) for c in tree_checks()} == names.keys() - {"field_rules"}
    assert set(names.values()) == {OBJECT, TREE}
    helpers = {p.stem for p in (REPO / "scanner" / "checks").glob("*.py")} - names.keys()
    # Every module here is imported to build the registry: a pass over the findings once the whole tree is
    # read (scanner.csi_migration settles field_rules') lives outside, imported by a run that needs it.
    assert helpers == {"__init__", "context", "findings", "registry"}


def test_no_two_checks_declare_one_rule_and_every_rule_is_described():
    seen: dict[str, str] = {}
    for check in checks():
        for rule_id, info in rules_of(check, BOOK).items():
            assert rule_id not in seen, f"{rule_id}: declared by {seen.get(rule_id)} and {check_name(check)}"
            seen[rule_id] = check_name(check)
            assert info.title and info.description and info.severity in ("error", "warning", "notice")
            assert info.help_url is None or info.help_url.startswith("https://")
    assert len(seen) > 500  # the data's families: every API rule, field rule, CRD rule, component


@pytest.mark.parametrize("family", [f for f, runs in FAMILIES.items() if runs])
def test_every_finding_of_a_rule_family_is_declared_by_its_check(family):
    found = [f for name in FAMILIES[family] for f in scanned(name).findings]
    assert all(declaring(f.rule_id) is not None for f in found)
    mine = [f for f in found if declaring(f.rule_id) == family]
    assert mine, f"no scan of the fixtures makes {family} fire"
    for name in FAMILIES[family]:
        result = scanned(name)
        assert result.input_errors == []
        assert result.rules == describe({f.rule_id for f in result.findings}, BOOK)  # what the reports read


def test_the_data_declares_its_families_whole():
    assert rules_of(field_rules, BOOK).keys() == {r.id for r in BOOK.field_rules.rules}
    api = next(c for c in checks() if check_name(c) == "api_removal")
    assert rules_of(api, BOOK).keys() == {r.id for r in BOOK.rules()}
    components = next(c for c in checks() if check_name(c) == "component_support")
    assert info_of(components, "component/flux/unsupported", BOOK).severity == "error"
    assert info_of(components, "component/chart/gadget/unsupported", BOOK) is not None  # a chart tracked at scan time
    assert info_of(components, "component/flux/no-such-kind", BOOK) is None
    assert info_of(components, "component/no-such-component/unsupported", BOOK) is None
    # What the tree deploys that no data names (components.unlisted): its no-data rule, named from the tree.
    assert info_of(components, "component/node-red/no-data", BOOK).severity == "warning"
    assert info_of(components, "component/hajimari (chart)/no-data", BOOK) is not None
    assert info_of(components, "component/flux/no-data", BOOK) is None  # the catalog's components have data


def test_a_duplicate_key_of_a_render_is_declared(helm_env, tmp_path, monkeypatch):
    from test_chart_fallback import DUPLICATED, HELPERS, chart

    web = chart(tmp_path, "web", "replicas: 1\n", deployment=DUPLICATED)
    (web / "templates" / "_helpers.tpl").write_text(HELPERS)
    monkeypatch.setenv("KUBEHOP_DEBUG", "1")
    result = scan([str(web)], parse_minor("1.25"))
    [finding] = result.findings
    assert declaring(finding.rule_id) == "duplicate_keys" and result.rules[finding.rule_id].severity == "warning"


# --- an undeclared rule --------------------------------------------------------------------------------

def _with_an_undeclared_rule(monkeypatch):
    real = field_rules.check

    def inventing(manifests, context):
        yield from real(manifests, context)
        for manifest in manifests:
            yield Finding("made/up", "error", "invented", manifest.origin, manifest.api_version, manifest.kind,
                          manifest.name)

    monkeypatch.setattr(field_rules, "check", inventing)


def test_an_undeclared_rule_is_an_input_problem_at_its_object_never_a_finding(tmp_path, monkeypatch):
    _with_an_undeclared_rule(monkeypatch)
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / "old.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: i}\n")
    result = scan([str(tmp_path)], parse_minor("1.36"))
    assert [f.rule_id for f in result.findings] == ["extensions/v1beta1/Ingress"]  # the other checks' stay
    assert sorted((Path(d.path).name, d.line, d.message) for d in result.diagnostics) == [
        (name, 1, f"kubehop could not check {what}; please report it (UndeclaredRule: the field_rules check made "
                  "a finding of rule 'made/up', which it does not declare)")
        for name, what in (("cm.yaml", "ConfigMap c"), ("old.yaml", "Ingress i"))]
    assert result.exit_code == EXIT_INPUT


def test_an_undeclared_rule_raises_for_a_developer(tmp_path, monkeypatch):
    _with_an_undeclared_rule(monkeypatch)
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    monkeypatch.setenv("KUBEHOP_DEBUG", "1")
    with pytest.raises(UndeclaredRule, match="made/up"):
        scan([str(tmp_path)], parse_minor("1.36"))
    monkeypatch.delenv("KUBEHOP_DEBUG")
    manifests = scan([str(tmp_path)], parse_minor("1.36")).manifests
    with pytest.raises(UndeclaredRule):  # run without a list of problems to add to: raised
        run_checks(manifests, ScanContext(parse_minor("1.36"), BOOK), checks=[field_rules])


def test_a_check_that_declares_itself_wrongly_is_a_registry_error(monkeypatch):
    from scanner.checks import registry

    monkeypatch.setattr(field_rules, "SCOPE", "sometimes")
    registry.checks.cache_clear()
    try:
        with pytest.raises(RegistryError, match="field_rules: SCOPE"):
            registry.checks()
    finally:
        monkeypatch.undo()
        registry.checks.cache_clear()
    assert field_rules in registry.checks()


def test_findings_are_made_only_in_scanner_checks():
    makers = []
    for path in sorted((REPO / "scanner").rglob("*.py")):
        if path.parent.name == "checks":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Finding":
                makers.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert makers == []


# --- the reports' rule metadata -----------------------------------------------------------------------

def test_sarif_rules_are_the_registrys_whichever_finding_fired_them(tmp_path):
    # The same component rule fired by two releases: SARIF's rule says what the rule is, not the first
    # finding's source; each result keeps its own.
    result = cli_runner().invoke(cli, ["scan", "--from", "1.31", "--target", "1.36", "--format", "sarif",
                                      str(REPO / "examples"), str(ORDERS / "knu-skip")])
    assert result.exit_code == 1, result.output
    run = json.loads(result.stdout)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    described = describe([rule["id"] for rule in rules], BOOK)
    assert [rule["id"] for rule in rules] == sorted(described) and len(rules) > 5
    level = {"error": "error", "warning": "warning", "notice": "note"}
    for rule in rules:
        info = described[rule["id"]]
        assert rule["shortDescription"]["text"] == f"{rule['id']}: {info.title}"
        assert rule["fullDescription"]["text"] == info.description
        assert rule.get("helpUri") == info.help_url
        assert rule["defaultConfiguration"]["level"] == level[info.severity]
    skips = next(rule for rule in rules if rule["id"] == "upgrade-order/skips-minor")
    assert "served" not in skips["shortDescription"]["text"]  # not an API's wording
    sources = {r["properties"]["source"] for r in run["results"] if r["ruleId"].startswith("component/")}
    assert len(sources) > 1 and all(s.startswith("https://") for s in sources)
    by_id = {rule["id"]: rule for rule in rules}
    for one in run["results"]:  # a result names its own source where its rule's help does not
        source = one["properties"]["source"]
        said = source is not None and source != by_id[one["ruleId"]].get("helpUri")
        assert one["message"]["text"].endswith(f"\nSource: {source}") == said


def test_kubehop_rules_checks_lists_every_check_and_its_rules():
    listed = json.loads(cli_runner().invoke(cli, ["rules", "--checks", "--format", "json"]).stdout)
    assert [entry["check"] for entry in listed] == [check_name(c) for c in checks()]
    for entry, check in zip(listed, checks()):
        assert entry["scope"] == check.SCOPE
        assert [r["id"] for r in entry["rules"]] == list(rules_of(check, BOOK))
    text = cli_runner().invoke(cli, ["rules", "--checks"]).stdout
    assert "  upgrade-order/skips-minor" in text and "error" in text
    assert "  <apiVersion>/<Kind>" in text and f"{len(BOOK.rules())} rules from rules/core" in text
    refused = cli_runner().invoke(cli, ["rules", "--checks", "--fields"])
    assert refused.exit_code == 2 and "--checks lists every rule" in refused.stderr
