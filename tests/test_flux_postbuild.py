"""Flux Kustomizations' post-build substitution: the objects a Kustomization builds are read with their
`${var}` filled in from its inline `substitute` and its `substituteFrom` ConfigMaps (plain, or made by
a configMapGenerator), defaults included, and a pin of a filled-in value is edited where the variable
is set. Modelled on stefanprodan/gitops-istio (a ConfigMap holds the Istio version) and the homelab
layouts of onedr0p, bjw-s-labs and kashalls (cluster-settings ConfigMaps, SOPS Secrets, env files)."""

from __future__ import annotations

import json
import textwrap

from catalogs import catalog, mesh
from conftest import run_kubehop_text, write_tree as tree
from scanner.components.reading import detect

BOOK = catalog([mesh()])

RELEASE = """
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {{name: mesh, namespace: net}}
    spec:
      chart:
        spec:
          chart: mesh
          version: "{version}"
          sourceRef: {{kind: HelmRepository, name: mesh}}
    """
REPOSITORY = """
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: HelmRepository
    metadata: {name: mesh, namespace: net}
    spec: {url: https://charts.example.org/}
    """


def kustomization(name: str, path: str, post_build: str = "", namespace: str = "flux-system") -> str:
    """A Flux Kustomization; `post_build`: its spec.postBuild, as YAML of its own (dedented)."""
    spec = textwrap.indent(textwrap.dedent(post_build).strip("\n"), "    ")
    return textwrap.dedent(f"""\
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: {name}
          namespace: {namespace}
        spec:
          interval: 10m
          path: {path}
          prune: true
          sourceRef:
            kind: GitRepository
            name: flux-system
        """) + (f"  postBuild:\n{spec}\n" if post_build else "")


FROM_VERSIONS = """
    substituteFrom:
      - kind: ConfigMap
        name: mesh-version
    """


def config_map(name: str, data: str) -> str:
    """A ConfigMap of flux-system; `data`: its data entries, one `KEY: value` a line."""
    entries = "".join(f"  {line}\n" for line in data.strip("\n").split("\n")) if data else ""
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: flux-system\n"
            + (f"data:\n{entries}" if entries else "data: {}\n"))


VERSIONS = config_map("mesh-version", "version: 1.18.2")


def istio_like(version: str = "${version}", **more: str) -> dict[str, str]:
    """gitops-istio: the cluster folder holds the Kustomization and the ConfigMap; the release's folder has no
    kustomization file (Flux generates one)."""
    return {"clusters/prod/mesh.yaml": kustomization("mesh", "./infra/mesh", FROM_VERSIONS),
            "clusters/prod/mesh-version.yaml": VERSIONS,
            "infra/mesh/release.yaml": RELEASE.format(version=version),
            "infra/mesh/repository.yaml": REPOSITORY, **more}


def pins(root) -> list[tuple]:
    return [(d.component, d.pin, str(d.origin.path).removeprefix(f"{root}/"), d.origin.line, d.origin.column,
             d.origin.via) for d in detect([str(root)], BOOK).detections]


def scan_json(root, *args: str) -> dict:
    done = run_kubehop_text("scan", "--no-config", "--target", "1.36", "-o", "json", *args, str(root))
    return json.loads(done.stdout)


def test_a_version_from_a_substitute_from_config_map_is_pinned_where_the_config_map_sets_it(tmp_path):
    root = tree(tmp_path, istio_like())
    assert pins(root) == [("mesh", "1.18.2", "clusters/prod/mesh-version.yaml", 7, 12,
                           f"version: ${{version}} at {root}/infra/mesh/release.yaml:8, filled in by "
                           "Flux Kustomization flux-system/mesh")]


def test_the_scan_judges_the_substituted_version_at_the_config_maps_line(tmp_path):
    """Real data: Istio 1.19 supports Kubernetes up to 1.28 (gitops-istio pins 1.19.3 in a ConfigMap)."""
    files = istio_like()
    files["clusters/prod/mesh-version.yaml"] = VERSIONS.replace("1.18.2", "1.19.3")
    files["infra/mesh/release.yaml"] = RELEASE.format(version="${version}").replace("chart: mesh", "chart: istiod")
    files["infra/mesh/repository.yaml"] = REPOSITORY.replace("https://charts.example.org/",
                                                             "https://istio-release.storage.googleapis.com/charts")
    report = scan_json(tree(tmp_path, files))
    istio = [f for f in report["findings"] if f["rule"].startswith("component/istio/")]
    assert [(f["rule"], f["hop"], f["file"].rpartition("/")[2], f["line"]) for f in istio] == [
        ("component/istio/unsupported", "hop to 1.29", "mesh-version.yaml", 7)]
    assert "version: ${version} at" in istio[0]["via"] and "release.yaml:8" in istio[0]["via"]
    assert "no known release matches" not in json.dumps(report)


def test_the_inline_substitute_map_wins_and_is_where_the_version_is_edited(tmp_path):
    inline = textwrap.dedent(FROM_VERSIONS) + "substitute:\n  version: 1.17.1\n"
    root = tree(tmp_path, istio_like(**{"clusters/prod/mesh.yaml": kustomization("mesh", "./infra/mesh", inline)}))
    assert [p[:5] for p in pins(root)] == [("mesh", "1.17.1", "clusters/prod/mesh.yaml", 18, 16)]


def test_a_later_substitute_from_source_wins_over_an_earlier_one(tmp_path):
    two = textwrap.dedent(FROM_VERSIONS) + "  - kind: ConfigMap\n    name: mesh-override\n"
    override = config_map("mesh-override", "version: 1.19.0")
    root = tree(tmp_path, istio_like(**{"clusters/prod/mesh.yaml": kustomization("mesh", "./infra/mesh", two),
                                        "clusters/prod/override.yaml": override}))
    assert [p[:4] for p in pins(root)] == [("mesh", "1.19.0", "clusters/prod/override.yaml", 7)]


def test_a_config_map_made_by_a_generator_under_a_fixed_name_sets_variables(tmp_path):
    """kashalls/home-cluster: `configMapGenerator` with an env file and disableNameSuffixHash."""
    root = tree(tmp_path, {
        "kubernetes/apps/net/kustomization.yaml": """
            resources: [./mesh/ks.yaml]
            configMapGenerator:
              - name: mesh-version
                namespace: flux-system
                env: ../../../versions.env
                literals:
                  - OTHER=1.16.0
            generatorOptions:
              disableNameSuffixHash: true
            """,
        "versions.env": "# versions\nversion=1.18.2\n",
        "kubernetes/apps/net/mesh/ks.yaml": kustomization("mesh", "./kubernetes/apps/net/mesh/app", FROM_VERSIONS),
        "kubernetes/apps/net/mesh/app/kustomization.yaml": "resources: [release.yaml, repository.yaml]\n",
        "kubernetes/apps/net/mesh/app/release.yaml": RELEASE.format(version="${version}"),
        "kubernetes/apps/net/mesh/app/repository.yaml": REPOSITORY,
    })
    assert [p[:5] for p in pins(root)] == [("mesh", "1.18.2", "versions.env", 2, 9)]
    literal = tree(tmp_path / "literal", {
        **{name: text for name, text in [
            ("kubernetes/apps/net/kustomization.yaml", """
                resources: [./mesh/ks.yaml]
                configMapGenerator:
                  - name: mesh-version
                    literals:
                      - version=1.17.1
                    options: {disableNameSuffixHash: true}
                """)]},
        "kubernetes/apps/net/mesh/ks.yaml": kustomization("mesh", "./kubernetes/apps/net/mesh/app", FROM_VERSIONS),
        "kubernetes/apps/net/mesh/app/release.yaml": RELEASE.format(version="${version}"),
        "kubernetes/apps/net/mesh/app/repository.yaml": REPOSITORY,
    })
    assert [p[:5] for p in pins(literal)] == [("mesh", "1.17.1", "kubernetes/apps/net/kustomization.yaml", 5, 17)]


def test_a_generated_config_map_with_a_hashed_name_is_not_the_one_substitute_from_names(tmp_path):
    root = tree(tmp_path, {
        "kubernetes/apps/net/kustomization.yaml": """
            resources: [./mesh/ks.yaml]
            configMapGenerator:
              - name: mesh-version
                literals: [version=1.17.1]
            """,
        "kubernetes/apps/net/mesh/ks.yaml": kustomization("mesh", "./kubernetes/apps/net/mesh/app", FROM_VERSIONS),
        "kubernetes/apps/net/mesh/app/release.yaml": RELEASE.format(version="${version}"),
        "kubernetes/apps/net/mesh/app/repository.yaml": REPOSITORY,
    })
    assert [p[1] for p in pins(root)] == ["${version}"]
    report = scan_json(root)
    assert any("substituteFrom ConfigMap mesh-version: not in the scanned tree" in d["message"]
               for d in report["diagnostics"])


def test_defaults_apply_when_no_source_sets_the_variable(tmp_path):
    root = tree(tmp_path, istio_like(version="${MESH_VERSION:=1.17.0}"))
    assert [p[:4] for p in pins(root)] == [("mesh", "1.17.0", "infra/mesh/release.yaml", 8)]  # written there
    set_there = tree(tmp_path / "set", istio_like(version="${version:-1.16.0}"))
    assert [p[1] for p in pins(set_there)] == ["1.18.2"]


def test_without_any_variable_set_flux_substitutes_nothing_not_even_defaults(tmp_path):
    """substituteStrategy WithVariables (the default): no variable, no substitution."""
    empty = config_map("mesh-version", "")
    files = istio_like(version="${MESH_VERSION:=1.17.0}", **{"clusters/prod/mesh-version.yaml": empty})
    assert [p[1] for p in pins(tree(tmp_path, files))] == ["${MESH_VERSION:=1.17.0}"]
    always = "substituteStrategy: Always\n" + textwrap.dedent(FROM_VERSIONS)
    files["clusters/prod/mesh.yaml"] = kustomization("mesh", "./infra/mesh", always)
    assert [p[1] for p in pins(tree(tmp_path / "always", files))] == ["1.17.0"]


def test_an_object_that_opts_out_is_read_as_written(tmp_path):
    opted = RELEASE.format(version="${version}").replace(
        "namespace: net}", "namespace: net, annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}}")
    assert [p[1] for p in pins(tree(tmp_path, istio_like(**{"infra/mesh/release.yaml": opted})))] == ["${version}"]
    # a kustomization that may add the opt-out to what it builds: not guessed
    files = istio_like(**{"infra/mesh/kustomization.yaml": """
        resources: [release.yaml, repository.yaml]
        commonAnnotations:
          kustomize.toolkit.fluxcd.io/substitute: disabled
        """})
    assert [p[1] for p in pins(tree(tmp_path / "kustomized", files))] == ["${version}"]


def test_a_sops_secret_names_its_keys_but_not_their_values(tmp_path):
    """onedr0p-style: cluster-settings ConfigMap, then the SOPS-encrypted cluster-secrets."""
    two = textwrap.dedent(FROM_VERSIONS) + "  - kind: Secret\n    name: cluster-secrets\n"
    secret = """
        apiVersion: v1
        kind: Secret
        metadata: {name: cluster-secrets, namespace: flux-system}
        stringData:
          SECRET_VERSION: ENC[AES256_GCM,data:Zm9v,iv:YmFy,tag:YmF6,type:str]
        sops:
          encrypted_regex: ^(data|stringData)$
          version: 3.9.0
        """
    files = istio_like(version="${SECRET_VERSION}", **{"clusters/prod/mesh.yaml": kustomization(
        "mesh", "./infra/mesh", two), "clusters/prod/secrets.sops.yaml": secret})
    assert [p[1] for p in pins(tree(tmp_path, files))] == ["${SECRET_VERSION}"]  # unreadable: as written
    files["infra/mesh/release.yaml"] = RELEASE.format(version="${version}")  # set in the ConfigMap only
    assert [p[1] for p in pins(tree(tmp_path / "cm", files))] == ["1.18.2"]
    files["infra/mesh/release.yaml"] = RELEASE.format(version="${OTHER:=1.16.2}")  # the Secret has no OTHER
    assert [p[1] for p in pins(tree(tmp_path / "default", files))] == ["1.16.2"]
    report = scan_json(tree(tmp_path / "report", {**files, "infra/mesh/release.yaml": RELEASE.format(
        version="${SECRET_VERSION}")}))
    assert any("chart mesh ${SECRET_VERSION} from" in u["reason"] for u in report["unrendered"])  # as before


def test_two_kustomizations_that_fill_a_file_differently_leave_it_as_written(tmp_path):
    other = config_map("mesh-version-b", "version: 1.19.1")
    files = istio_like(**{
        "clusters/prod/mesh-b.yaml": kustomization("mesh-b", "./infra/mesh", FROM_VERSIONS.replace(
            "mesh-version", "mesh-version-b")),
        "clusters/prod/mesh-version-b.yaml": other})
    root = tree(tmp_path, files)
    assert [p[1] for p in pins(root)] == ["${version}"]
    report = scan_json(root)
    assert any("fill it in differently; read as written" in d["message"] and d["file"].endswith("release.yaml")
               for d in report["diagnostics"])
    files["clusters/prod/mesh-version-b.yaml"] = other.replace("1.19.1", "1.18.2")  # the same value: filled in
    assert [p[1] for p in pins(tree(tmp_path / "same", files))] == ["1.18.2"]


def test_a_parent_kustomization_fills_in_its_childs_substitute_map(tmp_path):
    """joryirving/home-ops: a child's `substitute: {CLUSTER: ${CLUSTER}}` from the parent's ConfigMap."""
    child_post = "substitute:\n  version: ${MESH}\n"
    root = tree(tmp_path, {
        "clusters/prod/apps.yaml": kustomization("apps", "./apps", FROM_VERSIONS.replace("mesh-version", "info")),
        "clusters/prod/info.yaml": config_map("info", "MESH: 1.19.2"),
        "apps/mesh.yaml": kustomization("mesh", "./infra/mesh", child_post),
        "infra/mesh/release.yaml": RELEASE.format(version="${version}"),
        "infra/mesh/repository.yaml": REPOSITORY,
    })
    assert [p[:4] for p in pins(root)] == [("mesh", "1.19.2", "clusters/prod/info.yaml", 7)]


def test_a_substituted_api_version_is_checked_and_reported_where_it_is_set(tmp_path):
    """Dropped before ('apiVersion is a substitution placeholder; object not checked')."""
    root = tree(tmp_path, {
        "clusters/prod/apps.yaml": kustomization("apps", "./apps", FROM_VERSIONS.replace("mesh-version", "apis")),
        "clusters/prod/apis.yaml": config_map("apis", "PDB_API: policy/v1beta1"),
        "apps/pdb.yaml": """
            apiVersion: ${PDB_API}
            kind: PodDisruptionBudget
            metadata: {name: web, namespace: web}
            spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
            """,
    })
    report = scan_json(root)
    found = [f for f in report["findings"] if f["rule"] == "policy/v1beta1/PodDisruptionBudget"]
    assert [(f["file"].rpartition("/")[2], f["line"], f["severity"]) for f in found] == [("apis.yaml", 7, "error")]
    assert "apiVersion: ${PDB_API} at" in found[0]["via"]


def test_filled_in_values_are_typed_as_flux_reads_them_back(tmp_path):
    from scanner.sources import collect

    settings = config_map("mesh-version", 'REPLICAS: "3"\nTAG: v1.2.3\nCOLON: "a: b"\nESC: x')
    root = tree(tmp_path, {
        "clusters/prod/apps.yaml": kustomization("apps", "./apps", FROM_VERSIONS),
        "clusters/prod/settings.yaml": settings,
        "apps/deploy.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web, namespace: web, labels: {tag: "${TAG}", odd: "${COLON}", kept: "$${TAG}"}}
            spec:
              replicas: ${REPLICAS}
              template:
                spec:
                  containers:
                    - {name: web, image: "ghcr.io/example/web:${TAG}", args: ["${ESC}$$HOME"]}
            """,
    })
    deploy = next(m for m in collect([str(root)]).manifests if m.kind == "Deployment")
    body = deploy.body
    assert body["spec"]["replicas"] == 3  # the string "3", written unquoted, is a number again
    assert body["metadata"]["labels"] == {"tag": "v1.2.3", "odd": "${COLON}", "kept": "${TAG}"}
    container = body["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "ghcr.io/example/web:v1.2.3" and container["args"] == ["x$HOME"]


def test_hostile_sources_and_text_never_crash_and_are_said(tmp_path):
    settings = config_map("mesh-version", "A: ${B}\nB: '" + "x" * 200_000 + "'\nversion: 1.18.2")
    release = RELEASE.format(version="${version}").replace(
        "namespace: net}", "namespace: net, labels: {a: '${A}', big: '" + "${B}" * 50 + "'}}")
    root = tree(tmp_path, istio_like(**{"clusters/prod/mesh-version.yaml": settings,
                                        "infra/mesh/release.yaml": release}))
    from scanner.sources import collect

    found = collect([str(root)])
    helm_release = next(m for m in found.manifests if m.kind == "HelmRelease")
    labels = helm_release.body["metadata"]["labels"]
    assert labels["a"] == "${A}"  # a value holding ${...} is its own applier's to fill: not guessed
    assert labels["big"] == "${B}" * 50  # an expansion past 1 MiB is not built
    assert helm_release.body["spec"]["chart"]["spec"]["version"] == "1.18.2"
    # a ConfigMap value that is no string: the API server refuses the ConfigMap, so nothing is read from it
    numeric = tree(tmp_path / "numeric", istio_like(**{"clusters/prod/mesh-version.yaml": config_map(
        "mesh-version", "version: 1.18")}))
    report = scan_json(numeric)
    assert [p[1] for p in pins(numeric)] == ["${version}"]
    assert any("data.version is '1.18', not a string" in d["message"] for d in report["diagnostics"])
    # text Flux's substitution cannot parse fails its whole build: the object is read as written
    broken = RELEASE.format(version="${version}").replace("namespace: net}", "namespace: net, labels: {a: '${{x}}'}}")
    report = scan_json(tree(tmp_path / "broken", istio_like(**{"infra/mesh/release.yaml": broken})))
    assert any("Flux's post-build substitution fails on it" in d["message"] for d in report["diagnostics"])
    assert report["exit_code"] in (0, 1)
    # a key that is no variable name fails the substitution of everything the Kustomization builds
    bad_key = config_map("mesh-version", "version: 1.18.2\nconfig.yaml: x")
    report = scan_json(tree(tmp_path / "key", istio_like(**{"clusters/prod/mesh-version.yaml": bad_key})))
    assert any("'config.yaml' is no variable name" in d["message"] for d in report["diagnostics"])


def test_an_upgrade_order_version_from_a_generated_env_file_is_edited_there(tmp_path):
    """kashalls/home-cluster: system-upgrade Plans take ${KUBERNETES_VERSION} from talos/talos.env."""
    root = tree(tmp_path / "repo", {
        "talos/talos.env": "TALOS_VERSION=v1.10.7\nKUBERNETES_VERSION=v1.34.0\n",
        "kubernetes/flux/apps.yaml": kustomization("apps", "./kubernetes/apps"),
        "kubernetes/apps/kustomization.yaml": """
            resources: [./upgrade/ks.yaml]
            configMapGenerator:
              - name: plan-versions
                namespace: flux-system
                env: ../../talos/talos.env
            generatorOptions:
              disableNameSuffixHash: true
            """,
        "kubernetes/apps/upgrade/ks.yaml": kustomization("plans", "./kubernetes/apps/upgrade/plans",
                                                         FROM_VERSIONS.replace("mesh-version", "plan-versions")),
        "kubernetes/apps/upgrade/plans/kubernetes.yaml": """
            apiVersion: upgrade.cattle.io/v1
            kind: Plan
            metadata: {name: kubernetes, namespace: system-upgrade}
            spec:
              version: ${KUBERNETES_VERSION}
              concurrency: 1
              serviceAccountName: system-upgrade
              nodeSelector:
                matchExpressions:
                  - {key: node-role.kubernetes.io/control-plane, operator: Exists}
              upgrade:
                image: ghcr.io/siderolabs/talosctl:${TALOS_VERSION}
            """,
    })
    from scanner.orders.read import read_orders
    from scanner.sources import collect

    orders = read_orders(collect([str(root)]).manifests)
    assert [(o.version_text, o.origin.path.rpartition("/")[2], o.origin.line, o.origin.column) for o in orders] == [
        ("v1.34.0", "talos.env", 2, 20)]
    report = scan_json(root)
    assert report["from"] == "1.34"
    done = run_kubehop_text("plan", "--no-config", "--target", "1.35", "--orders", str(tmp_path / "orders"), str(root))
    assert "its version is a Flux post-build variable, set at " in done.stdout and "talos.env:2: set it there" \
        in done.stdout
    assert not list((tmp_path / "orders").rglob("*.yaml"))  # the Plan is not written with a version of its own


def test_a_kustomization_applied_from_another_source_builds_none_of_the_trees_files(tmp_path):
    """allenporter/k8s-gitops: a `flux` Kustomization at `path: ./` of the flux-manifests OCIRepository (Flux's
    own release) beside the bootstrap's; it is no build of this repository, so no second, unsubstituted one."""
    flux = kustomization("flux", "./").replace("kind: GitRepository\n    name: flux-system",
                                               "kind: OCIRepository\n    name: flux-manifests")
    root = tree(tmp_path, istio_like(**{
        "clusters/prod/flux-system/gotk-sync.yaml": kustomization("flux-system", "./clusters/prod"),
        "clusters/prod/flux-system/flux.yaml": flux}))
    assert [p[1] for p in pins(root)] == ["1.18.2"]
    assert not [d for d in scan_json(root)["diagnostics"] if "differently" in d["message"]]


PARENT_PATCH = """
    patches:
      - patch: |-
          apiVersion: kustomize.toolkit.fluxcd.io/v1
          kind: Kustomization
          metadata:
            name: not-used
          spec:
            postBuild:
              substituteFrom:
                - kind: ConfigMap
                  name: cluster-settings
        target:
          group: kustomize.toolkit.fluxcd.io
          kind: Kustomization
          labelSelector: substitution.flux/disabled notin (true)
    """


def parent_with_patch(patch: str = PARENT_PATCH) -> str:
    """truxnell/home-cluster's cluster-apps: its patch gives every child Kustomization a substituteFrom."""
    return kustomization("cluster-apps", "./apps", FROM_VERSIONS.replace("mesh-version", "cluster-settings")) + \
        textwrap.indent(textwrap.dedent(patch).strip("\n"), "  ") + "\n"


def test_a_parents_patch_gives_its_children_their_variables(tmp_path):
    files = {
        "clusters/prod/apps.yaml": parent_with_patch(),
        "clusters/prod/settings.yaml": config_map("cluster-settings", "MESH_VERSION: 1.19.2"),
        "apps/mesh.yaml": kustomization("mesh", "./infra/mesh"),  # no postBuild of its own
        "infra/mesh/release.yaml": RELEASE.format(version="${MESH_VERSION}"),
        "infra/mesh/repository.yaml": REPOSITORY,
    }
    assert [p[:4] for p in pins(tree(tmp_path, files))] == [("mesh", "1.19.2", "clusters/prod/settings.yaml", 7)]
    # the selector leaves out a child labelled so: it keeps what its file says
    files["apps/mesh.yaml"] = files["apps/mesh.yaml"].replace(
        "namespace: flux-system\n", "namespace: flux-system\n  labels: {substitution.flux/disabled: 'true'}\n")
    assert [p[1] for p in pins(tree(tmp_path / "labelled", files))] == ["${MESH_VERSION}"]


def test_a_parents_patch_sets_a_childs_inline_variable_from_its_own(tmp_path):
    """joryirving/home-ops: `substitute: {CLUSTER: ${CLUSTER}}` patched into every child, from cluster-info."""
    patch = PARENT_PATCH.replace("""              substituteFrom:
                - kind: ConfigMap
                  name: cluster-settings""", """              substitute:
                version: v${MESH_VERSION}""").replace(
        "          labelSelector: substitution.flux/disabled notin (true)\n", "")
    files = {
        "clusters/prod/apps.yaml": parent_with_patch(patch),
        "clusters/prod/settings.yaml": config_map("cluster-settings", "MESH_VERSION: 1.19.2"),
        "apps/mesh.yaml": kustomization("mesh", "./infra/mesh", "substitute:\n  OTHER: x\n"),
        "infra/mesh/release.yaml": RELEASE.format(version="${version}"),
        "infra/mesh/repository.yaml": REPOSITORY,
    }
    # the value is the parent's variable, written in the parent's patch: edited where the ConfigMap sets it
    assert [p[:4] for p in pins(tree(tmp_path, files))] == [("mesh", "v1.19.2", "clusters/prod/settings.yaml", 7)]


def test_a_patch_kubehop_cannot_read_for_sure_leaves_the_childs_variables_unknown(tmp_path):
    json_patch = """
        patches:
          - patch: |-
              - op: add
                path: /spec/postBuild/substitute/version
                value: 1.16.1
            target:
              kind: Kustomization
        """
    files = {
        "clusters/prod/apps.yaml": parent_with_patch(json_patch),
        "clusters/prod/settings.yaml": config_map("cluster-settings", "MESH_VERSION: 1.19.2"),
        "apps/mesh.yaml": kustomization("mesh", "./infra/mesh", "substitute:\n  version: 1.17.0\n"),
        "infra/mesh/release.yaml": RELEASE.format(version="${version}"),
        "infra/mesh/repository.yaml": REPOSITORY,
    }
    assert [p[1] for p in pins(tree(tmp_path, files))] == ["${version}"]
    # budimanjojo/home-cluster: a kustomize component patches every Flux Kustomization it builds
    files["clusters/prod/apps.yaml"] = kustomization("cluster-apps", "./apps", FROM_VERSIONS.replace(
        "mesh-version", "cluster-settings"))
    files["apps/kustomization.yaml"] = "resources: [mesh.yaml]\ncomponents: [../components/vars]\n"
    files["components/vars/kustomization.yaml"] = """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        patches:
          - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
            patch: |-
              apiVersion: kustomize.toolkit.fluxcd.io/v1
              kind: Kustomization
              metadata: {name: not-used}
              spec:
                postBuild:
                  substituteFrom: [{kind: Secret, name: cluster-vars}]
        """
    assert [p[1] for p in pins(tree(tmp_path / "component", files))] == ["${version}"]


def test_objects_a_build_also_gives_are_not_read_twice(tmp_path):
    """onedr0p/bjw-s: `name: ${APP}` in an app folder kustomize builds; the build's objects (as written) are
    the file's, once, not new ones at no line."""
    from conftest import kustomize_or_skip
    from scanner.sources import collect

    kustomize_or_skip()
    release = textwrap.dedent(RELEASE).replace("metadata: {{name: mesh, namespace: net}}",
                                               "metadata:\n  name: {name}\n  namespace: net")
    two = release.format(name="${APP}", version="${version}") + "---\n" + \
        release.format(name="${APP}-b", version="1.17.0")
    root = tree(tmp_path, {
        "apps/net/mesh/ks.yaml": kustomization("mesh", "./apps/net/mesh/app",
                                               "substitute:\n  APP: mesh\n  version: 1.18.2\n"),
        "apps/net/mesh/app/kustomization.yaml": "resources: [release.yaml, repository.yaml]\n",
        "apps/net/mesh/app/release.yaml": two,
        "apps/net/mesh/app/repository.yaml": REPOSITORY,
    })
    releases = [(m.name, m.origin.line) for m in collect([str(root)]).manifests if m.kind == "HelmRelease"]
    assert releases == [("mesh", 1), ("mesh-b", 14)]


def test_files_read_by_worker_processes_are_filled_in_the_same(tmp_path, monkeypatch):
    """A filled-in object keeps its nodes (its file does not say what it holds): its file is read again by
    the scan's own process, not sent back from a worker without them."""
    from scanner.sources.files import parallel

    root = tree(tmp_path, istio_like())
    reports = []
    for threshold in (100, 2):  # in the scan's process, then in workers
        monkeypatch.setattr(parallel, "PARALLEL_FROM", threshold)
        reports.append((pins(root), scan_json(root)["findings"]))
    assert reports[0] == reports[1] and reports[0][0][0][1] == "1.18.2"


def test_an_image_tag_from_a_variable_is_pinned_where_it_is_set(tmp_path):
    deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: mesh, namespace: net}
        spec:
          template:
            spec:
              containers:
                - name: mesh
                  image: quay.io/example/mesh:${MESH_TAG}
        """
    root = tree(tmp_path, {"clusters/prod/apps.yaml": kustomization("apps", "./apps", FROM_VERSIONS),
                           "clusters/prod/settings.yaml": config_map("mesh-version", "MESH_TAG: v1.18.2"),
                           "apps/deploy.yaml": deployment})
    assert [p[:5] for p in pins(root)] == [("mesh", "v1.18.2", "clusters/prod/settings.yaml", 7, 13)]
    assert "image: quay.io/example/mesh:${MESH_TAG} at" in pins(root)[0][5]


def test_kustomizations_and_sources_of_every_shape_never_crash(tmp_path):
    shapes = {
        "a.yaml": kustomization("a", "./apps", "") + "  postBuild: just-text\n",
        "b.yaml": kustomization("b", "./apps", "substituteFrom: {kind: ConfigMap, name: x}\n"),
        "c.yaml": kustomization("c", "./apps", "substituteFrom: [7, null, {kind: ConfigMap}, {kind: Pod, name: p}]\n"),
        "d.yaml": kustomization("d", "./apps", "substitute: [a, b]\n"),
        "e.yaml": kustomization("e", "./apps", "substitute: {A: {nested: map}}\n"),
        "f.yaml": kustomization("f", "${PATH_VAR}", "substitute: {A: x}\n"),
        "g.yaml": kustomization("g", "./apps", "substitute: {A: x}\n") + "  patches:\n    - patch: 7\n"
                  "    - {patch: 'postBuild: [', target: {name: '(a+)+$'}}\n    - {patch: 'x', target: [1]}\n",
        "x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: flux-system}\ndata: [1, 2]\n",
        "apps/obj.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o, namespace: o}\ndata:\n  deep: '"
                         + "${A:=" * 40 + "}" * 40 + "'\n  odd: '${A:2} ${#A} ${A/x/y} $${A} ${ A}'\n",
    }
    report = scan_json(tree(tmp_path, shapes))
    assert report["exit_code"] in (0, 1)
    assert not [d for d in report["diagnostics"] if "kubehop could not" in d["message"]]
