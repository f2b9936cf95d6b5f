"""A HelmRelease of a kustomize base as each overlay builds it: the overlay's chart version is its own
pin, at the patch line that sets it (issue 23). Modelled on fluxcd/flux2-kustomize-helm-example."""

from __future__ import annotations

from pathlib import Path

from catalogs import catalog, mesh
from conftest import write_tree as tree
from scanner.components.reading import detect

BOOK = catalog([mesh()])

BASE = {
    "apps/base/mesh/kustomization.yaml": """
        namespace: net
        resources: [release.yaml]
        """,
    "apps/base/mesh/release.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: mesh, namespace: net}
        spec:
          chart:
            spec:
              chart: mesh
              sourceRef: {kind: HelmRepository, name: mesh}
        """,
}


def pins(root: Path) -> list[tuple]:
    return [(d.component, d.pin, str(Path(d.origin.path).relative_to(root)), d.origin.line, d.origin.column)
            for d in detect([str(root)], BOOK).detections]


def test_each_overlay_pins_its_own_version_and_the_unversioned_base_pins_nothing(tmp_path):
    root = tree(tmp_path, {**BASE,
        "apps/staging/kustomization.yaml": """
            resources: [../base/mesh]
            patches:
              - path: values.yaml
                target: {kind: HelmRelease}
            """,
        "apps/staging/values.yaml": """
            apiVersion: helm.toolkit.fluxcd.io/v2
            kind: HelmRelease
            metadata: {name: mesh, namespace: net}
            spec:
              chart:
                spec:
                  version: "1.18.2"
            """,
        "apps/production/kustomization.yaml": """
            resources: [../base/mesh]
            patches:
              - target: {kind: HelmRelease, name: mesh}
                patch: |
                  - op: add
                    path: /spec/chart/spec/version
                    value: 1.17.0
            """,
    })
    assert sorted(pins(root)) == [("mesh", "1.17.0", "apps/production/kustomization.yaml", 7, 16),
                                  ("mesh", "1.18.2", "apps/staging/values.yaml", 7, 16)]


def test_an_overlay_changing_the_base_version_keeps_both_apart(tmp_path):
    base = dict(BASE)
    base["apps/base/mesh/release.yaml"] = BASE["apps/base/mesh/release.yaml"].replace(
        "chart: mesh\n", "chart: mesh\n              version: 1.16.5\n")
    root = tree(tmp_path, {**base,
        "apps/prod/kustomization.yaml": """
            resources: [../base/mesh]
            patchesStrategicMerge:
              - |-
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: mesh, namespace: net}
                spec: {chart: {spec: {version: 1.19.1}}}
            """,
    })
    found = sorted(pins(root))
    assert [(c, p, f) for c, p, f, _, _ in found] == [
        ("mesh", "1.16.5", "apps/base/mesh/release.yaml"),
        ("mesh", "1.19.1", "apps/prod/kustomization.yaml")]
