"""A Flux Kustomization's spec.targetNamespace is the namespace of the HelmReleases (and their sources
and values) it applies: the files under its path often name none (modelled on onedr0p/home-ops)."""

from __future__ import annotations

from catalogs import catalog, mesh
from conftest import write_tree as tree
from scanner.components.reading import detect

BOOK = catalog([mesh()])

APP = {
    "apps/net/mesh/app/kustomization.yaml": """
        resources: [helmrelease.yaml]
        """,
    "apps/net/mesh/app/helmrelease.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: mesh}
        spec:
          chart:
            spec:
              chart: mesh
              version: 1.18.2
              sourceRef: {kind: HelmRepository, name: mesh}
        """,
}


def flux_kustomization(name: str, namespace: str) -> str:
    return f"""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {{name: {name}, namespace: flux-system}}
        spec:
          path: ./apps/net/mesh/app
          targetNamespace: {namespace}
          sourceRef: {{kind: GitRepository, name: flux-system}}
        """


def whats(root) -> list[str]:
    return [d.what for d in detect([str(root)], BOOK).detections]


def test_the_release_is_in_the_target_namespace_of_the_flux_kustomization_that_applies_it(tmp_path):
    root = tree(tmp_path, {**APP, "apps/net/mesh/ks.yaml": flux_kustomization("mesh", "net")})
    assert whats(root) == ["HelmRelease net/mesh (chart mesh)"]


def test_a_folder_applied_in_two_namespaces_keeps_what_its_files_say(tmp_path):
    root = tree(tmp_path, {**APP, "apps/net/mesh/ks.yaml": flux_kustomization("mesh", "net"),
                           "apps/net/mesh/ks-b.yaml": flux_kustomization("mesh-b", "other")})
    assert whats(root) == ["HelmRelease mesh (chart mesh)"]


def test_a_substituted_target_namespace_is_not_known_before_it_is_applied(tmp_path):
    root = tree(tmp_path, {**APP, "apps/net/mesh/ks.yaml": flux_kustomization("mesh", "${NS}")})
    assert whats(root) == ["HelmRelease mesh (chart mesh)"]


def test_the_target_namespace_overrides_the_one_the_file_names(tmp_path):
    # Flux: targetNamespace "sets or overrides the namespace" (kustomize's namespace transformer).
    app = dict(APP)
    app["apps/net/mesh/app/helmrelease.yaml"] = APP["apps/net/mesh/app/helmrelease.yaml"].replace(
        "{name: mesh}", "{name: mesh, namespace: flux-system}")
    root = tree(tmp_path, {**app, "apps/net/mesh/ks.yaml": flux_kustomization("mesh", "net")})
    assert whats(root) == ["HelmRelease net/mesh (chart mesh)"]
