"""The manifests Talos applies (cluster.extraManifests) pin the components whose release URLs they are,
in a machine-configuration template kubehop reads line by line (`machineconfig.yaml.j2`,
`control-plane.yaml.tftpl`; rules/cluster-version.yaml machine_config_templates). kashalls/home-cluster and theepicsaxguy/homelab install the Gateway API CRDs
this way: Cilium's requirement of them was "not found in the tree"."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_tree
from scanner.model import Origin
from scanner.scan import scan
from scanner.sources.cluster.version_lines import template_manifest_urls
from scanner.versions import parse_minor
from test_requires_condition import REPOSITORY, release

TEMPLATE = """
    ---
    version: v1alpha1
    cluster:
      clusterName: main
      {% if ENV.IS_CONTROLPLANE %}
      extraManifests:
        - # renovate: datasource=github-releases depName=kubernetes-sigs/gateway-api
          https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.0.0/experimental-install.yaml
        - https://github.com/prometheus-operator/prometheus-operator/releases/download/v0.85.0/stripped-down-crds.yaml # renovate: x
      {% endif %}
      network:
        cni:
          name: none
      inlineManifests:
        - name: not-a-url
          contents: https://github.com/kubernetes-sigs/gateway-api/releases/download/v0.1.0/standard-install.yaml
    """


def components(root: Path, target: str = "1.29"):
    return scan([str(root)], target=parse_minor(target), current=parse_minor("1.27"))


def url_pins(result) -> set[tuple[str, str, int]]:
    return {(d.component, d.pin, d.origin.line) for state in result.timeline.states for d in state.detections
            if d.origin.path.endswith(("j2", "tftpl"))}


def test_template_urls_are_read_under_extra_manifests_only():
    text = "\n".join(line[4:] for line in TEMPLATE.splitlines())
    assert template_manifest_urls("t.yaml.j2", text) == [
        ("https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.0.0/experimental-install.yaml",
         Origin("t.yaml.j2", 9, 7)),
        ("https://github.com/prometheus-operator/prometheus-operator/releases/download/v0.85.0/stripped-down-crds.yaml",
         Origin("t.yaml.j2", 10, 7)),
    ]


@pytest.mark.parametrize("text", [
    "", "extraManifests: []\n", "cluster:\n  extraManifests:\n", "extraManifests:\n" + "- " * 5000,
    "cluster:\n  extraManifests:\n  # - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.0.0/x.yaml\n",
    "cluster:\n  extraManifests:\n    - {{ gateway_api_url }}\n",
])
def test_template_text_without_urls_gives_none(text):
    assert template_manifest_urls("t.yaml.j2", text) == []


def test_a_template_that_installs_gateway_api_satisfies_cilium_and_pins_it(tmp_path):
    root = write_tree(tmp_path, {"repo.yaml": REPOSITORY, "cilium.yaml": release("gatewayAPI:\n  enabled: true\n"),
                                 "talos/machineconfig.yaml.j2": TEMPLATE})
    result = components(root)
    assert [f for f in result.findings if f.rule_id == "component/cilium/requires"] == []
    assert url_pins(result) == {("gateway-api", "v1.0.0", 8), ("prometheus-operator", "v0.85.0", 9)}


def test_a_template_with_an_older_gateway_api_must_move_it_first(tmp_path):
    root = write_tree(tmp_path, {"repo.yaml": REPOSITORY, "cilium.yaml": release("gatewayAPI:\n  enabled: true\n"),
                                 "talos/control-plane.yaml.tftpl": TEMPLATE.replace("v1.0.0", "v0.8.1")})
    result = components(root)
    moves = [f for f in result.findings if f.rule_id == "component/gateway-api/required-move"]
    assert moves and {(f.origin.path.rpartition("/")[2], f.origin.line) for f in moves} == {("control-plane.yaml.tftpl", 8)}
    assert [f for f in result.findings if f.rule_id == "component/cilium/requires"] == []


MACHINE_CONFIG = """
    version: v1alpha1
    machine:
      type: controlplane
    cluster:
      extraManifests:
        - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.0.0/standard-install.yaml
        - https://raw.githubusercontent.com/alex1989hu/kubelet-serving-cert-approver/v0.6.10/deploy/ha-install.yaml
        - https://raw.githubusercontent.com/example/home-ops/main/talos/extras.yaml
    """

TALCONFIG = """
    clusterName: main
    talosVersion: v1.9.5
    kubernetesVersion: v1.30.4
    nodes:
      - hostname: cp1
        controlPlane: true
    controlPlane:
      patches:
        - |-
          cluster:
            extraManifests:
              - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.0.0/standard-install.yaml
              - https://raw.githubusercontent.com/alex1989hu/kubelet-serving-cert-approver/v0.6.10/deploy/ha-install.yaml
    """


def pins_in(result, name: str) -> set[tuple[str, str, int, str]]:
    return {(d.component, d.pin, d.origin.line, d.source) for state in result.timeline.states for d in state.detections
            if d.origin.path.endswith(name)}


@pytest.mark.parametrize("name, text, lines", [
    ("controlplane.yaml", MACHINE_CONFIG, (6, 7)),  # a whole machine config (talosctl gen config's output)
    ("talconfig.yaml", TALCONFIG, (12, 13)),  # a talhelper patch written as a YAML string
])
def test_a_machine_config_or_talhelper_patch_pins_what_talos_applies(tmp_path, name, text, lines):
    """toboshii/home-ops applies kubelet-serving-cert-approver from its talconfig.yaml's patches; xunholy/k8s-gitops
    its Gateway API and prometheus-operator CRDs from a generated machine config: before, neither was read."""
    root = write_tree(tmp_path, {"repo.yaml": REPOSITORY, "cilium.yaml": release("gatewayAPI:\n  enabled: true\n"),
                                 f"talos/{name}": text})
    result = components(root)
    assert pins_in(result, name) == {("gateway-api", "v1.0.0", lines[0], "url"),
                                     ("kubelet-serving-cert-approver", "v0.6.10", lines[1], "url")}  # no data: named
    assert [f for f in result.findings if f.rule_id == "component/cilium/requires"] == []
    no_data = [f for f in result.findings if f.rule_id == "component/kubelet-serving-cert-approver/no-data"]
    assert no_data and no_data[0].origin.line == lines[1]
    # A file of a branch (`main`) is no release: no pin, no component named after the tree's own repository.
    assert not any(d.component == "home-ops" for state in result.timeline.states for d in state.detections)
