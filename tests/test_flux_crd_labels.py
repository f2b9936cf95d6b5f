"""Flux 0.x's gotk-components.yaml: before v0.12 `flux install` labelled every object with
app.kubernetes.io/instance and app.kubernetes.io/version only (no `part-of: flux`; fluxcd/flux2
9055e753). Its CRDs, of the groups compat-matrix/flux.yaml owns, name the Flux release
(`crd_release_label_source`); the controllers' images, each of its own version, are Flux's, not
components of their own. Modelled on raspbernetes/k8s-gitops (k8s/clusters/staging: v0.8.0;
production-gke: `latest`)."""

from __future__ import annotations

import json

from conftest import invoke, write_tree as tree


def components(root) -> list[dict]:
    done = invoke("components", "--no-config", "-o", "json", str(root))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["components"]


FLUX_08 = """
    apiVersion: v1
    kind: Namespace
    metadata:
      labels:
        app.kubernetes.io/instance: flux-system
        app.kubernetes.io/version: {version}
      name: flux-system
    ---
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      labels:
        app.kubernetes.io/instance: flux-system
        app.kubernetes.io/version: {version}
      name: gitrepositories.source.toolkit.fluxcd.io
    spec:
      group: source.toolkit.fluxcd.io
      names: {{kind: GitRepository, plural: gitrepositories}}
      scope: Namespaced
      versions:
        - {{name: v1beta1, served: true, storage: true}}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      labels:
        app.kubernetes.io/instance: flux-system
        app.kubernetes.io/version: {version}
        control-plane: controller
      name: source-controller
      namespace: flux-system
    spec:
      selector: {{matchLabels: {{app: source-controller}}}}
      template:
        metadata: {{labels: {{app: source-controller}}}}
        spec:
          containers:
            - name: manager
              image: ghcr.io/fluxcd/source-controller:v0.9.0
    """


def test_flux_0x_components_without_the_part_of_label_are_flux_at_the_release_its_crds_name(tmp_path):
    root = tree(tmp_path, {"clusters/staging/flux-system/gotk-components.yaml": FLUX_08.format(version="v0.8.0")})
    found = components(root)
    assert [(c["component"], c["pin"], c["line"], c["how"]) for c in found] == [("flux", "v0.8.0", 14, "label")]
    assert found[0]["what"] == ("label app.kubernetes.io/version on CustomResourceDefinition "
                                "gitrepositories.source.toolkit.fluxcd.io, a CRD of Flux")


def test_a_flux_install_labelled_latest_names_no_release(tmp_path):
    """`flux install` of Flux 0.x wrote `latest` when no version was asked for: no release is stated, and
    `latest` is never read as the newest release (that would call a years-old Flux fine)."""
    root = tree(tmp_path, {"clusters/gke/flux-system/gotk-components.yaml": FLUX_08.format(version="latest")})
    assert [(c["component"], c["pin"]) for c in components(root)] == [("source-controller", "v0.9.0")]


def test_a_flux_crd_another_project_labels_as_its_own_is_no_flux_pin(tmp_path):
    """A chart that bundles Flux's CRDs labels them with its own name and version: that is not Flux's."""
    bundled = FLUX_08.format(version="v4.0.3").replace(
        "        app.kubernetes.io/instance: flux-system\n        app.kubernetes.io/version: v4.0.3\n      name: gitrep",
        "        app.kubernetes.io/name: acme-gitops\n        app.kubernetes.io/version: v4.0.3\n      name: gitrep")
    assert "acme-gitops" in bundled
    root = tree(tmp_path, {"gitops/crds.yaml": bundled})
    assert [c["component"] for c in components(root)] == ["source-controller"]
