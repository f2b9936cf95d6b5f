"""Component and cluster-version pins found in real-shaped trees, with the line to edit."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogs import SOURCE, catalog, gitops, mesh, store
from conftest import write_tree as tree
from scanner.components.cluster_pin import cluster_pin_from_version_json
from scanner.components.images import split_image
from scanner.components.file_pins import remote_version
from scanner.components.reading import detect
from scanner.versions import Minor

BOOK = catalog([mesh(), store(), gitops()])


def found(root: Path) -> list[tuple]:
    return [(d.component, d.pin, [r.version for r in d.releases], Path(d.origin.path).name, d.origin.line,
             d.origin.column, d.source) for d in detect([str(root)], BOOK).detections]


def test_flux_helmrelease_version_and_range(tmp_path):
    root = tree(tmp_path, {"mesh.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: mesh, namespace: kube-system}
        spec:
          chart:
            spec:
              chart: mesh
              version: "1.16.5"
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: store, namespace: storage}
        spec: {chart: {spec: {chart: store, version: ">=6.0.0 <8.0.0"}}}
        """})
    assert found(root) == [("mesh", "1.16.5", ["1.16"], "mesh.yaml", 8, 16, "chart"),
                           ("store", ">=6.0.0 <8.0.0", ["1.8", "1.9"], "mesh.yaml", 13, 46, "chart")]


def test_flux_chart_ref_to_an_oci_repository_and_a_helm_chart(tmp_path):
    root = tree(tmp_path, {"release.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1beta2
        kind: OCIRepository
        metadata: {name: store, namespace: storage}
        spec:
          url: oci://ghcr.io/example/charts/store
          ref:
            semver: "7.x"
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: store, namespace: storage}
        spec:
          chartRef: {kind: OCIRepository, name: store}
        ---
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: HelmChart
        metadata: {name: mesh, namespace: kube-system}
        spec:
          chart: mesh
          version: 1.18.x
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: mesh, namespace: kube-system}
        spec:
          chartRef: {kind: HelmChart, name: mesh}
        """})
    assert found(root) == [("mesh", "1.18.x", ["1.18"], "release.yaml", 20, 12, "chart"),
                           ("store", "7.x", ["1.9"], "release.yaml", 7, 13, "chart")]
    [mesh_pin] = [d for d in detect([str(root)], BOOK).detections if d.component == "mesh"]
    assert "via HelmChart kube-system/mesh" in mesh_pin.what


def test_argo_cd_single_and_multi_source_applications_and_an_applicationset(tmp_path):
    root = tree(tmp_path, {"apps.yaml": """
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: mesh, namespace: argocd}
        spec:
          source:
            repoURL: https://charts.example.org/
            chart: mesh
            targetRevision: 1.17.2
        ---
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: store, namespace: argocd}
        spec:
          sources:
            - repoURL: https://github.com/example/values
              targetRevision: main
              ref: values
            - repoURL: oci://ghcr.io/example/charts
              chart: store
              targetRevision: 6.1.0
        ---
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: gitops, namespace: argocd}
        spec:
          template:
            spec:
              source:
                chart: gitops
                targetRevision: "~2.5.0"
        """})
    assert [(c, p, r, line) for c, p, r, _, line, _, _ in found(root)] == [
        ("gitops", "~2.5.0", ["2.5"], 30), ("mesh", "1.17.2", ["1.17"], 8), ("store", "6.1.0", ["1.8"], 20)]


def test_chart_yaml_dependencies_kustomize_remotes_and_version_variables(tmp_path):
    root = tree(tmp_path, {
        "umbrella/Chart.yaml": """
            apiVersion: v2
            name: platform
            version: 0.1.0
            dependencies:
              - name: mesh
                version: 1.19.1
                repository: https://charts.example.org/
            """,
        "storage/kustomization.yaml": """
            resources:
              - https://github.com/example/store/releases/download/v1.8.2/install.yaml
              - local.yaml
            """,
        "group_vars/all.yml": """
            gitops_version: v2.5.1
            unrelated_version: 3.0.0
            """,
    })
    assert found(root) == [
        ("gitops", "v2.5.1", ["2.5"], "all.yml", 1, 17, "variable"),
        ("mesh", "1.19.1", ["1.19"], "Chart.yaml", 6, 14, "chart"),
        ("store", "v1.8.2", ["1.8"], "kustomization.yaml", 2, 5, "kustomize"),
    ]


def test_images_and_labels_count_only_when_they_name_a_known_release(tmp_path):
    root = tree(tmp_path, {"agent.yaml": """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata:
          name: mesh-agent
          labels:
            app.kubernetes.io/part-of: gitops
            app.kubernetes.io/version: v2.6.0
        spec:
          template:
            spec:
              containers:
                - name: agent
                  image: quay.io/example/mesh:v1.17.3@sha256:0123
                - name: sidecar
                  image: quay.io/example/mesh:v0.3.0
        """})
    assert found(root) == [("gitops", "v2.6.0", ["2.6"], "agent.yaml", 7, 32, "label"),
                           ("mesh", "v1.17.3", ["1.17"], "agent.yaml", 13, 18, "image")]


def test_a_release_label_the_installer_stamps_is_a_pin_even_for_an_unlisted_release(tmp_path):
    """gitops 0.14 is older than every release the data lists: a label naming it counts when the
    component's installer stamps its own release on every object (release_label_source), and is
    dropped, as some other version, when it does not."""
    files = {"gotk-components.yaml": """
        apiVersion: v1
        kind: Namespace
        metadata:
          name: gitops-system
          labels:
            app.kubernetes.io/part-of: gitops
            app.kubernetes.io/version: v0.14.1
        """}
    assert found(tree(tmp_path / "plain", files)) == []
    stamped = catalog([mesh(), store(), {**gitops(), "detect": {**gitops()["detect"],
                                                                "release_label_source": SOURCE}}])
    root = tree(tmp_path / "stamped", files)
    [pin] = detect([str(root)], stamped).detections
    assert (pin.component, pin.pin, pin.releases, pin.origin.line, pin.source) == ("gitops", "v0.14.1", (), 7, "label")
    # The same file naming a listed release: the odd label is some other version's.
    files["gotk-components.yaml"] += """
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: gitops-info
          labels:
            app.kubernetes.io/part-of: gitops
            app.kubernetes.io/version: v2.6.0
        """
    root = tree(tmp_path / "both", files)
    assert [(d.pin, d.source) for d in detect([str(root)], stamped).detections] == [("v2.6.0", "label")]


def test_a_tree_without_known_components_yields_nothing_and_bad_yaml_does_not_stop_it(tmp_path):
    root = tree(tmp_path, {"broken.yaml": "key: [unclosed\n", "cm.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: x}
        data: {image: "quay.io/other/thing:v1.0.0"}
        """})
    result = detect([str(root)], BOOK)
    assert result.detections == []
    assert [Path(d.path).name for d in result.diagnostics] == ["broken.yaml"]


def test_cluster_version_from_a_k3s_variable_and_a_system_upgrade_plan(tmp_path):
    root = tree(tmp_path, {
        "roles/k3s/defaults/main.yml": "k3s_version: v1.31.5+k3s1\n",
        "upgrade/plan.yaml": """
            apiVersion: upgrade.cattle.io/v1
            kind: Plan
            metadata: {name: server-plan, namespace: system-upgrade}
            spec:
              concurrency: 1
              version: v1.32.2+rke2r1
              upgrade: {image: rancher/rke2-upgrade}
            """,
    })
    pins = sorted(detect([str(root)], BOOK).cluster, key=lambda p: p.minor)
    assert [(p.minor, p.distro, Path(p.origin.path).name, p.origin.line) for p in pins] == [
        (Minor(1, 31), "k3s", "main.yml", 1), (Minor(1, 32), "rke2", "plan.yaml", 6)]


def test_cluster_version_from_a_talhelper_talconfig_and_nowhere_else(tmp_path):
    """Talos homelabs (toboshii/home-ops, onedr0p's template) pin the cluster in talconfig.yaml; the same
    key in a chart's values is some other version and pins nothing."""
    root = tree(tmp_path, {
        "talos/talconfig.yaml": """
            clusterName: home
            talosVersion: v1.3.7
            kubernetesVersion: v1.26.5
            nodes: [{hostname: cp1, ipAddress: 10.0.0.10, controlPlane: true}]
            """,
        "apps/values.yaml": "kubernetesVersion: v1.19.0\n",
    })
    pins = detect([str(root)], BOOK).cluster
    assert [(p.minor, p.distro, Path(p.origin.path).name, p.origin.line) for p in pins] == [
        (Minor(1, 26), None, "talconfig.yaml", 3)]


def test_cluster_version_from_a_talhelper_config_of_another_name(tmp_path):
    """allenporter/k8s-gitops runs `talhelper genconfig -c talconf.yaml`: talhelper's configuration
    under a name of its own pins the cluster as talconfig.yaml does (the Talos patches in it were read
    already); a `kubernetesVersion` in a file of no such shape still pins nothing."""
    root = tree(tmp_path, {
        "bootstrap/talos/talconf.yaml": """
            clusterName: k8s-cluster
            talosVersion: v1.13.6
            kubernetesVersion: v1.36.2
            nodes: [{hostname: kapi01, ipAddress: 10.10.100.1, controlPlane: true}]
            """,
        "apps/settings.yaml": "kubernetesVersion: v1.19.0\nnodes: 3\n",
    })
    pins = detect([str(root)], BOOK).cluster
    assert [(p.minor, Path(p.origin.path).name, p.origin.line, p.what) for p in pins] == [
        (Minor(1, 36), "talconf.yaml", 3, "variable kubernetesVersion")]


def test_cluster_version_from_kubectl_version_json(tmp_path):
    path = tmp_path / "version.json"
    path.write_text(json.dumps({"clientVersion": {"gitVersion": "v1.34.1"},
                                "serverVersion": {"gitVersion": "v1.33.4", "platform": "linux/amd64"}}))
    pin = cluster_pin_from_version_json(str(path))
    assert (pin.minor, pin.distro, pin.version) == (Minor(1, 33), None, "v1.33.4")


def test_remote_versions_and_image_references():
    assert remote_version("github.com/example/store/deploy?ref=v8.2.0") == "v8.2.0"
    assert remote_version("https://github.com/x/y/releases/download/v1.9.0/op.yaml") == "v1.9.0"
    assert remote_version("github.com/x/y/deploy?ref=main") is None
    assert split_image("registry:5000/team/app:1.2.3@sha256:ab") == ("registry:5000/team/app", "sha256:ab", "1.2.3")
    assert split_image("registry:5000/team/app") == ("registry:5000/team/app", None, None)


_KEYS = ["spec", "chart", "version", "image", "sources", "source", "targetRevision", "dependencies", "name",
         "resources", "labels", "metadata", "k3s_version", "mesh_version", "chartRef", "kind", "apiVersion"]
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(
    ["mesh", "1.16.5", ">=1.7.0 <1.8.0", "3.x", "v1.31.5+k3s1", "quay.io/example/mesh:v1.17.0", "HelmRelease",
     "helm.toolkit.fluxcd.io/v2", "github.com/example/store?ref=v1.8.0", ""]))
_TREES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)), max_leaves=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_TREES, name=st.sampled_from(["Chart.yaml", "kustomization.yaml", "values.yaml", "release.yaml"]))
def test_detection_never_fails_on_odd_shapes(tmp_path, document, name):
    (tmp_path / name).write_text(yaml.safe_dump(document))
    result = detect([str(tmp_path)], BOOK)
    assert all(d.component in BOOK.components for d in result.detections)


def test_helm2_requirements_and_a_vendored_chart(tmp_path):
    root = tree(tmp_path, {
        "charts/store/Chart.yaml": """
            apiVersion: v1
            name: store
            version: 6.2.0
            appVersion: v1.8.2
            """,
        "charts/platform/requirements.yaml": """
            dependencies:
              - name: mesh
                version: ~1.17.0
                repository: https://charts.example.org/
            """,
    })
    # A vendored chart's release is its appVersion (the chart's own version is not the app's).
    assert found(root) == [("mesh", "~1.17.0", ["1.17"], "requirements.yaml", 3, 14, "chart"),
                           ("store", "v1.8.2", ["1.8"], "Chart.yaml", 4, 13, "vendored")]


def test_a_file_dependency_is_a_chart_of_the_tree_not_the_component_of_its_name(tmp_path):
    """mmalyska/home-ops: an app's Chart.yaml depends on `volsync 1.0.0` from file://../charts/volsync,
    the tree's own chart of VolSync custom resources; it was read as VolSync 1.0 (unknown to the data,
    'unverified' at every hop). The chart it names is read on its own: as a vendored copy only by its
    appVersion."""
    root = tree(tmp_path, {
        "apps/bookorbit/Chart.yaml": """
            apiVersion: v2
            name: bookorbit
            version: 1.0.0
            dependencies:
              - name: mesh
                version: 1.19.1
                repository: https://charts.example.org/
              - name: store
                version: 1.0.0
                repository: file://../../charts/store/
            """,
        "charts/store/Chart.yaml": "apiVersion: v2\nname: store\nversion: 1.0.0\n",
    })
    assert found(root) == [("mesh", "1.19.1", ["1.19"], "Chart.yaml", 6, 14, "chart")]


def test_kustomize_helm_charts_and_the_k3s_helm_controller(tmp_path):
    root = tree(tmp_path, {
        "net/kustomization.yaml": """
            helmCharts:
              - name: mesh
                repo: https://charts.example.org/
                version: 1.18.4
                releaseName: mesh
            """,
        "k3s/store.yaml": """
            apiVersion: helm.cattle.io/v1
            kind: HelmChart
            metadata: {name: store, namespace: kube-system}
            spec:
              chart: store
              repo: oci://ghcr.io/example/charts
              version: 7.0.1
            """,
    })
    assert found(root) == [("mesh", "1.18.4", ["1.18"], "kustomization.yaml", 4, 14, "chart"),
                           ("store", "7.0.1", ["1.9"], "store.yaml", 7, 12, "chart")]


def test_flux_reconciling_itself_from_its_oci_or_git_manifests_is_pinned_at_that_source(tmp_path):
    """The running Flux reads its OCIRepository's (or GitRepository's) ref: that pin is trusted above the
    bootstrap kustomization that installed Flux once, which the state no longer plans from."""
    from scanner.components.catalog import load_catalog
    from scanner.components.state import component_states
    from scanner.components.pins import by_component

    root = tree(tmp_path, {
        "bootstrap/kustomization.yaml": """
            resources:
              - github.com/fluxcd/flux2/manifests/install?ref=v2.2.2
              - github.com/fluxcd/flux2/manifests/install?ref=v2.2.2
            """,
        "flux/oci.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1beta2
            kind: OCIRepository
            metadata: {name: flux-manifests, namespace: flux-system}
            spec:
              url: oci://ghcr.io/fluxcd/flux-manifests
              ref:
                tag: v2.3.0
            """,
        "other/git.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata: {name: flux2, namespace: flux-system}
            spec:
              url: https://github.com/fluxcd/flux2
              ref: {semver: ">=2.3.0 <2.4.0"}
            ---
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata: {name: apps, namespace: flux-system}
            spec:
              url: https://github.com/example/apps
              ref: {tag: v2.3.0}
            """,
    })
    catalog = load_catalog()
    detections = [d for d in detect([str(root)], catalog).detections if d.component == "flux"]
    assert sorted((Path(d.origin.path).name, d.origin.line, d.pin, d.source) for d in detections) == [
        ("git.yaml", 6, ">=2.3.0 <2.4.0", "source"), ("kustomization.yaml", 2, "v2.2.2", "kustomize"),
        ("kustomization.yaml", 3, "v2.2.2", "kustomize"),  # two lines, two pins to edit
        ("oci.yaml", 7, "v2.3.0", "source")]
    states = component_states(by_component(detections), catalog)  # two pins, two installs, both sources
    assert [(s.start.version, {d.source for d in s.detections}) for s in states] == [("2.3", {"source"})] * 2


def test_release_urls_and_variables_named_after_a_component(tmp_path):
    from scanner.components.catalog import load_catalog

    root = tree(tmp_path, {"roles/cilium/defaults/main.yml": """
        cilium_bootstrap_chart_version: "1.16.5"
        gateway_api_crd_urls:
          - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.2.1/standard-install.yaml
          - https://example.com/not/a/component/v1.2.1/x.yaml
        gateway_api_single: https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.2.1/experimental-install.yaml
        kube_prometheus_stack_chart_version: "65.1.0"
        gateway_api_raw: https://raw.githubusercontent.com/kubernetes-sigs/gateway-api/v1.3.0/config/crd/standard/gateway.networking.k8s.io_gateways.yaml
        """})
    found_here = sorted((d.component, d.pin, d.origin.line, d.source, d.what)
                        for d in detect([str(root)], load_catalog()).detections)
    assert found_here == [
        ("cilium", "1.16.5", 1, "variable", "variable cilium_bootstrap_chart_version"),
        ("gateway-api", "v1.2.1", 3, "url", "URL in variable gateway_api_crd_urls"),
        ("gateway-api", "v1.2.1", 5, "url", "URL in variable gateway_api_single"),
        # a file of the repository at a tag, as a Talos extraManifests URL or a remote resource is read
        ("gateway-api", "v1.3.0", 7, "url", "URL in variable gateway_api_raw"),
    ]  # a chart version of a chart numbered apart from its app is not read as the app's
