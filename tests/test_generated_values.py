"""A Flux HelmRelease's valuesFrom ConfigMap that the kustomization beside it generates (issue 23:
onedr0p, joryirving, toboshii, carpenike, xUnholy home-ops trees): the chart renders with the generated
values (files, literals, envs) where Flux finds that ConfigMap under the release's name for it, and the
generator's files are read only inside the repository."""

from __future__ import annotations

import json

from conftest import invoke, write_tree as write

CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    # The values decide whether the chart renders an API 1.25 stopped serving: a finding says they were read.
    "charts/web/templates/pdb.yaml": """
        {{- if eq (.Values.color | default "" | toString) "red" }}
        apiVersion: policy/v1beta1
        kind: PodDisruptionBudget
        metadata:
          name: web
        spec:
          minAvailable: 1
        {{- end }}
        """,
}
RELEASE = """
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: GitRepository
    metadata: {name: home, namespace: flux-system}
    spec: {url: https://git.example.invalid/home.git, ref: {branch: main}}
    ---
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {name: web, namespace: apps}
    spec:
      chart:
        spec:
          chart: ./charts/web
          sourceRef: {kind: GitRepository, name: home, namespace: flux-system}
      valuesFrom:
        - {kind: ConfigMap, name: web-values, valuesKey: VALUES_KEY}
    """


def kustomization(generator: str, options: str = "generatorOptions:\n  disableNameSuffixHash: true\n",
                  resources: str = "./helmrelease.yaml") -> str:
    return f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: apps\n" \
           f"resources:\n  - {resources}\nconfigMapGenerator:\n  - name: web-values\n{generator}{options}"


def scan(tmp_path, files: dict[str, str], key: str = "web.yaml") -> tuple[list[str], list[str]]:
    """The rules found and the valuesFrom messages of a scan of the tree."""
    files = {**CHART, "app/helmrelease.yaml": RELEASE.replace("VALUES_KEY", key), **files}
    root = write(tmp_path / "repo", files)
    done = invoke("scan", "--target", "1.34", "--format", "json", ".", cwd=root)
    report = json.loads(done.stdout)
    assert "Traceback" not in done.stderr
    return ([f["rule"] for f in report["findings"]],
            [d["message"] for d in report["diagnostics"] if "valuesFrom" in d["message"]])


PDB = "policy/v1beta1/PodDisruptionBudget"


def test_a_generated_values_file_without_a_name_hash_is_the_release_s_values(tmp_path):
    """onedr0p/home-ops kube-prometheus-stack: files: [flux-metrics.yaml=./resources/flux-metrics.yaml]."""
    generator = "    files:\n      - web.yaml=./resources/web.yaml\n"
    rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization(generator),
                                  "app/resources/web.yaml": "color: red\n"})
    assert PDB in rules and said == []


def test_a_file_entry_without_a_key_is_keyed_by_its_name_and_the_generator_s_own_options_count(tmp_path):
    generator = "    files:\n      - values/web.yaml\n    options:\n      disableNameSuffixHash: true\n"
    rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization(generator, options=""),
                                  "app/values/web.yaml": "color: red\n"})
    assert PDB in rules and said == []


def test_literals_and_env_files_give_keys_too(tmp_path):
    generator = "    literals:\n      - 'web.yaml=color: red'\n"
    rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization(generator)})
    assert PDB in rules and said == []
    generator = "    envs:\n      - web.env\n"
    rules, said = scan(tmp_path / "env", {"app/kustomization.yaml": kustomization(generator),
                                          "app/web.env": "# the chart's values\nCOLOR\nweb.yaml=color: red\n"})
    assert PDB in rules and said == []


def test_a_name_hash_with_a_name_reference_configuration_is_read_and_without_one_is_said(tmp_path):
    """carpenike/k8s-gitops cilium: a hashed name, with kustomizeconfig.yaml's nameReference rewriting the
    release's valuesFrom; without one (the name gets a hash, the release keeps the bare name), Flux
    finds no ConfigMap of that name either."""
    files = {"app/web.yaml": "color: red\n", "app/kustomizeconfig.yaml": "nameReference:\n  - kind: ConfigMap\n"}
    configured = kustomization("    files:\n      - web.yaml\n", options="configurations:\n  - kustomizeconfig.yaml\n")
    rules, said = scan(tmp_path / "configured", {**files, "app/kustomization.yaml": configured})
    assert PDB in rules and said == []
    hashed = kustomization("    files:\n      - web.yaml\n", options="")
    rules, said = scan(tmp_path / "hashed", {**files, "app/kustomization.yaml": hashed})
    assert PDB not in rules
    assert said == ["Flux HelmRelease apps/web: valuesFrom ConfigMap web-values key web.yaml is not read: "
                    "./app/kustomization.yaml generates ConfigMap web-values with a name hash and no configurations "
                    "to rewrite the release's reference (nameReference): Flux finds no ConfigMap web-values either; "
                    "rendered without it"]


def test_a_key_the_generator_does_not_make_is_said(tmp_path):
    rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization("    files:\n      - web.yaml\n"),
                                  "app/web.yaml": "color: red\n"}, key="other.yaml")
    assert PDB not in rules
    assert said == ["Flux HelmRelease apps/web: valuesFrom ConfigMap web-values key other.yaml is not among the keys "
                    "./app/kustomization.yaml generates; rendered without it"]


def test_a_generator_of_another_kustomization_is_not_the_release_s(tmp_path):
    """The kustomization beside the release does not list its file: not the generator that goes with it."""
    rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization("    files:\n      - web.yaml\n",
                                                                          resources="./other.yaml"),
                                  "app/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
                                  "app/web.yaml": "color: red\n"})
    assert PDB not in rules and [m.split(" key ")[1] for m in said] == [
        "web.yaml is not in the scanned tree; rendered without it"]


def test_a_generator_file_outside_the_repository_is_never_read(tmp_path):
    (tmp_path / "secret.yaml").write_text("color: red\n")
    (tmp_path / "repo" / "app").mkdir(parents=True)
    (tmp_path / "repo" / "app" / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    for name, entry in (("dots", "web.yaml=../../secret.yaml"), ("link", "web.yaml=link.yaml"),
                        ("absolute", f"web.yaml={tmp_path / 'secret.yaml'}")):
        rules, said = scan(tmp_path, {"app/kustomization.yaml": kustomization(f"    files:\n      - {entry}\n")})
        assert PDB not in rules, name
        [message] = said
        assert "leaves the repository" in message and message.endswith("; not read; rendered without it"), name
