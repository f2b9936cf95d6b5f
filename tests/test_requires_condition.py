"""A requirement that holds only under a condition is checked against the tree (issue 23, item 4).

Cilium needs the Gateway API CRDs only when its Helm values set gatewayAPI.enabled
(compat-matrix/cilium.yaml `when: {values: gatewayAPI.enabled}`): the finding fires only when a
release's values set it, never when they leave it off, and as a warning that says why when the
values cannot be read. Each installer's values are read the way it merges them. Real scans of small
trees shaped like the public ones (a Flux HelmRelease with a configMapGenerator's values, as
carpenike/k8s-gitops and H3mul/homelab-k3s-flux do; a Talos bootstrap kustomization's helmCharts
with a valuesFile elsewhere in the repository, as xUnholy/k8s-gitops does).
"""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest

from conftest import kustomize_or_skip
from scanner.components.values import ReleaseValues, Layer
from scanner.scan import scan
from scanner.versions import parse_minor

RULE = "component/cilium/requires"

REPOSITORY = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: cilium, namespace: flux-system}
spec: {url: "https://helm.cilium.io/"}
"""


def release(values: str = "", values_from: str = "") -> str:
    text = textwrap.dedent("""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: cilium, namespace: kube-system}
        spec:
          interval: 30m
          chart:
            spec:
              chart: cilium
              version: 1.14.5
              sourceRef: {kind: HelmRepository, name: cilium, namespace: flux-system}
        """)
    if values_from:
        text += "  valuesFrom:\n" + textwrap.indent(textwrap.dedent(values_from), "    ")
    if values:
        text += "  values:\n" + textwrap.indent(textwrap.dedent(values), "    ")
    return text


def write(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)  # a checkout of its own: files are read from its top
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def requires(root: Path, target: str = "1.29"):
    result = scan([str(root)], target=parse_minor(target), current=parse_minor("1.27"))
    return [f for f in result.findings if f.rule_id == RULE]


def test_values_that_enable_gateway_api_keep_the_finding(tmp_path):
    write(tmp_path, {"repo.yaml": REPOSITORY, "cilium.yaml": release("gatewayAPI:\n  enabled: true\n")})
    [finding] = requires(tmp_path)
    assert finding.severity == "warning"
    assert "requires gateway-api 1.0 when gatewayAPI.enabled is set" in finding.message
    assert "gatewayAPI.enabled is true in spec.values of HelmRelease kube-system/cilium" in finding.message
    assert finding.message.endswith("not found in the tree")
    assert finding.source_url.startswith("https://github.com/kubernetes-sigs/gateway-api/tree/main/conformance/")


@pytest.mark.parametrize("values", ["", "hubble:\n  enabled: true\n", "gatewayAPI:\n  enabled: false\n",
                                    "gatewayAPI: {enabled: null}\n", "gatewayAPI:\n  enabled: \"\"\n"])
def test_values_that_leave_gateway_api_off_give_no_finding(tmp_path, values):
    write(tmp_path, {"repo.yaml": REPOSITORY, "cilium.yaml": release(values)})
    assert requires(tmp_path) == []


def test_spec_values_win_over_values_from(tmp_path):
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cilium-values, namespace: kube-system}\n" \
             "data:\n  values.yaml: |\n    gatewayAPI:\n      enabled: true\n"
    off = release("gatewayAPI: {enabled: false}\n", "- {kind: ConfigMap, name: cilium-values}\n")
    write(tmp_path, {"repo.yaml": REPOSITORY, "config.yaml": config, "cilium.yaml": off})
    assert requires(tmp_path) == []
    write(tmp_path, {"cilium.yaml": release("hubble: {enabled: true}\n", "- {kind: ConfigMap, name: cilium-values}\n")})
    [finding] = requires(tmp_path)
    assert "gatewayAPI.enabled is true in ConfigMap" in finding.message


def test_values_from_a_generated_config_map_are_read(tmp_path):
    """The layout of carpenike/k8s-gitops: a configMapGenerator makes the values ConfigMap (its name
    gets kustomize's hash), the HelmRelease names it without the hash; the values are read from the file
    the generator names (a value's line is there)."""
    kustomize_or_skip()
    write(tmp_path, {
        "app/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                  "namespace: kube-system\nresources: [repo.yaml, helmrelease.yaml]\n"
                                  "configMapGenerator:\n  - name: cilium-values\n    files: [values.yaml=values.yaml]\n",
        "app/repo.yaml": REPOSITORY,
        "app/helmrelease.yaml": release("hubble: {enabled: true}\n", "- {kind: ConfigMap, name: cilium-values}\n"),
        "app/values.yaml": "kubeProxyReplacement: true\ngatewayAPI:\n  enabled: true\n"})
    [finding] = requires(tmp_path)
    # named as every report names a file: from the repository's top, not as the scan was given it
    assert "gatewayAPI.enabled is true in values file app/values.yaml" in finding.message
    (tmp_path / "app" / "values.yaml").write_text("kubeProxyReplacement: true\n")
    assert requires(tmp_path) == []


def test_values_that_cannot_be_read_give_a_warning_that_says_why(tmp_path):
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: cilium-values, namespace: kube-system}\n" \
             "stringData:\n  values.yaml: ENC[AES256_GCM,data:abc=]\nsops:\n  version: 3.8.1\n"
    write(tmp_path, {"repo.yaml": REPOSITORY, "secret.yaml": secret,
                     "cilium.yaml": release("hubble: {enabled: true}\n", "- {kind: Secret, name: cilium-values}\n")})
    [finding] = requires(tmp_path)
    assert finding.severity == "warning"
    assert "when gatewayAPI.enabled is set, which kubehop cannot tell" in finding.message
    assert "valuesFrom Secret kube-system/cilium-values is encrypted (SOPS)" in finding.message
    (tmp_path / "secret.yaml").unlink()
    [finding] = requires(tmp_path)
    assert "valuesFrom Secret kube-system/cilium-values is not in the tree" in finding.message


def test_a_plain_secret_is_read(tmp_path):
    encoded = base64.b64encode(b"gatewayAPI:\n  enabled: true\n").decode()
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: cilium-values, namespace: kube-system}\n" \
             f"data:\n  values.yaml: {encoded}\n"
    write(tmp_path, {"repo.yaml": REPOSITORY, "secret.yaml": secret,
                     "cilium.yaml": release("", "- {kind: Secret, name: cilium-values}\n")})
    [finding] = requires(tmp_path)
    assert "gatewayAPI.enabled is true in Secret" in finding.message


def test_a_kustomization_values_file_is_read_inside_the_repository_only(tmp_path):
    """The layout of xUnholy/k8s-gitops: the Talos bootstrap kustomization names the values file of
    the Flux app three folders up."""
    entry = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n"
             "  - {name: cilium, repo: 'https://helm.cilium.io/', version: 1.14.5, releaseName: cilium,\n"
             "     namespace: kube-system, valuesFile: ../../apps/cilium/values.yaml}\n")
    repo = write(tmp_path / "repo", {"talos/cni/kustomization.yaml": entry,
                                     "apps/cilium/values.yaml": "gatewayAPI:\n  enabled: false\n"})
    assert requires(repo) == []
    (repo / "apps" / "cilium" / "values.yaml").write_text("gatewayAPI:\n  enabled: true\n")
    [finding] = requires(repo)
    assert "gatewayAPI.enabled is true in values file" in finding.message
    (repo / "talos" / "cni" / "kustomization.yaml").write_text(entry.replace("../../apps", "../../../outside"))
    (tmp_path / "outside" / "cilium").mkdir(parents=True)
    (tmp_path / "outside" / "cilium" / "values.yaml").write_text("gatewayAPI:\n  enabled: true\n")
    [finding] = requires(repo)
    assert "leaves the repository" in finding.message and "not read" in finding.message and "cannot tell" in finding.message


def test_inline_values_of_a_kustomization_win_over_its_values_file(tmp_path):
    entry = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n"
             "  - name: cilium\n    repo: https://helm.cilium.io/\n    version: 1.14.5\n"
             "    valuesFile: values.yaml\n    valuesInline:\n      gatewayAPI: {enabled: false}\n")
    write(tmp_path, {"kustomization.yaml": entry, "values.yaml": "gatewayAPI:\n  enabled: true\n"})
    assert requires(tmp_path) == []


def test_argo_cd_parameters_and_values_object(tmp_path):
    app = textwrap.dedent("""\
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: cilium, namespace: argocd}
        spec:
          destination: {namespace: kube-system, server: https://kubernetes.default.svc}
          project: default
          source:
            chart: cilium
            repoURL: https://helm.cilium.io/
            targetRevision: 1.14.5
            helm:
              valuesObject:
                gatewayAPI: {enabled: true}
        """)
    write(tmp_path, {"app.yaml": app})
    [finding] = requires(tmp_path)
    assert "helm.valuesObject of Application argocd/cilium" in finding.message
    write(tmp_path, {"app.yaml": app + "      parameters:\n        - {name: gatewayAPI.enabled, value: 'false'}\n"})
    assert requires(tmp_path) == []
    write(tmp_path, {"app.yaml": app.replace("valuesObject:\n        gatewayAPI: {enabled: true}",
                                             "valueFiles: [values-prod.yaml]")})
    [finding] = requires(tmp_path)
    assert "valueFiles of Application argocd/cilium (values-prod.yaml) are read by Argo CD" in finding.message


def test_a_k3s_helm_chart_and_its_config(tmp_path):
    chart = textwrap.dedent("""\
        apiVersion: helm.cattle.io/v1
        kind: HelmChart
        metadata: {name: cilium, namespace: kube-system}
        spec:
          repo: https://helm.cilium.io/
          chart: cilium
          version: 1.14.5
          valuesContent: |-
            gatewayAPI:
              enabled: false
        """)
    config = textwrap.dedent("""\
        apiVersion: helm.cattle.io/v1
        kind: HelmChartConfig
        metadata: {name: cilium, namespace: kube-system}
        spec:
          valuesContent: |-
            gatewayAPI:
              enabled: true
        """)
    write(tmp_path, {"chart.yaml": chart})
    assert requires(tmp_path) == []
    write(tmp_path, {"config.yaml": config})
    [finding] = requires(tmp_path)
    assert "valuesContent of HelmChartConfig kube-system/cilium" in finding.message


def test_a_pin_without_values_is_a_warning_that_says_so(tmp_path):
    write(tmp_path, {"defaults.yaml": "cilium_version: 1.14.5\n"})
    [finding] = requires(tmp_path)
    assert "cannot tell (variable cilium_version gives the chart no values kubehop reads)" in finding.message


@pytest.mark.parametrize("layers, expected", [
    ((), False),
    ((Layer("a", {"x": {"y": True}}),), True),
    ((Layer("a", {"x": {"y": True}}), Layer("b", {"x": {"y": False}})), False),
    ((Layer("a", {"x": {"y": True}}), Layer("b", unread="b is gone")), None),
    ((Layer("b", unread="b is gone"), Layer("a", {"x": {"y": True}})), True),
    ((Layer("a", {"x": {"y": "false"}}, typed=False),), False),
    ((Layer("a", {"x": {"y": "false"}}),), True),  # a template reads the string "false" as true
    ((Layer("a", {"x": {"y": "${ENABLE}"}}),), None),
])
def test_setting_reads_the_last_layer_that_decides(layers, expected):
    assert ReleaseValues(layers).setting("x.y")[0] is expected
