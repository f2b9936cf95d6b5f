"""Plain files no kustomization lists, in folders a kustomization governs, are read as not deployed
(sources/kustomize/unreferenced.py): their findings are notices, their component pins not the tree's.
Found on public repos: an app commented out of its kustomization (`#- helm-release.yaml`), a file left
after a rename, a Gateway a parent kustomization lists only a sibling of."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import write_tree
from scanner.scan import ScanOptions, scan
from scanner.versions import parse_minor

INGRESS = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\nspec: {{}}\n"
CERT_MANAGER = textwrap.dedent("""\
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {name: cert-manager, namespace: cert-manager}
    spec:
      chart:
        spec:
          chart: cert-manager
          version: v1.9.0
          sourceRef: {kind: HelmRepository, name: jetstack}
    """)


def _kustomization(*resources: str, extra: str = "") -> str:
    listed = "".join(f"  - {r}\n" for r in resources)
    return f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{listed}{extra}"


def _scan(root: Path):
    return scan([str(root)], target=parse_minor("1.36"), options=ScanOptions(render=False))


def _severities(analysis) -> dict[str, str]:
    """tree-relative file -> the severity of its removed-API finding."""
    return {f.origin.path.split("/tree/", 1)[1]: f.severity for f in analysis.findings
            if f.rule_id == "extensions/v1beta1/Ingress"}


def test_a_file_its_kustomization_does_not_list_is_a_notice_saying_why(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "app/kustomization.yaml": _kustomization("./listed.yaml", "# - ./commented.yaml"),
        "app/listed.yaml": INGRESS.format(name="listed"),
        "app/commented.yaml": INGRESS.format(name="commented"),
    })
    analysis = _scan(root)
    assert _severities(analysis) == {"app/listed.yaml": "error", "app/commented.yaml": "notice"}
    notice = next(f for f in analysis.findings if f.name == "commented")
    assert notice.note.endswith(f"Not deployed: {root}/app/kustomization.yaml does not list this file "
                                "(list it there, or delete the file).")
    assert any("1 file that no kustomization lists" in n for n in analysis.notices)
    assert analysis.exit_code == 1  # the listed file still blocks


def test_a_file_below_a_kustomization_without_one_of_its_own_is_judged_by_it(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "net/kustomization.yaml": _kustomization("./gateway/class.yaml"),
        "net/gateway/class.yaml": INGRESS.format(name="class"),
        "net/gateway/old.yaml": INGRESS.format(name="old"),
    })
    assert _severities(_scan(root)) == {"net/gateway/class.yaml": "error", "net/gateway/old.yaml": "notice"}


def test_a_file_another_kustomization_lists_is_deployed(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "base/kustomization.yaml": _kustomization("./a.yaml"),
        "base/a.yaml": INGRESS.format(name="a"),
        "base/shared.yaml": INGRESS.format(name="shared"),
        "overlay/kustomization.yaml": _kustomization("../base", "../base/shared.yaml"),
    })
    assert set(_severities(_scan(root)).values()) == {"error"}


def test_a_folder_flux_or_argo_cd_points_at_below_the_kustomization_is_deployed_whole(tmp_path):
    flux = textwrap.dedent("""\
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: extra, namespace: flux-system}
        spec: {path: ./apps/flux-plain, sourceRef: {kind: GitRepository, name: flux-system}}
        """)
    argo = textwrap.dedent("""\
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: extra, namespace: argocd}
        spec:
          source: {repoURL: https://example.org/repo.git, path: apps/argo-plain}
          destination: {server: https://kubernetes.default.svc}
        """)
    root = write_tree(tmp_path / "tree", {
        "apps/kustomization.yaml": _kustomization("./sync.yaml", "./app.yaml"),
        "apps/sync.yaml": flux,
        "apps/app.yaml": argo,
        "apps/flux-plain/a.yaml": INGRESS.format(name="flux"),
        "apps/argo-plain/a.yaml": INGRESS.format(name="argo"),
        "apps/unpointed/a.yaml": INGRESS.format(name="unpointed"),
    })
    assert _severities(_scan(root)) == {"apps/flux-plain/a.yaml": "error", "apps/argo-plain/a.yaml": "error",
                                        "apps/unpointed/a.yaml": "notice"}


def test_with_an_applicationset_only_files_beside_their_kustomization_are_judged(tmp_path):
    appset = textwrap.dedent("""\
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: apps, namespace: argocd}
        spec:
          generators: [{git: {repoURL: https://example.org/repo.git, directories: [{path: "apps/*"}]}}]
          template:
            metadata: {name: "{{path.basename}}"}
            spec:
              source: {repoURL: https://example.org/repo.git, path: "{{path}}"}
              destination: {server: https://kubernetes.default.svc}
        """)
    root = write_tree(tmp_path / "tree", {
        "apps/kustomization.yaml": _kustomization("./appset.yaml", "# ./beside.yaml"),
        "apps/appset.yaml": appset,
        "apps/beside.yaml": INGRESS.format(name="beside"),
        "apps/plain/a.yaml": INGRESS.format(name="plain"),  # the generator may deploy it
    })
    assert _severities(_scan(root)) == {"apps/beside.yaml": "notice", "apps/plain/a.yaml": "error"}


def test_the_output_beside_a_kustomization_that_renders_a_chart_is_kept(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "cni/kustomization.yaml": _kustomization(extra="helmCharts:\n  - {name: cilium, repo: "
                                                       "https://helm.cilium.io, version: 1.14.5}\n"),
        "cni/install.yaml": INGRESS.format(name="rendered"),  # `kustomize build --enable-helm > install.yaml`
    })
    assert _severities(_scan(root)) == {"cni/install.yaml": "error"}


def test_a_release_no_kustomization_lists_pins_no_component(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "cert-manager/kustomization.yaml": _kustomization("# - ./helmrelease.yaml"),
        "cert-manager/helmrelease.yaml": CERT_MANAGER,
    })
    analysis = _scan(root)
    assert not [d for d in analysis.tree.detections if d.component == "cert-manager"]
    assert not [f for f in analysis.findings if f.rule_id.startswith("component/cert-manager/")]
    (root / "cert-manager/kustomization.yaml").write_text(_kustomization("./helmrelease.yaml"))
    assert [d.pin for d in _scan(root).tree.detections if d.component == "cert-manager"] == ["v1.9.0"]


def test_a_tree_without_kustomizations_is_read_as_before(tmp_path):
    root = write_tree(tmp_path / "tree", {"a.yaml": INGRESS.format(name="a"), "sub/b.yaml": INGRESS.format(name="b")})
    analysis = _scan(root)
    assert set(_severities(analysis).values()) == {"error"}
    assert not any("no kustomization lists" in n for n in analysis.notices)
