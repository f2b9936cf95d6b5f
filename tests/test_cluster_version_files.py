"""The cluster's minor from a Taskfile's KUBERNETES_VERSION and an OpenTofu/Terraform .tfvars (issue 23:
mmalyska/home-ops `.taskfiles/talos/Taskfile.yaml`, theepicsaxguy/homelab `tofu/config.auto.tfvars`), as
rules/cluster-version.yaml says; a Talos, client or untracked version is not the cluster's."""

from __future__ import annotations

import json

import pytest

from conftest import invoke, write_tree as write
from scanner.sources.cluster.tfvars import tfvars_versions

TASKFILE = """
    ---
    version: "3"
    vars:
      # renovate: datasource=docker depName=ghcr.io/siderolabs/installer
      TALOS_VERSION: "v1.13.8"
      # renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet
      KUBERNETES_VERSION: "v1.35.6"
    tasks:
      upgrade-k8s:
        cmds:
          - talosctl upgrade-k8s --to {{ .KUBERNETES_VERSION }}
    """


def current(root) -> tuple[str | None, str | None]:
    """The minor `scan` starts from, and where it says it read it."""
    done = invoke("scan", "--target", "1.36", "--no-render", "--format", "json", ".", cwd=root)
    report = json.loads(done.stdout)
    said = [line for line in report["notices"] if "taken from" in line]
    return report["from"], said[0].split("taken from ", 1)[1] if said else None


def test_a_taskfile_kubernetes_version_renovate_tracks_is_the_current_minor(tmp_path):
    root = write(tmp_path, {".taskfiles/talos/Taskfile.yaml": TASKFILE})
    assert current(root) == ("1.35", "the tree's version variables: variable KUBERNETES_VERSION v1.35.6 at "
                                     ".taskfiles/talos/Taskfile.yaml:7")
    plan = json.loads(invoke("plan", "--target", "1.36", "--no-render", "--format", "json", ".", cwd=root).stdout)
    assert plan["from"] == "1.35"


@pytest.mark.parametrize("text", [
    # xUnholy/k8s-gitops: a Sidero bootstrap's env, kept by no one (its Talos nodes run a newer kubelet)
    'version: "3"\nenv:\n  TALOS_VERSION: "v1.0.5"\n  KUBERNETES_VERSION: "v1.23.1"\n',
    # tracked, but as another image's version
    'version: "3"\nvars:\n  # renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet-helper\n'
    '  KUBERNETES_VERSION: "v1.23.1"\n',
    # a client's version, tracked
    'version: "3"\nvars:\n  # renovate: datasource=github-releases depName=kubernetes/kubernetes\n  KUBECTL_VERSION: "v1.23.1"\n',
    # a template, not a version
    'version: "3"\nvars:\n  KUBERNETES_VERSION: \'{{ .K8S | default "v1.23.1" }}\' # renovate: depName=kubernetes/kubernetes\n',
])
def test_untracked_client_and_templated_taskfile_versions_are_not_the_cluster_s(tmp_path, text):
    root = write(tmp_path, {"Taskfile.yaml": text})
    assert current(root) == (None, None)


def test_the_same_variable_in_a_file_that_is_no_taskfile_is_not_read(tmp_path):
    root = write(tmp_path, {"hack/settings.yaml": TASKFILE})
    assert current(root) == (None, None)


def test_a_tfvars_versions_kubernetes_is_the_current_minor_for_scan_and_plan(tmp_path):
    root = write(tmp_path, {"tofu/config.auto.tfvars": """
        proxmox_cluster = "host3"  # a comment
        /* versions = { kubernetes = "1.20.0" } */
        versions = {
          talos      = "v1.12.5"
          kubernetes = "1.35.2"
        }
        kubernetes_image = {
          update_version = "1.36.1" # renovate: github-releases=kubernetes/kubernetes versioning=loose
        }
        """})
    assert current(root) == ("1.35", "the tree's version variables: variable versions.kubernetes 1.35.2 at "
                                     "tofu/config.auto.tfvars:5")
    plan = json.loads(invoke("plan", "--target", "1.36", "--no-render", "--format", "json", ".", cwd=root).stdout)
    assert (plan["from"], plan["from_source"]["file"], plan["from_source"]["line"]) == (
        "1.35", "tofu/config.auto.tfvars", 5)


def test_a_tfvars_talos_cluster_config_kubernetes_version_is_the_current_minor(tmp_path):
    # vehagn/homelab's tofu/kubernetes/talos_cluster.auto.tfvars (a heredoc and a nested map around it)
    root = write(tmp_path, {"tofu/kubernetes/talos_cluster.auto.tfvars": """
        talos_cluster_config = {
          name = "talos"
          # talos_machine_config_version = "v1.9.2"
          kubernetes_version = "v1.35.3" # renovate: github-releases=kubernetes/kubernetes
          cilium = {
            values_file_path = "../../k8s/infra/network/cilium/values.yaml"
          }
          gateway_api_version = "v1.6.1" # renovate: github-releases=kubernetes-sigs/gateway-api
          kubelet = <<-EOT
            extraArgs:
              kubernetes_version: v1.20.0
          EOT
        }
        """})
    assert current(root) == ("1.35", "the tree's version variables: variable talos_cluster_config.kubernetes_version "
                                     "v1.35.3 at tofu/kubernetes/talos_cluster.auto.tfvars:4")


@pytest.mark.parametrize("text", [
    'kubernetes_version = "1.33.2"\n',  # no rule names it (not seen in a public tree kubehop reads)
    'versions = {\n  kubernetes = var.k8s\n}\n',  # an expression
    'versions = {\n  kubernetes = "${local.k8s}"\n}\n',  # a template
    'clusters = [\n  { versions = { kubernetes = "1.30.0" } },\n]\n',  # inside a list: no path from the top
    'other = {\n  versions = {\n    kubernetes = "1.30.0"\n  }\n}\n',  # another path
    'doc = <<EOT\nversions = {\n  kubernetes = "1.30.0"\n}\nEOT\n',  # a heredoc's text
    'client = {\n  kubectl = "1.30.0"\n}\n',
])
def test_tfvars_assignments_that_are_not_the_cluster_version_give_nothing(text):
    assert tfvars_versions("x.tfvars", text) == []


@pytest.mark.parametrize("text", [
    'versions = {\n  kubernetes = "1.3', 'versions = {{{{{{{{ "', "/* never closed", '"\\', "<<", "=" * 5000,
    "versions = " + "{" * 10000 + '\nkubernetes = "1.30.0"\n'
])
def test_hostile_tfvars_text_gives_no_pin_and_no_exception(text):
    assert tfvars_versions("x.tfvars", text) == []


def test_a_renovate_tracked_k8s_version_in_a_talos_versions_file_is_the_current_minor(tmp_path):
    # bjw-s-labs/home-ops kubernetes/talos/version.yaml
    root = write(tmp_path, {"kubernetes/talos/version.yaml": """
        ---
        # renovate: datasource=custom.talos-factory depName=siderolabs/talos
        talos_version: v1.14.0-rc.1
        # renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet
        k8s_version: v1.35.2
        """})
    assert current(root) == ("1.35", "the tree's version variables: variable k8s_version v1.35.2 at "
                                     "kubernetes/talos/version.yaml:5")


def test_an_untracked_k8s_version_is_not_read(tmp_path):
    root = write(tmp_path, {"talos/version.yaml": "talos_version: v1.14.0\nk8s_version: v1.30.2\n"})
    assert current(root) == (None, None)


def test_a_tracked_kubernetes_version_in_an_env_file_is_the_current_minor(tmp_path):
    # kashalls/home-cluster talos/talos.env
    root = write(tmp_path, {"talos/talos.env": """
        # renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet
        KUBERNETES_VERSION=v1.34.0
        # renovate: datasource=docker depName=ghcr.io/siderolabs/installer
        TALOS_VERSION=v1.10.7
        """})
    assert current(root) == ("1.34", "the tree's version variables: variable KUBERNETES_VERSION v1.34.0 at "
                                     "talos/talos.env:2")


@pytest.mark.parametrize("text", [
    "KUBERNETES_VERSION=v1.34.0\n",  # no Renovate comment: maybe a leftover
    "# renovate: datasource=docker depName=ghcr.io/siderolabs/installer\nKUBERNETES_VERSION=v1.34.0\n",
    "# renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet\nKUBECTL_VERSION=v1.34.0\n",
    "# renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet\nKUBERNETES_VERSION=$(cat version)\n",
])
def test_env_lines_that_are_not_a_tracked_cluster_version_give_nothing(tmp_path, text):
    root = write(tmp_path, {"talos/talos.env": text})
    assert current(root) == (None, None)


MACHINECONFIG_J2 = """
    ---
    version: v1alpha1
    machine:
      ca:
        crt: op://Homelab/talos/TALOS_CERTS_OS_CRT
        {% if ENV.IS_CONTROLPLANE %}
        key: op://Homelab/talos/TALOS_CERTS_OS_KEY
        {% endif %}
      install:
        image: factory.talos.dev/metal-installer/07fc5455:v1.13.2
      kubelet:
        defaultRuntimeSeccompProfileEnabled: true
        image: ghcr.io/siderolabs/kubelet:v1.35.4
    """


def test_the_kubelet_image_of_a_talos_machine_config_template_is_the_current_minor(tmp_path):
    # ahinko/home-ops kubernetes/talos/machineconfig.yaml.j2 (minijinja, rendered by `just template`)
    root = write(tmp_path, {"kubernetes/talos/machineconfig.yaml.j2": MACHINECONFIG_J2})
    assert current(root) == ("1.35", "the tree's version variables: kubelet image ghcr.io/siderolabs/kubelet "
                                     "v1.35.4 at kubernetes/talos/machineconfig.yaml.j2:13")
    plan = json.loads(invoke("plan", "--target", "1.36", "--no-render", "--format", "json", ".", cwd=root).stdout)
    assert (plan["from"], plan["from_source"]["file"], plan["from_source"]["line"]) == (
        "1.35", "kubernetes/talos/machineconfig.yaml.j2", 13)


def test_an_upgrade_order_outranks_a_template_kubelet_image(tmp_path):
    root = write(tmp_path, {"talos/machineconfig.yaml.j2": MACHINECONFIG_J2, "upgrades/kubernetes.yaml": """
        apiVersion: tuppr.home-operations.com/v1alpha1
        kind: KubernetesUpgrade
        metadata:
          name: kubernetes
        spec:
          kubernetes:
            version: v1.36.4
        """})
    assert current(root)[0] == "1.36"


@pytest.mark.parametrize("line", [
    "    image: ghcr.io/siderolabs/kubelet:{{ ENV.KUBERNETES_VERSION }}",  # a template expression
    "    image: ghcr.io/siderolabs/installer:v1.35.4",  # another image
    "    # image: ghcr.io/siderolabs/kubelet:v1.30.0",  # a comment
])
def test_template_lines_that_name_no_kubelet_version_give_nothing(tmp_path, line):
    root = write(tmp_path, {"talos/machineconfig.yaml.j2": f"machine:\n  kubelet:\n{line}\n"})
    assert current(root) == (None, None)
