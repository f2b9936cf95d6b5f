"""A chart is a component's by name *and* repository (scanner/components/repositories.py): a chart
named like a component's from a repository its data does not list is someone else's (a fork, a
wrapper) and is "no data", never judged by the component's ranges. A repository kubehop cannot read
(substituted later, a chart in a Git repository) is matched by name, as a mirror of projects' charts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import invoke, write_tree as write
from scanner import data
from scanner.components.repositories import lists, mirror, normalized, readable

RELEASE = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: charts, namespace: flux-system}}
spec: {{url: "{url}"}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: ingress-nginx, namespace: network}}
spec:
  interval: 30m
  chart:
    spec:
      chart: ingress-nginx
      version: 4.11.3
      sourceRef: {{kind: HelmRepository, name: charts, namespace: flux-system}}
"""


def components(root: Path) -> dict[str, dict]:
    done = invoke("components", "--format", "json", ".", cwd=root)
    return {c["component"]: c for c in json.loads(done.stdout)["components"] if c.get("pin")}


def ingress_nginx_from(tmp_path: Path, url: str) -> dict[str, dict]:
    return components(write(tmp_path, {"network/ingress-nginx.yaml": RELEASE.format(url=url)}))


def test_the_projects_own_repository_is_the_component_whatever_its_spelling(tmp_path):
    found = ingress_nginx_from(tmp_path, "HTTPS://kubernetes.github.io/ingress-nginx/")
    assert found["ingress-nginx"]["data"] != "none"
    assert found["ingress-nginx"]["pin"] == "4.11.3"


def test_a_chart_of_the_same_name_from_another_repository_is_no_data(tmp_path):
    found = ingress_nginx_from(tmp_path, "https://forkline.github.io/helm-charts")
    assert "ingress-nginx" not in found  # never judged by the upstream project's ranges
    [(name, entry)] = [(n, e) for n, e in found.items() if n.startswith("ingress-nginx")]
    assert entry["data"] == "none" and entry["pin"] == "4.11.3" and entry["line"] == 14
    listed = invoke("components", ".", cwd=tmp_path).stdout
    assert "(chart ingress-nginx) from https://forkline.github.io/helm-charts, a repository no data file lists " \
        "for chart ingress-nginx" in listed


def test_a_repository_flux_substitutes_later_is_matched_by_name(tmp_path):
    found = ingress_nginx_from(tmp_path, "${CHARTS_URL}")
    assert found["ingress-nginx"]["data"] != "none"


def test_oci_charts_match_as_a_registry_or_as_the_chart_artifact(tmp_path):
    root = write(tmp_path, {
        "argo.yaml": """
            apiVersion: argoproj.io/v1alpha1
            kind: Application
            metadata: {name: snapshot-controller, namespace: argocd}
            spec:
              project: default
              destination: {server: https://kubernetes.default.svc, namespace: kube-system}
              source:
                repoURL: ghcr.io/piraeusdatastore/helm-charts
                chart: snapshot-controller
                targetRevision: 4.1.0
            """,
        "flux.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: OCIRepository
            metadata: {name: snapshot-controller, namespace: flux-system}
            spec:
              url: oci://ghcr.io/piraeusdatastore/helm-charts/snapshot-controller/
              ref: {tag: 4.1.0}
            ---
            apiVersion: helm.toolkit.fluxcd.io/v2
            kind: HelmRelease
            metadata: {name: snapshot-controller, namespace: flux-system}
            spec:
              interval: 1h
              chartRef: {kind: OCIRepository, name: snapshot-controller}
            """})
    done = invoke("components", "--format", "json", ".", cwd=root)
    pins = [c for c in json.loads(done.stdout)["components"] if c.get("pin")]
    assert {(c["component"], c["file"]) for c in pins} == {
        ("external-snapshotter", "argo.yaml"), ("external-snapshotter", "flux.yaml")}, pins


def test_a_chart_in_a_git_repository_is_matched_by_name(tmp_path):
    root = write(tmp_path, {"ingress.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata: {name: ingress-nginx, namespace: flux-system}
        spec:
          url: https://github.com/kubernetes/ingress-nginx
          ref: {tag: helm-chart-4.11.3}
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: ingress-nginx, namespace: flux-system}
        spec:
          interval: 1h
          chart:
            spec:
              chart: ./charts/ingress-nginx
              sourceRef: {kind: GitRepository, name: ingress-nginx}
        """})
    found = components(root)
    assert "ingress-nginx" in found and found["ingress-nginx"]["data"] != "none"


def test_repository_spellings_and_mirrors():
    assert normalized("oci://GHCR.io/a/b/") == normalized("ghcr.io/a/b") == "ghcr.io/a/b"
    assert normalized("http://charts.jetstack.io") == normalized("https://charts.jetstack.io/")
    assert lists(("oci://ghcr.io/a/charts/cilium",), "oci://ghcr.io/a/charts", "cilium")
    assert not lists(("oci://ghcr.io/a/charts/cilium",), "oci://ghcr.io/a", "charts")
    assert not lists(("https://helm.cilium.io",), "https://helm.cilium.io.evil.example", "cilium")
    for entry in data.load("rules/helm.yaml")["chart_mirrors"]:
        assert mirror(entry["repository"]) and mirror(entry["repository"].rstrip("/") + "/some-chart")
        assert not mirror(entry["repository"].rstrip("/") + "-other")


def test_a_helm_chart_oci_proxy_serves_the_repository_in_its_path():
    # oci://<proxy>/<repository host>/<path>: ocharted, helm-charts-oci-proxy
    upstream = ("https://kubernetes-sigs.github.io/descheduler",)
    assert lists(upstream, "oci://ocharted.example.net/kubernetes-sigs.github.io/descheduler", "descheduler")
    assert not lists(upstream, "oci://ocharted.example.net/kubernetes-sigs/descheduler", "descheduler")


def test_a_chart_from_a_mirror_is_the_component_that_names_it(tmp_path):
    found = ingress_nginx_from(tmp_path, "oci://ghcr.io/home-operations/charts-mirror")
    assert found["ingress-nginx"]["data"] != "none"


def test_what_is_no_address_is_left_to_the_name():
    # helm's repository aliases name an entry of the user's repositories.yaml, not a repository
    assert not any(readable(r) for r in ("@bitnami", "alias:bitnami", "${REPO}", "", None, "tree:apps"))
    assert readable("https://charts.bitnami.com/bitnami") and readable("ghcr.io/cilium/charts")
