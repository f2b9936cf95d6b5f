"""Files no root of the tree reaches are read as not deployed (sources/reach/unreached.py): their findings
are notices naming why, their component pins not the tree's. Found on public repos: apps whose Flux
Kustomization is commented out of the parent kustomization (truxnell/home-cluster: 154 files, xunholy/
k8s-gitops), subfolders a kustomization never lists (factorio worlds beside the one deployed), an
`.archive` of retired apps; and kept as they were: a bootstrap folder applied by hand, a tree with no
roots, a chart whose templates make the Applications."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import invoke, kustomize_or_skip, write_tree
from scanner.scan import ScanOptions, scan
from scanner.versions import parse_minor

INGRESS = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\nspec: {{}}\n"
GOTK_SYNC = textwrap.dedent("""\
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: GitRepository
    metadata: {name: flux-system, namespace: flux-system}
    spec: {url: ssh://git@github.com/example/home-ops, ref: {branch: main}}
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata: {name: flux-system, namespace: flux-system}
    spec: {path: ./kubernetes/flux, sourceRef: {kind: GitRepository, name: flux-system}}
    """)
CERT_MANAGER = textwrap.dedent("""\
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {name: cert-manager, namespace: cert-manager}
    spec:
      chart:
        spec: {chart: cert-manager, version: v1.9.0, sourceRef: {kind: HelmRepository, name: jetstack}}
    """)


def _ks(name: str, path: str, source: str = "flux-system") -> str:
    return (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, "
            f"namespace: flux-system}}\nspec: {{path: \"{path}\", sourceRef: {{kind: GitRepository, name: {source}}}}}\n")


def _kustomization(*resources: str) -> str:
    listed = "".join(f"  - {r}\n" for r in resources)
    return f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{listed}"


def _home_ops(**more: str) -> dict[str, str]:
    """A Flux home-ops tree as `flux bootstrap` leaves it: clusters/main syncs kubernetes/flux, whose
    Kustomization builds kubernetes/apps; each app has its ks.yaml, listed by its namespace's kustomization."""
    return {
        "clusters/main/flux-system/gotk-components.yaml": "# the Flux controllers\n",
        "clusters/main/flux-system/gotk-sync.yaml": GOTK_SYNC,
        "clusters/main/flux-system/kustomization.yaml": _kustomization("gotk-components.yaml", "gotk-sync.yaml"),
        "kubernetes/flux/apps.yaml": _ks("cluster-apps", "./kubernetes/apps"),
        "kubernetes/apps/media/kustomization.yaml": _kustomization("./jellyfin/ks.yaml", "# - ./plex/ks.yaml"),
        "kubernetes/apps/media/jellyfin/ks.yaml": _ks("jellyfin", "./kubernetes/apps/media/jellyfin/app"),
        "kubernetes/apps/media/jellyfin/app/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/apps/media/jellyfin/app/ingress.yaml": INGRESS.format(name="jellyfin"),
        "kubernetes/apps/media/plex/ks.yaml": _ks("plex", "./kubernetes/apps/media/plex/app"),
        "kubernetes/apps/media/plex/app/kustomization.yaml": _kustomization("./ingress.yaml", "./release.yaml"),
        "kubernetes/apps/media/plex/app/ingress.yaml": INGRESS.format(name="plex"),
        "kubernetes/apps/media/plex/app/release.yaml": CERT_MANAGER,
        **more,
    }


def _scan(root: Path, paths: list[str] | None = None):
    return scan(paths or [str(root)], target=parse_minor("1.36"), options=ScanOptions(render=False))


def _severities(analysis) -> dict[str, str]:
    """tree-relative file -> the severity of its removed-API finding."""
    return {f.origin.path.split("/tree/", 1)[1]: f.severity for f in analysis.findings
            if f.rule_id == "extensions/v1beta1/Ingress"}


def test_an_app_whose_flux_kustomization_is_commented_out_is_not_deployed(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops())
    analysis = _scan(root)
    assert _severities(analysis) == {"kubernetes/apps/media/jellyfin/app/ingress.yaml": "error",
                                     "kubernetes/apps/media/plex/app/ingress.yaml": "notice"}
    note = next(f.note for f in analysis.findings if f.name == "plex")
    assert note.endswith(f"Not deployed: no Flux Kustomization or Argo CD Application of the tree reaches this "
                         f"folder ({root}/kubernetes/apps/media is built without it; {root}/kubernetes/apps/media/"
                         "plex/ks.yaml, whose Flux Kustomization points here, is not deployed itself).")
    # Its chart pins no component; the notice counts the files, and so does the summary.
    assert not [d for d in analysis.tree.detections if d.component == "cert-manager"]
    assert any(n.startswith("3 files that no Flux Kustomization or Argo CD Application of the tree reaches, read "
                            "as not deployed: their findings are notices (1)") and n.endswith(
        f"in {root}/kubernetes/apps/media/plex/app") for n in analysis.notices)
    # ks.yaml is not listed; the app's ingress, release and kustomization no root reaches
    assert sorted(analysis.not_deployed.values()) == ["unlisted", "unreached", "unreached", "unreached"]
    assert analysis.exit_code == 1  # jellyfin still blocks


def test_the_kustomization_of_a_folder_no_root_reaches_pins_nothing(tmp_path):
    """A remote base's `?ref=` pins its component: not where no root builds the kustomization."""
    remote = _kustomization("github.com/fluxcd/flux2/manifests/install?ref=v2.1.2")
    root = write_tree(tmp_path / "tree", _home_ops(**{"kubernetes/apps/media/plex/app/kustomization.yaml": remote}))
    analysis = _scan(root)
    assert not [d for d in analysis.tree.detections if d.component == "flux"]
    assert analysis.not_deployed[f"{root}/kubernetes/apps/media/plex/app/kustomization.yaml"] == "unreached"
    (root / "kubernetes/apps/media/kustomization.yaml").write_text(_kustomization("./jellyfin/ks.yaml", "./plex/ks.yaml"))
    assert [d.pin for d in _scan(root).tree.detections if d.component == "flux"] == ["v2.1.2"]


def test_listed_again_it_is_deployed_and_pins_its_component(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops())
    (root / "kubernetes/apps/media/kustomization.yaml").write_text(_kustomization("./jellyfin/ks.yaml", "./plex/ks.yaml"))
    analysis = _scan(root)
    assert set(_severities(analysis).values()) == {"error"}
    assert [d.pin for d in analysis.tree.detections if d.component == "cert-manager"] == ["v1.9.0"]
    assert not analysis.not_deployed


def test_a_world_its_app_kustomization_never_builds_is_not_deployed(tmp_path):
    """truxnell/home-cluster: factorio/ks.yaml deploys one world; the other worlds' folders sit beside it."""
    root = write_tree(tmp_path / "tree", _home_ops(**{
        "kubernetes/apps/games/kustomization.yaml": _kustomization("./factorio/ks.yaml"),
        "kubernetes/apps/games/factorio/ks.yaml": _ks("factorio", "./kubernetes/apps/games/factorio/freight"),
        "kubernetes/apps/games/factorio/freight/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/apps/games/factorio/freight/ingress.yaml": INGRESS.format(name="freight"),
        "kubernetes/apps/games/factorio/k2/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/apps/games/factorio/k2/ingress.yaml": INGRESS.format(name="k2"),
    }))
    severities = _severities(_scan(root))
    assert severities["kubernetes/apps/games/factorio/freight/ingress.yaml"] == "error"
    assert severities["kubernetes/apps/games/factorio/k2/ingress.yaml"] == "notice"


def test_an_archive_folder_nothing_reaches_is_not_deployed_one_a_root_reaches_is(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops(**{
        ".archive/bazarr/ks.yaml": _ks("bazarr", "./kubernetes/apps/media/bazarr/app"),  # moved away: no such folder
        ".archive/bazarr/app/kustomization.yaml": _kustomization("./ingress.yaml"),
        ".archive/bazarr/app/ingress.yaml": INGRESS.format(name="bazarr"),
    }))
    analysis = _scan(root)
    assert _severities(analysis)[".archive/bazarr/app/ingress.yaml"] == "notice"
    assert next(f.note for f in analysis.findings if f.name == "bazarr").endswith(
        f"(it lies in {root}/.archive, an archive folder nothing reaches).")
    (root / "kubernetes/flux/bazarr.yaml").write_text(_ks("bazarr", "./.archive/bazarr/app"))  # deployed from there
    assert _severities(_scan(root))[".archive/bazarr/app/ingress.yaml"] == "error"


def test_an_input_problem_of_a_file_no_root_reaches_is_a_notice_and_the_scan_complete(tmp_path):
    """xunholy/k8s-gitops: an .archive kustomization naming a component folder that is gone made the whole
    scan exit 3 ("some input could not be read"); nothing applies it, so the scan misses nothing."""
    broken = _kustomization("./ingress.yaml") + "components:\n  - ../../../components/common\n"
    kustomize_or_skip()
    root = write_tree(tmp_path / "tree", _home_ops(**{
        "kubernetes/apps/media/kustomization.yaml": _kustomization("./jellyfin/ks.yaml"),  # builds with kustomize
        ".archive/bazarr/app/kustomization.yaml": broken,
        ".archive/bazarr/app/ingress.yaml": INGRESS.format(name="bazarr")}))
    analysis = scan([str(root)], target=parse_minor("1.36"))
    [problem] = [d for d in analysis.diagnostics if "components/common" in d.message]
    assert problem.level == "notice" and problem.message.endswith("(not deployed: the scan is complete without it)")
    assert analysis.exit_code == 1  # jellyfin's removed Ingress, not the archive
    (root / "kubernetes/flux/bazarr.yaml").write_text(_ks("bazarr", "./.archive/bazarr/app"))  # deployed again
    analysis = scan([str(root)], target=parse_minor("1.36"))
    assert [d.level for d in analysis.diagnostics if "components/common" in d.message] == ["error"]
    assert analysis.exit_code == 3


def test_a_substituted_path_reaches_every_folder_it_may_name_and_the_rest_is_judged(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops(**{
        "kubernetes/flux/apps.yaml": _ks("cluster-apps", "./kubernetes/apps/${CLUSTER}"),
        "kubernetes/apps/main/kustomization.yaml": _kustomization("./web"),
        "kubernetes/apps/main/web/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/apps/main/web/ingress.yaml": INGRESS.format(name="web"),
        "kubernetes/apps/main/old/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/apps/main/old/ingress.yaml": INGRESS.format(name="old"),
        "kubernetes/flux/infra.yaml": _ks("infra", "./kubernetes/infra"),
        "kubernetes/infra/kustomization.yaml": _kustomization("./gateway"),
        "kubernetes/infra/gateway/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/infra/gateway/ingress.yaml": INGRESS.format(name="gateway"),
        "kubernetes/infra/retired/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/infra/retired/ingress.yaml": INGRESS.format(name="retired"),
    }))
    severities = _severities(_scan(root))
    assert severities["kubernetes/apps/main/web/ingress.yaml"] == "error"
    # `${CLUSTER}` may be `main/old` as well as `main` or `media`: nothing there is taken as undeployed.
    assert severities["kubernetes/apps/main/old/ingress.yaml"] == "error"
    assert severities["kubernetes/apps/media/plex/app/ingress.yaml"] == "error"
    # what it cannot name is judged still
    assert severities["kubernetes/infra/gateway/ingress.yaml"] == "error"
    assert severities["kubernetes/infra/retired/ingress.yaml"] == "notice"


def test_a_kustomization_of_another_repository_reaches_nothing_here(tmp_path):
    tenant = textwrap.dedent("""\
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata: {name: tenant, namespace: flux-system}
        spec: {url: https://github.com/example/tenant.git}
        """)
    root = write_tree(tmp_path / "tree", _home_ops(**{
        "kubernetes/flux/tenant.yaml": tenant + "---\n" + _ks("tenant", "./", source="tenant"),
    }))
    assert _severities(_scan(root))["kubernetes/apps/media/plex/app/ingress.yaml"] == "notice"
    (root / "kubernetes/flux/tenant.yaml").write_text(
        tenant + "---\n" + _ks("tenant", "./kubernetes/apps/media/plex/app", source="tenant"))
    assert _severities(_scan(root))["kubernetes/apps/media/plex/app/ingress.yaml"] == "notice"
    # A source the tree does not define may be this repository: its path is read in this tree.
    (root / "kubernetes/flux/tenant.yaml").write_text(
        _ks("tenant", "./kubernetes/apps/media/plex/app", source="made-by-terraform"))
    assert set(_severities(_scan(root)).values()) == {"error"}


def test_a_tree_without_roots_is_read_as_before(tmp_path):
    """The same apps without Flux's bootstrap, nor a Kustomization of its source: a Flux tree bootstrapped
    by Terraform with a source of its own, or plain folders."""
    files = {path: text.replace("name: flux-system}}", "name: platform}}") for path, text in _home_ops().items()
             if not path.startswith("clusters/")}
    root = write_tree(tmp_path / "tree", files)
    analysis = _scan(root)
    assert _severities(analysis)["kubernetes/apps/media/plex/app/ingress.yaml"] == "error"
    assert not [v for v in analysis.not_deployed.values() if v == "unreached"]


def test_a_bootstrap_folder_applied_by_hand_is_not_judged(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops(**{
        "kubernetes/bootstrap/kustomization.yaml": _kustomization("./ingress.yaml"),
        "kubernetes/bootstrap/ingress.yaml": INGRESS.format(name="bootstrap"),
    }))
    assert _severities(_scan(root))["kubernetes/bootstrap/ingress.yaml"] == "error"


def test_a_file_given_by_name_is_judged_as_it_is(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops())
    plex = root / "kubernetes/apps/media/plex/app/ingress.yaml"
    analysis = _scan(root, [str(root), str(plex)])
    assert _severities(analysis)["kubernetes/apps/media/plex/app/ingress.yaml"] == "error"


def _argo(name: str, path: str, kind: str = "Application") -> str:
    return textwrap.dedent(f"""\
        apiVersion: argoproj.io/v1alpha1
        kind: {kind}
        metadata: {{name: {name}, namespace: argocd}}
        spec:
          project: default
          source: {{repoURL: https://github.com/example/homelab.git, path: {path}, targetRevision: HEAD}}
          destination: {{server: https://kubernetes.default.svc}}
        """)


def test_an_argo_cd_root_application_and_what_its_folder_does_not_list(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "k8s/root.yaml": _argo("root", "k8s/apps"),  # applied by hand: the app-of-apps
        "k8s/apps/kustomization.yaml": _kustomization("./web/app.yaml"),
        "k8s/apps/web/app.yaml": _argo("web", "k8s/apps/web/manifests"),
        "k8s/apps/web/manifests/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/web/manifests/ingress.yaml": INGRESS.format(name="web"),
        "k8s/apps/unifi/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/unifi/ingress.yaml": INGRESS.format(name="unifi"),
    })
    assert _severities(_scan(root)) == {"k8s/apps/web/manifests/ingress.yaml": "error",
                                        "k8s/apps/unifi/ingress.yaml": "notice"}


def test_an_application_set_reaches_what_its_generator_may_make(tmp_path):
    appset = textwrap.dedent("""\
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: apps, namespace: argocd}
        spec:
          generators: [GENERATOR]
          template:
            metadata: {name: "{{path.basename}}"}
            spec:
              source: {repoURL: https://github.com/example/homelab.git, path: "{{path}}"}
              destination: {server: https://kubernetes.default.svc}
        """)
    files = {
        "k8s/apps/kustomization.yaml": _kustomization("./web"),
        "k8s/apps/web/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/web/ingress.yaml": INGRESS.format(name="web"),
        "k8s/apps/unifi/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/unifi/ingress.yaml": INGRESS.format(name="unifi"),
        "k8s/root.yaml": _argo("root", "k8s/apps"),
    }
    git = "{git: {repoURL: https://github.com/example/homelab.git, directories: [{path: k8s/apps/*}]}}"
    root = write_tree(tmp_path / "tree", {**files, "k8s/set.yaml": appset.replace("GENERATOR", git)})
    assert set(_severities(_scan(root)).values()) == {"error"}  # the git generator makes k8s/apps/unifi too
    scm = "{scmProvider: {github: {organization: example}}}"  # unread: `{{path}}` may be any folder
    root = write_tree(tmp_path / "second" / "tree", {**files, "k8s/set.yaml": appset.replace("GENERATOR", scm)})
    assert set(_severities(_scan(root)).values()) == {"error"}
    (root / "k8s/set.yaml").unlink()  # the root alone does not reach unifi
    assert _severities(_scan(root))["k8s/apps/unifi/ingress.yaml"] == "notice"


def test_a_chart_of_the_tree_that_makes_applications_leaves_the_tree_unjudged(tmp_path):
    root = write_tree(tmp_path / "tree", {
        "k8s/root.yaml": _argo("root", "k8s/app-of-apps"),
        "k8s/app-of-apps/Chart.yaml": "apiVersion: v2\nname: app-of-apps\nversion: 0.1.0\n",
        "k8s/app-of-apps/values.yaml": "apps: [web, unifi]\n",
        "k8s/app-of-apps/templates/apps.yaml": "{{- range .Values.apps }}\napiVersion: argoproj.io/v1alpha1\n"
                                               "kind: Application\n{{- end }}\n",
        "k8s/apps/kustomization.yaml": _kustomization("./web"),
        "k8s/apps/web/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/web/ingress.yaml": INGRESS.format(name="web"),
        "k8s/apps/unifi/kustomization.yaml": _kustomization("./ingress.yaml"),
        "k8s/apps/unifi/ingress.yaml": INGRESS.format(name="unifi"),
        "k8s/apps.yaml": _argo("apps", "k8s/apps"),
    })
    assert set(_severities(_scan(root)).values()) == {"error"}


def test_the_json_summary_counts_the_files_read_as_not_deployed(tmp_path):
    root = write_tree(tmp_path / "tree", _home_ops())
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--target", "1.36", str(root))
    report = json.loads(done.stdout)
    assert report["summary"]["not_deployed"] == {"unlisted": 1, "unreached": 3}
    assert report["summary"]["notices"] == 1 and report["summary"]["errors"] == 1
    # grouped apart, not as a deprecation that "still works at 1.36": nothing applies the file
    assert {f["object"]["name"]: f["hop"] for f in report["findings"]} == {"jellyfin": "hop to 1.22", "plex": "not deployed"}
    text = invoke("scan", "--no-config", "--no-render", "--target", "1.36", str(root)).stdout
    assert text.index("Hop to 1.22: 1 finding") < text.index("Not deployed: 1 finding")


def test_in_a_fleet_the_whole_repositorys_roots_say_what_is_not_deployed(tmp_path):
    """Each cluster reads part of the repository: what no root of it reaches is told by the whole
    repository's reading, in every cluster's analysis and in the files no cluster deploys."""
    import shutil

    from conftest import FIXTURES

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "fleet", repo)  # clusters/dev and clusters/prod, bootstrapped by Flux
    (repo / ".git").mkdir()
    write_tree(repo, {
        "apps/dev/retired/kustomization.yaml": _kustomization("./ingress.yaml"),  # apps/dev lists ../base only
        "apps/dev/retired/ingress.yaml": INGRESS.format(name="retired"),
        ".archive/old/ingress.yaml": INGRESS.format(name="archived"),
        "attic/old.yaml": INGRESS.format(name="attic"),  # no root reaches it, nor anything above it: checked
    })
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--target", "1.36", ".", cwd=repo)
    report = json.loads(done.stdout)
    found = {f["object"]["name"]: (f["severity"], [c["name"] for c in f["clusters"]]) for f in report["findings"]
             if f["rule"] == "extensions/v1beta1/Ingress"}
    assert found == {"retired": ("notice", ["dev"]), "archived": ("notice", ["(no cluster)"]),
                     "attic": ("error", ["(no cluster)"])}
    assert report["summary"]["not_deployed"]["unreached"] == 3  # and retired's kustomization
