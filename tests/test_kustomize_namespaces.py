"""The namespace an object read from its own file is deployed in (sources/kustomize/namespaces.py):
a kustomization's `namespace:` and a Flux Kustomization's targetNamespace, as kustomize and Flux apply
them, for every object of the files their builds reach; a file two builds put in two namespaces keeps
its own, and a cluster-scoped kind keeps none. Modelled on a home-ops tree (buroa/k8s-gitops): each
app's ks.yaml builds ./app with targetNamespace, its HelmRelease and OCIRepository carry no namespace,
and kubehop said 'Flux HelmRelease default/metrics-server' for one deployed in kube-system."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import kustomize_or_skip
from scanner.scan import ScanOptions
from scanner.sources import collect


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


FLUX_APP = {
    "apps/kube-system/kustomization.yaml": """
        namespace: kube-system
        resources: [./metrics/ks.yaml]
    """,
    "apps/kube-system/metrics/ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: metrics}
        spec:
          path: ./apps/kube-system/metrics/app
          targetNamespace: kube-system
          sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
    """,
    "apps/kube-system/metrics/app/kustomization.yaml": """
        resources: [./helmrelease.yaml, ./ocirepository.yaml, ./rbac.yaml, ./extra]
    """,
    "apps/kube-system/metrics/app/helmrelease.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: metrics}
        spec:
          chartRef: {kind: OCIRepository, name: metrics}
    """,
    "apps/kube-system/metrics/app/ocirepository.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: OCIRepository
        metadata: {name: metrics}
        spec:
          url: oci://registry.example.org/charts/metrics
          ref: {tag: 3.1.0}
    """,
    "apps/kube-system/metrics/app/rbac.yaml": """
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata: {name: metrics-reader}
        rules: []
    """,
    # a folder of its own that only the app's build uses: what it holds lands where the app does
    "apps/kube-system/metrics/app/extra/kustomization.yaml": """
        resources: [./service.yaml]
        configMapGenerator:
          - name: metrics-settings
            literals: [level=info]
    """,
    "apps/kube-system/metrics/app/extra/service.yaml": """
        apiVersion: v1
        kind: Service
        metadata: {name: metrics, namespace: somewhere-else}
        spec:
          ports: [{port: 443}]
    """,
}


def read(root: Path, options: ScanOptions | None = None) -> dict[tuple[str, str | None], str | None]:
    found = collect([str(root)], options=options or ScanOptions(render=False))
    return {(m.kind, m.name): m.namespace for m in found.manifests}


def test_a_flux_target_namespace_is_the_namespace_of_what_its_folder_holds(tmp_path):
    write(tmp_path, FLUX_APP)
    namespaces = read(tmp_path)
    assert namespaces[("HelmRelease", "metrics")] == "kube-system"
    assert namespaces[("OCIRepository", "metrics")] == "kube-system"
    assert namespaces[("Service", "metrics")] == "kube-system"  # targetNamespace overrides the file's own
    assert namespaces[("ClusterRole", "metrics-reader")] is None  # cluster-scoped: no namespace
    assert namespaces[("Kustomization", "metrics")] == "kube-system"  # the parent's namespace: field


def test_a_flux_helm_release_is_named_in_the_namespace_it_is_deployed_in(tmp_path):
    write(tmp_path, FLUX_APP)
    found = collect([str(tmp_path)], options=ScanOptions())
    [notice] = [d.message for d in found.unrendered if d.path.endswith("helmrelease.yaml")]
    assert notice.startswith("Flux HelmRelease kube-system/metrics: chart oci://registry.example.org/charts/metrics")


def test_what_a_flux_build_makes_lands_in_its_target_namespace(tmp_path, monkeypatch):
    command = kustomize_or_skip()
    monkeypatch.setenv("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL", command[0])
    write(tmp_path, FLUX_APP)
    found = collect([str(tmp_path)], options=ScanOptions())
    generated = {m.origin.via: m for m in found.manifests if m.kind == "ConfigMap"}
    by_flux = generated[f"kustomize build {tmp_path}/apps/kube-system/metrics/app"]
    assert by_flux.name.startswith("metrics-settings-") and by_flux.namespace == "kube-system"


def test_a_base_two_overlays_put_in_two_namespaces_keeps_its_own(tmp_path):
    write(tmp_path, {
        "base/kustomization.yaml": "resources: [./deployment.yaml]\n",
        "base/deployment.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web}
        """,
        "overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\n",
        "overlays/prod/kustomization.yaml": "namespace: prod\nresources: [../../base, ./job.yaml]\n",
        "overlays/prod/job.yaml": """
            apiVersion: batch/v1
            kind: Job
            metadata: {name: migrate, namespace: tools}
        """,
    })
    namespaces = read(tmp_path)
    assert namespaces[("Deployment", "web")] is None
    assert namespaces[("Job", "migrate")] == "prod"  # the kustomization's namespace: wins over the file's


def test_a_namespace_left_to_postbuild_is_not_guessed(tmp_path):
    files = dict(FLUX_APP)
    files["apps/kube-system/metrics/ks.yaml"] = files["apps/kube-system/metrics/ks.yaml"].replace(
        "targetNamespace: kube-system", "targetNamespace: ${APP_NAMESPACE}")
    write(tmp_path, files)
    assert read(tmp_path)[("HelmRelease", "metrics")] is None


@pytest.mark.parametrize("scope, expected", [("Cluster", None), ("Namespaced", "kube-system")])
def test_a_custom_kind_the_tree_declares_cluster_scoped_keeps_no_namespace(tmp_path, scope, expected):
    files = dict(FLUX_APP)
    files["apps/kube-system/metrics/app/kustomization.yaml"] = "resources: [./helmrelease.yaml, ./issuer.yaml]\n"
    files["apps/kube-system/metrics/app/issuer.yaml"] = """
        apiVersion: example.org/v1
        kind: Issuer
        metadata: {name: letsencrypt}
    """
    files["crds/issuer.yaml"] = f"""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {{name: issuers.example.org}}
        spec:
          group: example.org
          names: {{kind: Issuer, plural: issuers}}
          scope: {scope}
          versions: [{{name: v1, served: true, storage: true}}]
    """
    write(tmp_path, files)
    assert read(tmp_path)[("Issuer", "letsencrypt")] == expected


def test_a_release_whose_namespace_is_unknown_finds_the_one_source_of_its_name(tmp_path):
    """A HelmRelease no build places (a folder its kustomization leaves out) names its OCIRepository
    with no namespace; the one OCIRepository of that name, placed by its build, is the chart's source."""
    files = dict(FLUX_APP)
    files["apps/kube-system/metrics/unused/kustomization.yaml"] = "resources: [./helmrelease.yaml]\n"
    files["apps/kube-system/metrics/unused/helmrelease.yaml"] = files["apps/kube-system/metrics/app/helmrelease.yaml"] \
        .replace("name: metrics}", "name: unused}", 1)
    write(tmp_path, files)
    found = collect([str(tmp_path)], options=ScanOptions())
    [notice] = [d.message for d in found.unrendered if "unused/helmrelease.yaml" in d.path]
    assert notice.startswith("Flux HelmRelease default/unused: chart oci://registry.example.org/charts/metrics")


def test_a_source_several_namespaces_share_is_still_the_chart_of_each_release(tmp_path):
    """A Component's OCIRepository that two namespaces' kustomizations include keeps no namespace of its
    own; the HelmRelease placed in one of them still deploys its chart (szinn/k8s-homelab's app-template)."""
    from conftest import run_kubehop

    write(tmp_path, {
        "components/chart/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                               "resources: [./ocirepository.yaml]\n",
        "components/chart/ocirepository.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: OCIRepository
            metadata: {name: app-template}
            spec:
              url: oci://ghcr.io/bjw-s-labs/helm/app-template
              ref: {tag: 4.1.0}
        """,
        "apps/one/kustomization.yaml": "namespace: one\ncomponents: [../../components/chart]\nresources: [./hr.yaml]\n",
        "apps/one/hr.yaml": """
            apiVersion: helm.toolkit.fluxcd.io/v2
            kind: HelmRelease
            metadata: {name: web}
            spec:
              chartRef: {kind: OCIRepository, name: app-template}
        """,
        "apps/two/kustomization.yaml": "namespace: two\ncomponents: [../../components/chart]\n",
    })
    proc = run_kubehop("components", "-o", "json", str(tmp_path))
    assert "app-template" in proc.stdout.decode(), proc.stderr.decode()


def test_every_listed_cluster_scoped_kind_is_a_kind_kubernetes_serves():
    """rules/cluster-scoped.yaml names real kinds of their real groups (served-apis.yaml, from the
    schemas of every minor): a misspelt kind would silently get a build's namespace."""
    from scanner import data

    served = {(api.rpartition("/")[0] if "/" in api else "", kind)
              for api, kinds in data.load("rules/served-apis.yaml")["apis"].items() for kind in kinds}
    listed = {("" if entry["group"] == "core" else entry["group"], kind)
              for entry in data.load("rules/cluster-scoped.yaml")["kinds"] for kind in entry["kinds"]}
    assert listed - served == set()
