"""Field-level rules: one fixture per rule, negative fixtures, the path language, real charts.

A fixture marks every line where a finding must point with `# <- finding`; the test
checks that the rule finds exactly those lines and nothing else fires.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.make_corpus import render
from conftest import FIXTURES, REPO, run_kubehop, shared_or_skip, tool_or_skip
from scanner.checks import ScanContext, field_rules
from scanner.freshness import data_checked
from scanner.pathexpr import PathSyntaxError, PathTree, compile_path, is_empty
from scanner.rulebook import load_rulebook
from scanner.scan import scan
from scanner.sources.files.source import read_manifest_file
from scanner.sources.files.walk import ManifestFile
from scanner.versions import parse_minor

FIELD_FIXTURES = FIXTURES / "rules" / "fields"
MARK = "# <- finding"
RULES = {rule.id: rule for rule in load_rulebook().field_rules.rules}


def fixture_for(rule_id: str) -> Path:
    return FIELD_FIXTURES / (rule_id.removeprefix("field/").replace("/", ".") + ".yaml")


def marked_lines(path: Path) -> set[int]:
    return {n for n, line in enumerate(path.read_text().splitlines(), 1) if line.rstrip().endswith(MARK)}


def last_step(where: str) -> str:
    """The key a concrete path ends with: spec.volumes[0].gitRepo -> gitRepo, a["b/c"] -> b/c."""
    quoted, plain = re.search(r'(?:\["([^"]+)"\]|([A-Za-z0-9_-]+))$', where).groups()
    return quoted or plain


def field_findings(paths: list[str], target: str = "1.37"):
    result = scan(paths, target=parse_minor(target))
    assert not result.input_errors, result.input_errors
    return [f for f in result.findings if f.rule_id.startswith("field/")]


def test_every_rule_has_a_fixture_and_every_fixture_a_rule():
    fixtures = {p.name for p in FIELD_FIXTURES.glob("*.yaml")}
    assert fixtures == {fixture_for(rule_id).name for rule_id in RULES}


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_finds_exactly_the_marked_keys(rule_id):
    path = fixture_for(rule_id)
    findings = field_findings([str(path)])
    assert {f.rule_id for f in findings} == {rule_id}
    assert sorted(f.origin.line for f in findings) == sorted(marked_lines(path))
    rule = RULES[rule_id]
    for finding in findings:
        # Under CSI migration a StorageClass of the in-tree provisioner, having no fallback, breaks first.
        provisions = rule.csi_migration is not None and finding.kind == "StorageClass"
        breaks = rule.csi_migration.on_by_default_in if provisions else rule.removed_in
        assert finding.breaks_in == breaks and finding.source_url == rule.source
        assert finding.severity == ("error" if breaks else "warning")
        assert f": {rule.title} " in finding.message
        assert last_step(finding.message.split(": ")[0]) in path.read_text().splitlines()[finding.origin.line - 1]


def test_finding_points_at_the_key_and_names_the_concrete_path():
    [finding] = [f for f in field_findings([str(fixture_for("field/volume/gitRepo"))]) if f.kind == "Deployment"]
    line = fixture_for("field/volume/gitRepo").read_text().splitlines()[finding.origin.line - 1]
    assert line[finding.origin.column - 1:].startswith("gitRepo:")
    assert finding.message.startswith("spec.template.spec.volumes[1].gitRepo: gitRepo volume does not work from "
                                      "Kubernetes 1.33")
    assert (finding.kind, finding.name, finding.api_version) == ("Deployment", "docs", "apps/v1")


def test_fixtures_cover_every_workload_kind():
    workloads = {w["kind"] for w in yaml.safe_load((REPO / "rules" / "workloads.yaml").read_text())["workloads"]}
    found = {f.kind for f in field_findings([str(FIELD_FIXTURES)])}
    assert workloads <= found


@pytest.mark.parametrize("target, severity", [("1.32", "warning"), ("1.33", "error"), ("1.37", "error")])
def test_severity_follows_the_target(target, severity):
    findings = field_findings([str(fixture_for("field/volume/gitRepo"))], target)
    assert findings and {f.severity for f in findings} == {severity}
    assert {str(f.breaks_in) for f in findings} == {"1.33"}


def test_nothing_before_the_deprecation():
    assert field_findings([str(fixture_for("field/service/externalIPs"))], "1.35") == []
    at_136 = field_findings([str(fixture_for("field/service/externalIPs"))], "1.36")
    assert [f.severity for f in at_136] == ["warning"]


@pytest.mark.parametrize("name", ["crd-schema.yaml", "configmap-text.yaml", "modern.yaml", "empty-values.yaml"])
def test_negative_fixtures_give_no_field_finding(name):
    assert field_findings([str(FIELD_FIXTURES / "negative" / name)]) == []


def test_an_empty_field_is_not_set_but_an_entry_with_an_empty_value_is(tmp_path):
    service = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  annotations:\n"
               "    service.alpha.kubernetes.io/tolerate-unready-endpoints: ''\n"
               "spec:\n  loadBalancerIP: ''\n  ports: [{port: 80}]\n")
    (tmp_path / "service.yaml").write_text(service)
    findings = field_findings([str(tmp_path / "service.yaml")])
    assert [f.rule_id for f in findings] == ["field/annotation/tolerate-unready-endpoints"]
    (tmp_path / "service.yaml").write_text(service.replace("loadBalancerIP: ''", "loadBalancerIP: 192.0.2.1"))
    assert sorted(f.rule_id for f in field_findings([str(tmp_path / "service.yaml")])) == [
        "field/annotation/tolerate-unready-endpoints", "field/service/loadBalancerIP"]


def test_an_empty_replacement_excuses_nothing(tmp_path):
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  serviceAccount: old\n"
           "  serviceAccountName: ''\n  containers: [{name: a, image: 'a:1'}]\n")
    (tmp_path / "pod.yaml").write_text(pod)
    assert [f.rule_id for f in field_findings([str(tmp_path / "pod.yaml")])] == ["field/pod/serviceAccount"]


def test_replacement_already_present_excuses_the_annotation():
    findings = field_findings([str(fixture_for("field/annotation/seccomp-pod"))])
    assert [f.name for f in findings] == ["db"]  # db-migrated also sets spec.securityContext.seccompProfile


# --- the path language ------------------------------------------------------------------------

def nodes(text: str):
    return yaml.compose(text, Loader=yaml.SafeLoader)


def test_path_walks_keys_lists_and_quoted_globs():
    root = nodes("spec:\n  volumes:\n  - name: a\n  - name: b\n    gitRepo: {}\n"
                 "metadata:\n  annotations:\n    x.io/a.b: '1'\n    y.io/c: '2'\n    x.io/d: '3'\n")
    [match] = compile_path("spec.volumes[*].gitRepo").find(root)
    assert (match.where, match.key.start_mark.line) == ("spec.volumes[1].gitRepo", 4)
    found = compile_path('metadata.annotations["x.io/*"]').find(root)
    assert [m.where for m in found] == ['metadata.annotations["x.io/a.b"]', 'metadata.annotations["x.io/d"]']


def test_path_reads_the_last_of_repeated_keys_like_kubernetes():
    root = nodes("spec:\n  serviceAccount: a\n  serviceAccount: b\n")
    [match] = compile_path("spec.serviceAccount").find(root)
    assert (match.node.value, match.key.start_mark.line) == ("b", 2)


@pytest.mark.parametrize("text, empty", [("x: ''", True), ("x:", True), ("x: null", True), ("x: ~", True),
                                         ("x: []", True), ("x: '0'", False), ("x: 0", False), ("x: {}", False),
                                         ("x: [a]", False), ("x: false", False)])
def test_empty_values(text, empty):
    [match] = compile_path("x").find(nodes(text))
    assert is_empty(match.node) is empty


def test_path_ignores_shapes_it_does_not_expect():
    root = nodes("spec:\n  volumes: {gitRepo: x}\n  containers: text\n")
    assert list(compile_path("spec.volumes[*].gitRepo").find(root)) == []
    assert list(compile_path("spec.containers.name").find(root)) == []


@pytest.mark.parametrize("text", ["spec..x", "spec.", "[*]", "spec[*]x", "a b", 'x[""]', "x[y]"])
def test_bad_paths_are_refused(text):
    with pytest.raises(PathSyntaxError):
        compile_path(text)


def test_joined_paths_print_as_one():
    joined = compile_path("spec.template").then(compile_path("spec.volumes[*].gitRepo"))
    assert joined.text == "spec.template.spec.volumes[*].gitRepo"
    assert compile_path("").then(compile_path("spec.x")).text == "spec.x"


# --- reports ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "json"])
def test_report_snapshot(fmt, snapshot, tmp_path):
    names = [fixture_for(r).name for r in ("field/volume/gitRepo", "field/node-label/master-role")]
    (tmp_path / ".git").mkdir()  # a checkout of its own: the report names files from its root
    for name in names:
        shutil.copy(FIELD_FIXTURES / name, tmp_path / name)
    run = run_kubehop("scan", "--target", "1.36", "--format", fmt, *names, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout.decode() == snapshot


# --- real charts ------------------------------------------------------------------------------

# Rules a 2019 chart legitimately trips: reviewed by hand, finding by finding (see the issue report).
REVIEWED_IN_2019_CHARTS = {
    "field/annotation/critical-pod", "field/annotation/seccomp-pod", "field/annotation/seccomp-container",
    "field/annotation/apparmor", "field/annotation/ingress-class", "field/annotation/beta-storage-class",
    "field/annotation/tolerate-unready-endpoints", "field/node-label/beta-os", "field/node-label/beta-arch",
    "field/node-label/failure-domain-zone", "field/node-label/failure-domain-region",
    "field/node-label/beta-instance-type", "field/node-label/master-role", "field/pod/serviceAccount",
    "field/service/externalIPs", "field/volume/gitRepo",
}


def test_real_charts_give_only_reviewed_findings_at_the_right_keys(tmp_path):
    charts = shared_or_skip("corpora/helm-charts-2019/stable")
    helm = tool_or_skip("helm")
    chart_dirs = sorted(p.parent for p in charts.glob("*/Chart.yaml"))
    assert sum(render(helm, chart, tmp_path) for chart in chart_dirs) > 150
    run = run_kubehop("scan", "--target", "1.37", "--format", "json", str(tmp_path))
    report = json.loads(run.stdout)
    findings = [f for f in report["findings"] if f["rule"].startswith("field/")]
    assert findings and {f["rule"] for f in findings} <= REVIEWED_IN_2019_CHARTS
    for finding in findings:
        line = Path(finding["file"]).read_text().splitlines()[finding["line"] - 1]
        assert last_step(finding["message"].split(": ")[0]) in line, (finding, line)


def test_path_tree_walks_many_paths_at_once():
    tree = PathTree()
    for text in ("spec.volumes[*].gitRepo", "spec.volumes[*].rbd", "spec.nodeSelector", 'metadata.labels["a/*"]'):
        tree.add(compile_path(text), text)
    root = nodes("spec:\n  volumes:\n  - rbd: {}\n  - gitRepo: {}\n  nodeSelector: {}\n"
                 "metadata:\n  labels: {b: c}\n")
    found = sorted((payload, match.where) for payload, match in tree.find(root))
    assert found == [("spec.nodeSelector", "spec.nodeSelector"),
                     ("spec.volumes[*].gitRepo", "spec.volumes[1].gitRepo"),
                     ("spec.volumes[*].rbd", "spec.volumes[0].rbd")]


# --- the data against Kubernetes' own OpenAPI ---------------------------------------------------

@functools.cache
def openapi_dirs() -> list[Path]:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None:
        pytest.skip("kubernetes-validate is not installed")
    root = Path(spec.origin).parent / "kubernetes-json-schema"
    return sorted(p for p in root.glob("v1.*-local") if p.is_dir())


@functools.cache
def schema_files(group: str, kind: str, api_versions: frozenset[str]) -> list[Path]:
    """Every OpenAPI schema kubernetes-validate ships for this kind, optionally only some versions."""
    short = group.split(".")[0] if group else ""
    files = []
    for folder in openapi_dirs():
        for path in folder.glob(f"{kind.lower()}-{short + '-' if short else ''}v*.json"):
            version = path.stem.rpartition("-")[2]
            if not api_versions or f"{group}/{version}".lstrip("/") in api_versions:
                files.append(path)
    return files


@functools.cache
def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


def resolves(schema_file: Path, steps) -> bool:
    """Does the path name a field this schema declares (lists through items, map keys through values)?"""
    definitions = read_json(schema_file.parent / "_definitions.json")["$defs"]
    schema = read_json(schema_file)
    for step in steps:
        while "$ref" in schema:
            schema = definitions[schema["$ref"].rpartition("/")[2]]
        if step.name is None and step.pattern is None:
            schema = schema.get("items")
        elif step.pattern is not None:
            schema = schema.get("additionalProperties")
        else:
            schema = schema.get("properties", {}).get(step.name)
        if not isinstance(schema, dict):
            return False
    return True


def rule_places():
    """(rule id, group, kind, full path, apiVersions) for every place a field rule looks (`unless` too)."""
    pods = yaml.safe_load((REPO / "rules" / "workloads.yaml").read_text())["workloads"]
    for data_file in sorted((REPO / "rules" / "fields").glob("*.yaml")):
        for rule in yaml.safe_load(data_file.read_text())["rules"]:
            for match in rule["match"]:
                versions = frozenset(match.get("apiVersions", ()))
                for text in [match["path"], *match.get("unless", ())]:
                    path = compile_path(text)
                    if match["object"] == "pod":
                        for workload in pods:
                            for group in workload["groups"]:
                                yield (rule["id"], "" if group == "core" else group, workload["kind"],
                                       compile_path(workload["pod"]).then(path), versions)
                    else:
                        group, _, kind = match["object"].rpartition("/")
                        yield rule["id"], "" if group == "core" else group, kind, path, versions


def test_every_rule_path_is_a_field_of_its_kind_in_the_openapi():
    unchecked = set()
    for rule_id, group, kind, path, versions in rule_places():
        files = schema_files(group, kind, frozenset())
        if not files:
            unchecked.add(group)  # kinds served only before 1.25, the oldest schemas kubernetes-validate ships
            continue
        if versions:
            # A renamed field: unknown in the versions the rule names, declared in an older one.
            assert not any(resolves(f, path.steps) for f in schema_files(group, kind, versions)), (rule_id, kind)
        assert any(resolves(f, path.steps) for f in files), (rule_id, group, kind, path.text)
    assert unchecked == {"extensions"}


def test_path_sees_merged_keys_and_own_keys_win():
    root = nodes("base: &base\n  serviceAccount: merged\n  gitRepo: {}\n"
                 "spec:\n  <<: *base\n  serviceAccount: own\n")
    [account] = compile_path("spec.serviceAccount").find(root)
    [repo] = compile_path("spec.gitRepo").find(root)
    assert (account.node.value, repo.key.start_mark.line) == ("own", 2)


def test_merging_the_same_mapping_twice_reads_it_once():
    root = nodes("a: &a {x: 1}\nb:\n  <<: [*a, *a]\n")
    assert [m.node.value for m in compile_path("b.x").find(root)] == ["1"]


# --- never a traceback ------------------------------------------------------------------------

RULE_KEYS = sorted({step.name for _, _, _, path, _ in rule_places() for step in path.steps if step.name}
                   | {"seccomp.security.alpha.kubernetes.io/pod", "beta.kubernetes.io/os", "<<"})
SCALARS = st.none() | st.booleans() | st.integers() | st.sampled_from(
    ["", "linux", "PreferClose", "beta.kubernetes.io/os", "node-role.kubernetes.io/master", "~", "*a"])
SHAPES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(RULE_KEYS), inner, max_size=4), max_leaves=25)
PLACES = sorted({(group, kind, path.text) for _, group, kind, path, _ in rule_places() if group != "extensions"})


def nest(path: str, leaf):
    """The smallest document that reaches `path` (`*` in a quoted key becomes x), with `leaf` at its end."""
    steps = re.findall(r'\["([^"]+)"\]|(\[\*\])|([A-Za-z0-9_-]+)', path)
    for quoted, items, name in reversed(steps):
        leaf = [leaf] if items else {(quoted or name).replace("*", "x"): leaf}
    return leaf


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PLACES), SHAPES, st.dictionaries(st.sampled_from(RULE_KEYS), SHAPES, max_size=3))
def test_kubernetes_shaped_documents_never_raise(place, leaf, noise):
    group, kind, path = place
    document = {**noise, **nest(path, leaf)}
    text = yaml.safe_dump({"apiVersion": f"{group}/v1".lstrip("/"), "kind": kind, **document})
    result = read_manifest_file(ManifestFile("-"), stdin_bytes=text.encode())
    findings = list(field_rules.check(result.manifests, ScanContext(parse_minor("1.37"), load_rulebook())))
    lines = text.splitlines()
    for finding in findings:
        assert lines[finding.origin.line - 1][finding.origin.column - 1:].strip("'\"- ")[:1].isalnum()


def test_rules_command_lists_the_field_rules():
    listing = run_kubehop("rules", "--fields").stdout.decode().splitlines()
    assert listing[-1] == f"{len(RULES)} field rules (data checked {data_checked()})"
    assert {line.split()[0] for line in listing[:-1]} == set(RULES)
    assert run_kubehop("rules", "--fields", "--removed-in", "1.33").stdout.decode().splitlines() == [
        "field/volume/gitRepo                             stops working in 1.33; "
        "use an emptyDir volume that an init container fills with git clone", f"1 field rule (data checked {data_checked()})"]
    entries = json.loads(run_kubehop("rules", "--fields", "--format", "json", "--removed-in", "1.31").stdout)
    assert sorted(e["id"] for e in entries) == ["field/volume/cephfs", "field/volume/rbd"]
    assert {e["source"][:8] for e in entries} == {"https://"}
