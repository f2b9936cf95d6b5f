"""One repository, several clusters (issue 28): each cluster analysed from its own version, with what it
really deploys; a finding in a shared base names every cluster it breaks; scan and plan count the same."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, invoke, kustomize_or_skip
from scanner.fleet import find_clusters
from scanner.options import ScanOptions

FLEET = FIXTURES / "fleet"  # clusters/dev (k3s v1.31.5) and clusters/prod (v1.29.4), sharing apps/base


@pytest.fixture(autouse=True)
def kustomize(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "kubehop-cache"))
    command = kustomize_or_skip()
    monkeypatch.setenv("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL", command[0])


def scan_json(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    done = invoke("scan", "--no-config", "--format", "json", "--target", "1.36", *args, cwd=cwd)
    return done.returncode, json.loads(done.stdout)


def test_the_clusters_flux_is_bootstrapped_into_are_found_with_what_they_deploy():
    clusters = {c.name: c.paths for c in find_clusters([str(FLEET)], ScanOptions())}
    fleet = os.path.relpath(FLEET)  # named as the scan names files
    assert clusters == {"dev": (f"{fleet}/clusters/dev", f"{fleet}/apps/dev"),
                        "prod": (f"{fleet}/clusters/prod", f"{fleet}/apps/prod")}


def test_each_cluster_starts_from_its_own_version_and_a_shared_finding_names_both():
    code, report = scan_json(str(FLEET))
    assert code == 1
    clusters = {c["name"]: (c["from"], c["from_source"], c["errors"]) for c in report["clusters"]}
    assert clusters == {"dev": ("1.31", "upgrade-orders", 1), "prod": ("1.29", "upgrade-orders", 2)}
    by_rule = {f["rule"]: f["clusters"] for f in report["findings"]}
    assert by_rule == {
        "flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema": [{"name": "dev", "hop": "hop to 1.32"},
                                                             {"name": "prod", "hop": "hop to 1.32"}],
        "policy/v1beta1/PodDisruptionBudget": [{"name": "prod", "hop": "already broken at 1.29"}]}
    # dev's own Plan is dev's minor, not a skip from prod's 1.29; the shared finding counts once
    assert report["summary"]["errors"] == 2
    assert not [f for f in report["findings"] if f["rule"].startswith("upgrade-order/")]


def test_without_rendering_a_shared_base_is_still_each_clusters_that_reaches_it():
    """--no-render builds no kustomization: a cluster still deploys the bases its kustomizations name
    (read from the kustomization files), so apps/base's finding is dev's and prod's, not '(no cluster)'."""
    code, report = scan_json("--no-render", str(FLEET))
    assert code == 1 and [c["name"] for c in report["clusters"]] == ["dev", "prod"]
    by_rule = {f["rule"]: [c["name"] for c in f["clusters"]] for f in report["findings"]}
    assert by_rule == {"flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema": ["dev", "prod"],
                       "policy/v1beta1/PodDisruptionBudget": ["prod"]}


def test_the_text_report_groups_by_cluster_then_hop():
    text = invoke("scan", "--no-config", "--target", "1.36", str(FLEET)).stdout
    dev, prod = text.index("Cluster dev: 1.31 → 1.36, 1 blocker"), text.index("Cluster prod: 1.29 → 1.36, 2 blockers")
    assert dev < prod and "also breaks: prod" in text[dev:prod] and "also breaks: dev" in text[prod:]
    assert text.rstrip().endswith("blocked: 1.36 cannot be reached as is (2 blockers, 0 warnings)")


def test_plan_gives_a_set_of_windows_per_cluster_and_counts_what_scan_counts():
    plan = json.loads(invoke("plan", "--no-config", "--format", "json", "--target", "1.36", str(FLEET)).stdout)
    assert (plan["blockers"], plan["warnings"]) == (2, 0)
    windows = {c["name"]: (c["from"], len(c["windows"]), c["blockers"]) for c in plan["clusters"]}
    assert windows == {"dev": ("1.31", 5, 1), "prod": ("1.29", 7, 2)}
    text = invoke("plan", "--no-config", "--target", "1.36", str(FLEET)).stdout
    assert text.rstrip().splitlines()[-1] == "blocked: 1.36 cannot be reached as is (2 blockers, 0 warnings)"


def test_from_applies_to_every_cluster_and_names_those_whose_tree_says_otherwise():
    code, report = scan_json("--from", "1.30", str(FLEET))
    assert code == 1 and [(c["name"], c["from"]) for c in report["clusters"]] == [("dev", "1.30"), ("prod", "1.30")]
    assert "--from 1.30 was taken for each of the tree's 2 clusters (dev, prod)" in report["notices"]
    assert any(n.startswith("cluster prod: its tree pins 1.29 (Plan system-upgrade/k3s-server spec.version "
                            "v1.29.4+k3s1 at ") and n.endswith("not 1.30; without --from each cluster starts from "
                                                               "its own minor") for n in report["notices"])
    plan = json.loads(invoke("plan", "--no-config", "--format", "json", "--from", "1.30", "--target", "1.36",
                             str(FLEET)).stdout)
    assert [(c["name"], c["from"]) for c in plan["clusters"]] == [("dev", "1.30"), ("prod", "1.30")]


def test_one_cluster_at_the_minor_given():
    code, report = scan_json("--cluster", "prod", "--from", "1.30", str(FLEET))
    assert report["from"] == "1.30" and [c["name"] for c in report["clusters"]] == ["prod"]
    done = invoke("plan", "--no-config", "--cluster", "staging", "--target", "1.36", str(FLEET))
    assert done.returncode == 2 and "the tree's clusters are dev, prod" in done.stderr


def test_the_configuration_names_the_clusters_and_their_minors(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    (repo / ".git").mkdir()
    (repo / ".kubehop.yaml").write_text("clusters:\n  - name: canary\n    paths: [apps/dev]\n    from: \"1.33\"\n"
                                        "  - name: main\n    paths: [apps/prod, ../outside]\n")
    done = invoke("scan", "--format", "json", "--target", "1.36", ".", cwd=repo)
    report = json.loads(done.stdout)
    assert [(c["name"], c["from"]) for c in report["clusters"]][:2] == [("canary", "1.33"), ("main", None)]
    (problem,) = [d for d in report["diagnostics"] if "clusters[1].paths[1]" in d["message"]]
    assert "leaves the repository" in problem["message"] and problem["line"] == 6


def test_files_no_cluster_deploys_are_still_checked(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    (repo / ".git").mkdir()
    (repo / "attic").mkdir()
    (repo / "attic" / "old.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n"
                                             "  name: forgotten\nspec: {}\n")
    code, report = scan_json(".", cwd=repo)
    (finding,) = [f for f in report["findings"] if f["object"]["name"] == "forgotten"]
    assert finding["clusters"] == [{"name": "(no cluster)", "hop": "hop to 1.22"}]
    assert report["summary"]["errors"] == 3


ARGO = FIXTURES / "fleet-argo"  # an Application to dev, ApplicationSets to staging and prod, a hub app-of-apps


def argo_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(ARGO, repo)
    (repo / ".git").mkdir()  # Argo CD reads spec.source.path from the repository's top
    return repo


def test_the_destinations_of_argo_cd_applications_are_the_clusters(tmp_path):
    repo = argo_repo(tmp_path)
    clusters = {c.name: tuple(os.path.relpath(p, repo) for p in c.paths)
                for c in find_clusters([str(repo)], ScanOptions())}
    # the ApplicationSets' list names prod and staging by server, their cluster Secrets by name: one
    # cluster each; the clusters generator adds apps/prod to prod only; the hub deploys only Applications
    assert clusters == {"dev": ("clusters/dev",), "prod": ("clusters/prod", "apps/prod"),
                        "staging": ("clusters/staging",)}


def test_an_argo_cd_fleet_is_scanned_cluster_by_cluster(tmp_path):
    code, report = scan_json(".", cwd=argo_repo(tmp_path))
    assert code == 1
    clusters = {c["name"]: (c["from"], c["errors"]) for c in report["clusters"]}
    assert clusters == {"dev": ("1.31", 1), "prod": ("1.29", 2), "staging": ("1.30", 1)}
    by_rule = {f["rule"]: [c["name"] for c in f["clusters"]] for f in report["findings"]}
    assert by_rule == {"flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema": ["dev", "prod", "staging"],
                       "policy/v1beta1/PodDisruptionBudget": ["prod"]}


def test_one_destination_is_one_cluster(tmp_path):
    repo = argo_repo(tmp_path)
    for name in ("dev", "platform"):
        (repo / "argocd" / "apps" / f"{name}.yaml").unlink()
    (repo / "argocd" / "apps" / "all.yaml").write_text("".join(
        f"---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {env}}}\nspec:\n"
        f"  destination: {{{where}, namespace: default}}\n  source: {{path: clusters/{env}}}\n"
        for env, where in (("dev", "name: in-cluster"), ("prod", "server: https://kubernetes.default.svc/"))))
    assert find_clusters([str(repo)], ScanOptions()) == []


def test_an_application_set_read_only_as_far_as_the_tree_says(tmp_path):
    repo = argo_repo(tmp_path)
    (repo / "argocd" / "apps" / "platform.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: platform}\nspec:\n"
        "  goTemplate: true\n  generators:\n"
        "    - list: {elements: [[not, a, map], {cluster: staging}, {other: prod}]}\n"
        "    - scmProvider: {github: {organization: example}}\n"
        "    - clusters: {selector: {matchExpressions: [{key: tier, operator: Exists}]}}\n"
        "  template:\n    metadata: {name: '{{ .cluster }}'}\n    spec:\n"
        "      destination: {name: '{{ .cluster }}'}\n      source: {path: 'clusters/{{ .cluster }}'}\n"
        "---\napiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: piped}\nspec:\n"
        "  goTemplate: true\n  generators: [{list: {elements: [{cluster: prod}]}}]\n"
        "  template:\n    spec:\n"
        "      destination: {name: '{{ .cluster | lower }}'}\n      source: {path: 'clusters/{{ .cluster }}'}\n"
        "---\napiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: broken}\n"
        "spec: {generators: {list: 3}, template: [1]}\n"
        "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: odd}\n"
        "spec: {destination: [prod], source: {path: [clusters/prod]}}\n"
        "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: away}\n"
        "spec: {destination: {name: qa}, source: {path: ../../outside}}\n")
    clusters = {c.name: len(c.paths) for c in find_clusters([str(repo)], ScanOptions())}
    # the piped template, the element without `cluster` and the generators the tree cannot answer are
    # not read; qa deploys nothing of this repository: no cluster of it
    assert clusters == {"dev": 1, "staging": 1}


def test_a_matrix_of_the_clusters_and_the_repository_folders(tmp_path):
    repo = argo_repo(tmp_path)
    (repo / "argocd" / "apps" / "platform.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: every-app-everywhere}\nspec:\n"
        "  generators:\n    - matrix:\n        generators:\n"
        "          - clusters: {selector: {matchLabels: {tier: staging}}}\n"
        "          - git: {repoURL: https://github.com/example/fleet.git, revision: main,\n"
        "                  directories: [{path: 'apps/*'}, {path: apps/prod, exclude: true}]}\n"
        "  template:\n    metadata: {name: '{{name}}-{{path.basename}}'}\n    spec:\n"
        "      destination: {server: '{{server}}'}\n      source: {path: '{{path}}'}\n")
    clusters = {c.name: tuple(os.path.relpath(p, repo) for p in c.paths)
                for c in find_clusters([str(repo)], ScanOptions())}
    assert clusters == {"dev": ("clusters/dev",), "staging": ("apps/base",)}


def test_the_configuration_says_the_rollout_order(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    (repo / ".git").mkdir()
    plan = json.loads(invoke("plan", "--format", "json", "--target", "1.36", ".", cwd=repo).stdout)
    assert [c["name"] for c in plan["clusters"]] == ["dev", "prod"]  # by name when nothing says
    (repo / ".kubehop.yaml").write_text("rollout: [prod, canary]\n")
    plan = json.loads(invoke("plan", "--format", "json", "--target", "1.36", ".", cwd=repo).stdout)
    assert [c["name"] for c in plan["clusters"]] == ["prod", "dev"]
    report = json.loads(invoke("scan", "--format", "json", "--target", "1.36", ".", cwd=repo).stdout)
    assert [c["name"] for c in report["clusters"]] == ["prod", "dev"]
    assert "the configuration's rollout names canary: no cluster of the tree is called so (its clusters: prod, " \
           "dev)" in report["notices"]
    (repo / ".kubehop.yaml").write_text("rollout: [prod, prod]\n")
    done = invoke("plan", "--target", "1.36", ".", cwd=repo)
    assert done.returncode == 2 and "rollout" in done.stderr


def test_a_change_set_is_one_clusters_and_names_the_clusters_a_shared_edit_moves(tmp_path):
    repo = argo_repo(tmp_path)
    done = invoke("plan", "--no-config", "--target", "1.36", "--window", "1", "--diff", ".", cwd=repo)
    assert done.returncode == 2
    assert "--window makes one cluster's change set, and the tree holds 3 clusters (dev, prod, staging): " \
           "give --cluster NAME with it" in done.stderr
    done = invoke("plan", "--no-config", "--cluster", "dev", "--target", "1.36", "--window", "1", "--format", "json",
                  ".", cwd=repo)
    changes = json.loads(done.stdout)
    # the shared base is migrated where it is written, though dev reads it through its kustomization
    assert [(m["file"], m["to"]) for m in changes["migrations"]] == [("apps/base/flowschema.yaml",
                                                                      "flowcontrol.apiserver.k8s.io/v1")]
    assert sorted(f["file"] for f in changes["files"]) == ["apps/base/flowschema.yaml", "clusters/dev/system-upgrade.yaml"]
    assert (changes["cluster"], changes["shared"]) == ("dev", [{"file": "apps/base/flowschema.yaml",
                                                                "clusters": ["prod", "staging"]}])
    done = invoke("plan", "--no-config", "--cluster", "dev", "--target", "1.36", "--window", "1", "--write", ".",
                  cwd=repo)
    assert done.returncode == 0 and "apps/base/flowschema.yaml is deployed by prod, staging too" in done.stderr
    assert "apiVersion: flowcontrol.apiserver.k8s.io/v1\n" in (repo / "apps/base/flowschema.yaml").read_text()
    # prod's own files are not dev's: its window moves its own Plan and names nothing shared
    changes = json.loads(invoke("plan", "--no-config", "--cluster", "prod", "--target", "1.36", "--window", "1",
                                "--format", "json", ".", cwd=repo).stdout)
    assert changes["shared"] == [] and "clusters/dev/system-upgrade.yaml" not in [f["file"] for f in changes["files"]]


def test_the_change_set_body_says_which_other_clusters_it_moves(tmp_path, snapshot):
    done = invoke("plan", "--no-config", "--cluster", "dev", "--target", "1.36", "--window", "1", "--format",
                  "markdown", ".", cwd=argo_repo(tmp_path))
    assert done.returncode == 0
    assert done.stdout == snapshot


def test_the_markdown_report_and_step_summary_have_a_row_per_cluster(tmp_path, snapshot):
    done = invoke("scan", "--no-config", "--target", "1.36", "--format", "markdown", ".", cwd=argo_repo(tmp_path))
    assert done.returncode == 1
    assert done.stdout == snapshot
    # what to do first names the cluster it is for, as its row does
    assert "**Start with** `apps/prod/pdb.yaml:1:1` PodDisruptionBudget apps/web (hop to 1.25; cluster prod: " \
           "already broken at 1.29): use policy/v1." in done.stdout


def test_the_markdown_start_with_line_names_every_cluster_of_a_shared_finding(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    pdb = repo / "apps" / "prod" / "pdb.yaml"
    pdb.write_text(pdb.read_text().replace("policy/v1beta1", "policy/v1"))  # the shared FlowSchema is first
    done = invoke("scan", "--no-config", "--target", "1.36", "--format", "markdown", ".", cwd=repo)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("**Start with**")]
    assert line == "**Start with** `apps/base/flowschema.yaml:1:1` FlowSchema gitops (hop to 1.32; clusters dev, " \
                   "prod): use flowcontrol.apiserver.k8s.io/v1."
    one = invoke("scan", "--no-config", "--target", "1.36", "--format", "markdown", "apps/base", cwd=repo).stdout
    assert "FlowSchema gitops (hop to 1.32): use" in one  # one cluster: nothing to tell apart


def test_a_tree_of_one_cluster_reads_its_plain_files_once(monkeypatch):
    """The clusters are told from the plain files the tree's own analysis reads first: a tree that turns
    out to be one cluster is not read a second time to find that out (it was: twice the parse)."""
    from scanner.scan import scan
    from scanner.sources.files import source
    from scanner.versions import Minor

    reads = []
    real = source.read_manifest_file_streamed
    monkeypatch.setattr(source, "read_manifest_file_streamed", 
                        lambda item, *a: reads.append(os.path.realpath(item.path)) or real(item, *a))
    one = FLEET / "apps"  # no bootstrap folder: one cluster
    result = scan([str(one)], target=Minor(1, 36))
    assert result.objects and sorted(reads) == sorted(set(reads))
    reads.clear()
    scan([str(FLEET)], target=Minor(1, 36))  # a fleet: read to find its clusters, then each cluster's
    assert len(reads) > len(set(reads))


def test_a_cluster_asked_of_a_tree_of_one_is_refused_before_anything_renders():
    done = invoke("scan", "--no-config", "--cluster", "prod", "--target", "1.36", str(FLEET / "apps"))
    assert done.returncode == 2 and "--cluster prod: the tree declares one cluster only" in done.stderr
