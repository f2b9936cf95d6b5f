"""Kustomize helmCharts rendered by kubehop's helm at each hop's exact Capabilities, then built by kustomize."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, kustomize_or_skip, run_kubehop, tool_or_skip
from scanner.scan import ScanOptions
from scanner.sources import collect
from scanner.sources.kustomize.charts import merge
from scanner.versions import Minor

TREE = "tests/fixtures/kustomize-helm"


@pytest.fixture
def tools(monkeypatch, tmp_path) -> dict[str, str]:
    command = kustomize_or_skip()
    env = {"KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL": command[0],
           "KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "kubehop-cache"),
           "HELM_REPOSITORY_CACHE": str(tmp_path / "helm-cache")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def scan(*args: str, env: dict[str, str]) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", *args, env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def built(path: str, target: Minor, **options) -> dict[tuple[str, str], object]:
    found = collect([path], target, ScanOptions(**options))
    return {(m.kind, m.name): m for m in found.manifests}


def api_findings(report: dict) -> list[dict]:
    """The findings of the tree's objects; the component layer also names what the tree deploys."""
    return [f for f in report["findings"] if not f["rule"].startswith("component/")]


def test_a_removed_api_a_chart_emits_unconditionally_is_reported_at_its_template_line(tools):
    code, report = scan("--target", "1.25", f"{TREE}/app", env=tools)
    assert code == 1
    (finding,) = report["findings"]
    assert (finding["file"], finding["line"], finding["object"]["kind"]) == (
        f"{TREE}/charts/legacy/templates/psp.yaml", 3, "PodSecurityPolicy")
    assert finding["via"] == (f"kustomize build {TREE}/app, helmCharts entry 2 of {TREE}/app/kustomization.yaml "
                              "(release old of chart legacy 0.3.1)")
    assert report["unrendered"] == [] and report["diagnostics"] == []


def test_a_chart_switching_on_capabilities_renders_what_each_hop_serves(tools):
    """kustomize's --enable-helm would list batch/v1beta1 (helm's built-in list) at every version."""
    at_125 = built(f"{TREE}/app", Minor(1, 25))[("CronJob", "tools-nightly")]
    at_124 = built(f"{TREE}/app", Minor(1, 24))[("CronJob", "tools-nightly")]
    assert (at_125.api_version, at_124.api_version) == ("batch/v1", "batch/v1beta1")
    assert (at_125.origin.path, at_125.origin.line) == (f"{TREE}/charts/capable/templates/cronjob.yaml", 6)


def test_the_kustomizations_patches_and_transformers_apply_to_what_the_charts_render(tools):
    objects = built(f"{TREE}/app", Minor(1, 25))
    cron = objects[("CronJob", "tools-nightly")]
    assert cron.body["metadata"]["labels"] == {"patched-by": "kustomize"}  # a JSON patch of the kustomization
    assert cron.namespace == "apps"  # its namespace transformer
    assert "kubehop.dev/helm-chart-object" not in json.dumps(cron.body)
    assert objects[("Deployment", "old-web")].body["spec"]["replicas"] == 3  # valuesFile
    # includeCRDs: the chart's crds/ come along, at their own file and line.
    crd = objects[("CustomResourceDefinition", "widgets.example.com")]
    assert (crd.origin.path, crd.origin.line) == (f"{TREE}/charts/legacy/crds/widgets.yaml", 1)


def test_values_merge_as_kustomize_merges_them(tools):
    # override (the default): valuesInline over the chart's values; a null removes the key (the chart's
    # default applies again).
    data = built(f"{TREE}/app", Minor(1, 25))[("ConfigMap", "tools-settings")].body["data"]
    assert (data["colour"], data["size"], data["release-namespace"]) == ("green", "small", "apps")
    # merge: the values file wins over valuesInline; additionalValuesFiles come last.
    data = built(f"{TREE}/pinned", Minor(1, 25))[("ConfigMap", "pinned-settings")].body["data"]
    assert (data["colour"], data["size"], data["extra"]) == ("from-file", "inline", "from-additional-file")


def test_an_entrys_kube_version_and_api_versions_are_honoured(tools):
    objects = built(f"{TREE}/pinned", Minor(1, 25))
    data = objects[("ConfigMap", "pinned-settings")].body["data"]
    assert data["kube-version"].startswith("v1.23.") and data["has-example"] == "true"
    assert objects[("CronJob", "pinned-nightly")].api_version == "batch/v1"  # served APIs stay the hop's


def test_values_merge_follows_kyaml():
    assert merge({"a": {"b": 1, "c": None}, "l": [2]}, {"a": {"c": 3, "d": 4}, "l": [1, 1]}) == \
        {"a": {"b": 1, "d": 4}, "l": [2]}
    assert merge({"a": {"$patch": "replace", "x": 1}}, {"a": {"y": 2}}) == {"a": {"x": 1}}


def test_a_chart_used_by_helm_charts_is_not_also_rendered_on_its_own(tools):
    code, report = scan("--target", "1.25", TREE, env=tools)
    psp = [f for f in report["findings"] if f["object"]["kind"] == "PodSecurityPolicy"]
    assert [f["object"]["name"] for f in psp] == ["old-restricted"]  # not also as release "legacy"


def test_the_users_tree_is_never_written(tools, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "kustomize-helm", tree)
    (tree / ".git").mkdir()  # a repository: its charts/ beside app/ are inside it
    before = {p: p.stat().st_mtime_ns for p in tree.rglob("*")}
    code, _ = scan("--target", "1.25", str(tree / "app"), env=tools)
    assert code == 1
    assert {p: p.stat().st_mtime_ns for p in tree.rglob("*")} == before


def _remote_kustomization(folder: Path, patch: bool = False) -> None:
    folder.mkdir(parents=True)
    (folder / "service.yaml").write_text((FIXTURES / "kustomize-helm/app/service.yaml").read_text())
    text = ("helmCharts:\n  - name: legacy\n    version: 0.3.1\n    repo: https://charts.example.invalid\n"
            "    releaseName: old\nresources:\n  - service.yaml\n")
    if patch:  # a strategic-merge patch of an object only the chart brings
        (folder / "patch.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: old-web\n"
                                           "spec:\n  replicas: 5\n")
        text += "patches:\n  - path: patch.yaml\n"
    (folder / "kustomization.yaml").write_text(text)


def test_a_chart_only_in_a_remote_repository_is_listed_and_the_rest_is_built(tools, tmp_path):
    _remote_kustomization(tmp_path / "app")
    code, report = scan("--target", "1.25", str(tmp_path / "app"), env=tools)
    assert code == 0
    (entry,) = report["unrendered"]
    assert entry["file"] == str(tmp_path / "app" / "kustomization.yaml")
    assert "https://charts.example.invalid" in entry["reason"] and "--allow-network" in entry["reason"]
    assert report["summary"]["objects"] >= 1


def test_a_build_that_needs_the_unrendered_chart_is_not_rendered_rather_than_broken(tools, tmp_path):
    _remote_kustomization(tmp_path / "app", patch=True)
    code, report = scan("--target", "1.25", str(tmp_path / "app"), env=tools)
    assert code == 0 and report["diagnostics"] == []
    reasons = sorted(entry["reason"] for entry in report["unrendered"])
    assert any("not built without its Helm charts (legacy)" in r for r in reasons)


def test_a_chart_in_helms_local_cache_renders_offline(tools, tmp_path):
    cache = Path(tools["HELM_REPOSITORY_CACHE"])
    cache.mkdir()
    subprocess.run([tools["KUBEHOP_HELM"], "package", str(FIXTURES / "kustomize-helm/charts/legacy"), "-d", str(cache)],
                   check=True, capture_output=True)
    assert (cache / "legacy-0.3.1.tgz").is_file()
    _remote_kustomization(tmp_path / "app")
    code, report = scan("--target", "1.25", str(tmp_path / "app"), env=tools)
    assert code == 1 and report["unrendered"] == [], report
    (finding,) = api_findings(report)
    # The chart's files are not the user's: the finding points at the entry that brings it.
    assert (finding["file"], finding["line"]) == (str(tmp_path / "app" / "kustomization.yaml"), 2)
    assert finding["via"].endswith("legacy/templates/psp.yaml")


def test_a_chart_helm_cannot_render_is_read_as_text_not_an_input_problem(tools, tmp_path):
    chart = tmp_path / "charts" / "broken"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 1.0.0\n")
    (chart / "templates" / "psp.yaml").write_text(
        "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n"
        "  name: {{ required \"a name is required\" .Values.name }}\nspec: {}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text(
        "helmGlobals:\n  chartHome: ../charts\nhelmCharts:\n  - name: broken\n")
    code, report = scan("--target", "1.25", str(tmp_path), env=tools)
    assert code == 1 and report["diagnostics"] == []
    assert [(f["file"], f["line"]) for f in report["findings"]] == [(str(chart / "templates" / "psp.yaml"), 1)]
    assert any("a name is required" in u["reason"] and "read as text" in u["reason"] for u in report["unrendered"])


def test_include_crds_reads_the_crds_folders_of_the_chart_and_its_subcharts_only(tmp_path):
    from scanner.sources.kustomize.helm import _crds

    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\n"
    for path, name in (("crds/a.yaml", "a.example.com"), ("charts/sub/crds/c.yaml", "c.example.com"),
                       ("templates/crds/b.yaml", "{{ .Values.name }}")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(crd.format(name=name))
    (tmp_path / "charts" / "sub" / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 1.0.0\n")
    problems: list = []
    assert [m.name for m in _crds(str(tmp_path), "via", problems)] == ["a.example.com", "c.example.com"]
    assert problems == []
