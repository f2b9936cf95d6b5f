"""Everything a tree deploys is named (issue 23.1): what compat-matrix/ does not know is "no data",
listed by `components` and the plan, and a finding of the component layer that `scan` counts as
`--unknown` says, unless the chart's own kubeVersion states its range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import invoke, write_tree as write

HAJIMARI = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: node-red, namespace: flux-system}
spec: {url: https://schwarzit.github.io/node-red}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: node-red, namespace: default}
spec:
  interval: 30m
  chart:
    spec:
      chart: node-red
      version: {version}
      sourceRef: {{kind: HelmRepository, name: node-red, namespace: flux-system}}
"""
TALCONFIG = "kubernetesVersion: v1.33.2\n"


def node_red(version: str) -> str:
    return HAJIMARI.replace("{version}", version).replace("{{", "{").replace("}}", "}")


def as_json(*args: str, cwd: Path) -> tuple[int, dict]:
    done = invoke(*args, "--format", "json", ".", cwd=cwd)
    return done.returncode, json.loads(done.stdout)


def component_findings(report: dict, name: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"].startswith(f"component/{name}/")]


def test_a_chart_no_data_names_is_listed_planned_and_counted_like_any_unknown(tmp_path):
    root = write(tmp_path, {"apps/node-red.yaml": node_red("2.0.2"), "talconfig.yaml": TALCONFIG})
    listed = invoke("components", ".", cwd=root)
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("node-red")]
    assert row.split()[:4] == ["node-red", "2.0.2", "no", "data"]
    assert "apps/node-red.yaml:14:16" in row
    assert "1 deployed component kubehop has no data on" in listed.stdout
    code, document = as_json("components", cwd=root)
    [entry] = [c for c in document["components"] if c["component"] == "node-red"]
    assert (entry["data"], entry["pin"], entry["line"], entry["how"]) == ("none", "2.0.2", 14, "chart")

    code, scan = as_json("scan", "--target", "1.36", cwd=root)
    [finding] = component_findings(scan, "node-red")
    assert (finding["rule"], finding["severity"], finding["support"], finding["line"]) == (
        "component/node-red/no-data", "warning", "unknown", 14)
    assert finding["hop"] == "hop to 1.34"  # unknown from the first hop on, not only at the target
    assert "node-red 2.0.2 is deployed, but kubehop has no data on it: whether it supports Kubernetes " \
           "1.34–1.36 is unknown" in finding["message"]
    assert code == 0  # a warning by default: unknown is never fine, never blocked

    code, plan = as_json("plan", "--target", "1.36", cwd=root)
    [component] = [c for c in plan["components"] if c["name"] == "node-red"]
    assert (component["data"], component["start"], component["pins"][0]["line"]) == ("none", None, 14)
    assert plan["warnings"] == scan["summary"]["warnings"] and plan["blockers"] == scan["summary"]["errors"]
    [problem] = [p for w in plan["windows"] for p in w["problems"] if p["component"] == "node-red"]
    assert (problem["kind"], problem["severity"]) == ("no-data", "unknown")
    text = invoke("plan", "--target", "1.36", ".", cwd=root).stdout
    assert any(line.split()[:3] == ["node-red", "2.0.2:", "no"] and "apps/node-red.yaml:14:16" in line
               for line in text.splitlines())
    markdown = invoke("plan", "--target", "1.36", "--format", "markdown", ".", cwd=root).stdout
    assert "| node-red | 2.0.2: no data | support unknown from 1.34 |" in markdown


@pytest.mark.parametrize("policy, severity, code", [("block", "error", 1), ("ignore", None, 0)])
def test_no_data_follows_the_unknown_policy_in_scan_and_plan(tmp_path, policy, severity, code):
    root = write(tmp_path, {"apps/node-red.yaml": node_red("2.0.2"), "talconfig.yaml": TALCONFIG})
    scan_code, scan = as_json("scan", "--target", "1.36", f"--unknown={policy}", cwd=root)
    assert [f["severity"] for f in component_findings(scan, "node-red")] == ([severity] if severity else [])
    plan_code, plan = as_json("plan", "--target", "1.36", f"--unknown={policy}", cwd=root)
    assert (scan_code, plan_code) == (code, code)
    assert plan["blockers"] == scan["summary"]["errors"]


def test_one_finding_per_version_each_at_its_own_files(tmp_path):
    root = write(tmp_path, {
        "cluster-a/node-red.yaml": node_red("2.0.2"), "cluster-b/node-red.yaml": node_red("2.0.2"),
        "cluster-c/node-red.yaml": node_red("1.2.0"), "talconfig.yaml": TALCONFIG})
    _, scan = as_json("scan", "--target", "1.36", cwd=root)
    found = sorted((f["file"], f["message"].split(" is deployed")[0], f["remediation"])
                   for f in component_findings(scan, "node-red"))
    assert found == [("cluster-a/node-red.yaml", "node-red 2.0.2", ["also edit cluster-b/node-red.yaml:14"]),
                     ("cluster-c/node-red.yaml", "node-red 1.2.0", [])]


def test_remote_bases_git_sources_and_operator_images(tmp_path):
    root = write(tmp_path, {
        "suc/kustomization.yaml": """
            resources:
              - github.com/example-org/upgrade-controller?ref=v0.13.4
              - https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.71.2/example/prometheus-operator-crd/monitoring.coreos.com_probes.yaml
            """,
        "sources.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata: {name: kubegres, namespace: flux-system}
            spec:
              url: https://github.com/reactive-tech/kubegres.git
              ref: {tag: v1.16}
            ---
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata: {name: kubegres, namespace: flux-system}
            spec:
              path: ./
              sourceRef: {kind: GitRepository, name: kubegres}
            ---
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata: {name: flux-system, namespace: flux-system}
            spec:
              url: https://github.com/me/home-ops
              ref: {branch: main}
            """,
        "operator/deployment.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: noobaa-operator, namespace: noobaa}
            spec:
              selector: {matchLabels: {app: noobaa}}
              template:
                metadata: {labels: {app: noobaa}}
                spec:
                  containers:
                    - {name: operator, image: "noobaa/noobaa-operator:5.19.0"}
                    - {name: app, image: "ghcr.io/example/web-app:1.2.3"}
            """,
    })
    _, document = as_json("components", cwd=root)
    rows = sorted((c["component"], c["pin"], c["data"], c["file"], c["line"]) for c in document["components"])
    assert rows == [
        ("kubegres", "v1.16", "none", "sources.yaml", 6),
        ("noobaa-operator", "5.19.0", "none", "operator/deployment.yaml", 10),
        # A raw file of a known component's repository is that component, at the tag in its path.
        ("prometheus-operator", "v0.71.2", "catalog", "suc/kustomization.yaml", 3),
        ("upgrade-controller", "v0.13.4", "none", "suc/kustomization.yaml", 2),
    ]  # the tree's own source (a branch) and the app's image are not components


def test_a_catalog_repository_names_each_remote_base_after_its_folder(tmp_path):
    """rules/kustomize.yaml: redhat-cop/gitops-catalog holds one item per top folder. Its bases are as many
    components as items, each listed (and in the plan) on its own; another repository stays one."""
    root = write(tmp_path, {
        "ops/kustomization.yaml": """
            resources:
              - github.com/redhat-cop/gitops-catalog/compliance-operator/operator/overlays/release-0.1
              - https://github.com/redhat-cop/gitops-catalog/nmstate/aggregate/overlays/default?ref=v0.3
              - https://github.com/redhat-cop/gitops-catalog.git?ref=main
              - github.com/example-org/tools/nexus2/base
            """,
    })
    _, document = as_json("components", cwd=root)
    rows = sorted((c["component"], c["pin"], c["line"]) for c in document["components"])
    assert rows == [("compliance-operator", "*", 2), ("gitops-catalog", "main", 4), ("nmstate", "v0.3", 3),
                    ("tools", "*", 5)]


def test_flux_controllers_images_are_part_of_the_flux_install_not_components_of_their_own():
    done = invoke("components", "--format", "json", "tests/fixtures/seed002")
    names = {c["component"] for c in json.loads(done.stdout)["components"]}
    assert "flux" in names and not names & {"helm-controller", "source-controller", "kustomize-controller"}


def test_a_chart_kept_in_the_tree_is_judged_by_its_kubeversion_not_no_data(tmp_path):
    root = write(tmp_path, {
        "app/kustomization.yaml": """
            helmCharts:
              - name: node-red
                repo: https://schwarzit.github.io/node-red
                version: 2.0.2
                releaseName: node-red
            """,
        "app/charts/node-red-2.0.2/node-red/Chart.yaml": """
            apiVersion: v2
            name: node-red
            version: 2.0.2
            kubeVersion: ">=1.16.0-0 <1.35.0-0"
            """,
        "talconfig.yaml": TALCONFIG,
    })
    _, document = as_json("components", cwd=root)
    assert {c["data"] for c in document["components"]} == {"chart-kubeVersion"}
    _, scan = as_json("scan", "--target", "1.36", "--no-render", cwd=root)
    rules = {f["rule"] for f in scan["findings"] if f["rule"].startswith("component/")}
    assert not any(rule.endswith("/no-data") for rule in rules)
    assert "component/chart/node-red/blocked" in rules or "component/chart/node-red/unsupported" in rules


def test_a_chart_whose_kubeversion_helm_cache_states_is_judged_by_it(tmp_path):
    cache, config = tmp_path / "helm-cache", tmp_path / "helm-config"
    write(cache, {"node-red-index.yaml": """
        apiVersion: v1
        entries:
          node-red:
            - {name: node-red, version: 2.0.2, kubeVersion: ">=1.16.0-0"}
        """})
    write(config, {"repositories.yaml": "repositories:\n  - {name: node-red, url: https://schwarzit.github.io/node-red}\n"})
    root = write(tmp_path / "tree", {"apps/node-red.yaml": node_red("2.0.2"), "talconfig.yaml": TALCONFIG})
    env = {"HELM_REPOSITORY_CACHE": str(cache), "HELM_REPOSITORY_CONFIG": str(config / "repositories.yaml")}
    done = invoke("scan", "--target", "1.36", "--format", "json", ".", cwd=root, env=env)
    rules = {f["rule"] for f in json.loads(done.stdout)["findings"]}
    assert not any(r.startswith("component/node-red/") for r in rules)
    listed = json.loads(invoke("components", "--format", "json", ".", cwd=root, env=env).stdout)
    assert [c["data"] for c in listed["components"] if c["component"].endswith("node-red")] == ["chart-kubeVersion"]


def test_a_hostile_chart_name_is_named_safely_in_the_rule_and_printed_escaped(tmp_path):
    root = write(tmp_path, {"apps/evil.yaml": node_red("2.0.2").replace(
        "chart: node-red", 'chart: "evil\\u202e::error title=x::y\\nname"'), "talconfig.yaml": TALCONFIG})
    _, scan = as_json("scan", "--target", "1.36", cwd=root)
    [finding] = [f for f in scan["findings"] if f["rule"].endswith("/no-data")]
    assert finding["rule"] == "component/evil-error-title-x-y-name/no-data"
    text = invoke("components", ".", cwd=root).stdout
    assert "\u202e" not in text and "\nname" not in text
    github = invoke("scan", "--target", "1.36", "--format", "github", ".", cwd=root).stdout
    assert not any(line.startswith("::error title=x") for line in github.splitlines())
