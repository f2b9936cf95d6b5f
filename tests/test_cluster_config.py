"""Cluster configuration in the tree, checked per hop (issue 25): the flags, feature gates, admission
plugins, configuration versions and scheduler plugins a K3s/RKE2 config, an Ansible inventory, a
talconfig.yaml, a kubeadm configuration or a component configuration file hands the control plane
and the nodes, each at its line, at the hop whose minor refuses it; the plan carries them in the
same windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, invoke

TREE = FIXTURES / "cluster-config" / "tree"
BROKEN = FIXTURES / "cluster-config" / "broken"


def scan_json(*args: str) -> dict:
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", *args)
    assert done.returncode in (0, 1, 3), done.stderr
    return json.loads(done.stdout)


def found(report: dict, prefix: str = "cluster-config/") -> set[tuple]:
    return {(f["rule"].removeprefix(prefix), f["breaks_in"], in_tree(f["file"]), f["line"], f["object"]["name"])
            for f in report["findings"] if f["rule"].startswith(prefix)}


def in_tree(path: str) -> str:
    return (REPO / path).resolve().relative_to(TREE).as_posix()


def test_every_setting_of_the_tree_that_a_hop_refuses_is_reported_at_its_line_and_hop():
    report = scan_json("--target", "1.36", str(TREE))
    assert report["from"] == "1.26"  # the tree's talconfig and k3s variables
    assert found(report) == {
        # K3s config.yaml and config.yaml.d/
        ("admission-plugin-removed", "1.25", "k3s/config.yaml", 11, "PodSecurityPolicy"),
        ("feature-gate-removed", "1.27", "k3s/config.yaml", 12, "EphemeralContainers"),
        ("feature-gate-locked", "1.33", "k3s/config.yaml", 12, "AnyVolumeDataSource"),
        ("flag-removed", "1.27", "k3s/config.yaml", 16, "--pod-eviction-timeout"),
        ("setting-deprecated", "1.35", "k3s/config.yaml", 18, "mode: ipvs"),
        ("feature-gate-locked", "1.33", "k3s/config.yaml.d/20-kubelet.yaml", 2, "TopologyAwareHints"),
        # Ansible: a role's k3s_server dict, and k3s flags in extra_server_args
        ("flag-removed", "1.24", "ansible/inventory/group_vars/k3s_cluster/k3s.yml", 9, "--network-plugin"),
        ("feature-gate-removed", "1.32", "ansible/inventory/group_vars/k3s_cluster/k3s.yml", 11, "ServerSideApply"),
        # talhelper: an RFC 6902 patch string, a strategic-merge patch string, an inline patch, a patch file
        ("feature-gate-removed", "1.28", "talos/talconfig.yaml", 19, "MixedProtocolLBService"),
        ("setting-deprecated", "1.35", "talos/talconfig.yaml", 24, "mode: ipvs"),
        ("config-version-removed", "1.29", "talos/talconfig.yaml", 27, "kube-scheduler"),
        ("scheduler-plugin-removed", "1.32", "talos/talconfig.yaml", 34, "EBSLimits"),
        ("feature-gate-locked", "1.34", "talos/talconfig.yaml", 43, "NodeSwap"),
        ("feature-gate-removed", "1.31", "talos/patches/kubelet.yaml", 1, "ReadWriteOncePod"),
        # kubeadm, with the KubeletConfiguration and KubeProxyConfiguration beside it
        ("feature-gate-removed", "1.27", "kubeadm/kubeadm-config.yaml", 8, "CSIMigration"),
        ("flag-removed", "1.27", "kubeadm/kubeadm-config.yaml", 11, "--enable-taint-manager"),
        ("flag-removed", "1.35", "kubeadm/kubeadm-config.yaml", 18, "--pod-infra-container-image"),
        ("feature-gate-locked", "1.30", "kubeadm/kubeadm-config.yaml", 25, "PodSchedulingReadiness"),
        ("setting-deprecated", "1.35", "kubeadm/kubeadm-config.yaml", 29, "mode: ipvs"),
        # a K3s/RKE2 containerd template without its config-v3 successor
        ("node-file", "1.32", "agent/config.toml.tmpl", 1, "config.toml.tmpl"),
    }


def test_a_locked_gate_set_to_its_default_warns_and_set_against_it_blocks():
    findings = {f["object"]["name"]: f for f in scan_json("--target", "1.36", str(TREE))["findings"]
                if f["rule"] == "cluster-config/feature-gate-locked"}
    assert findings["TopologyAwareHints"]["severity"] == "warning"  # =true, locked to true
    assert findings["AnyVolumeDataSource"]["severity"] == "error"  # =false, locked to true
    assert "refuses to start when it is set to false" in findings["AnyVolumeDataSource"]["message"]
    assert findings["PodSchedulingReadiness"]["severity"] == "error"
    assert "projected" not in findings["PodSchedulingReadiness"]["message"]  # the lock is its page's


def test_a_removal_announced_before_its_release_is_shown_as_projected():
    (removal,) = [f for f in scan_json("--target", "1.38", str(TREE))["findings"]
                  if f["rule"] == "cluster-config/feature-gate-removed" and f["object"]["name"] == "PodSchedulingReadiness"]
    assert removal["breaks_in"] == "1.38"
    assert "removed in 1.38 (projected: announced before 1.38's release" in removal["message"]
    # the removal cites its own source (the 1.38 pre-release changelog), not the gate page that dates the lock
    assert removal["source"].startswith("https://github.com/kubernetes/kubernetes/blob/")
    assert removal["source"].split("#")[0].endswith("/CHANGELOG/CHANGELOG-1.38.md")


K3S_137 = """\
kubelet-arg:
  - feature-gates=PreventStaticPodAPIReferences=false,SidecarContainers=true
  - containerd=/run/k3s/containerd/containerd.sock
kube-apiserver-arg:
  - feature-gates=WatchCacheInitializationPostStartHook=false
kube-controller-manager-arg:
  - concurrent-service-syncs=5
"""


def test_what_1_37_refuses_is_projected_until_a_post_release_source_confirms_it(tmp_path):
    """1.37's published notes could not be read (rules/hop-notes/kubernetes.yaml): what its release
    announcement confirms is reported plainly, what rests on its pre-release notes stays projected."""
    (tmp_path / "config.yaml").write_text(K3S_137)
    assert not [f for f in scan_json("--from", "1.36", "--target", "1.36", str(tmp_path))["findings"]
                if f["rule"].startswith("cluster-config/")]
    findings = {f["object"]["name"]: f for f in scan_json("--from", "1.36", "--target", "1.37", str(tmp_path))["findings"]
                if f["rule"].startswith("cluster-config/")}
    assert {name: (f["rule"].removeprefix("cluster-config/"), f["line"], f["breaks_in"], "(projected" in f["message"])
            for name, f in findings.items()} == {
        "PreventStaticPodAPIReferences": ("feature-gate-removed", 2, "1.37", False),
        "WatchCacheInitializationPostStartHook": ("feature-gate-locked", 5, "1.37", False),
        "SidecarContainers": ("feature-gate-removed", 2, "1.37", True),
        "--containerd": ("flag-removed", 3, "1.37", True),
        "--concurrent-service-syncs": ("flag-removed", 7, "1.37", True),
    }
    assert findings["PreventStaticPodAPIReferences"]["source"].startswith("https://kubernetes.io/blog/2026/08/26/")
    assert all(f["severity"] == "error" for f in findings.values())


def test_gates_not_yet_refused_at_the_target_and_gates_kubehop_does_not_know_are_quiet():
    report = scan_json("--target", "1.29", str(TREE))
    names = {f["object"]["name"] for f in report["findings"] if f["rule"].startswith("cluster-config/feature-gate")}
    assert names == {"EphemeralContainers", "CSIMigration", "MixedProtocolLBService"}  # not the 1.30+ ones
    assert not any("GracefulNodeShutdown" in f["message"] or "SidecarContainers" in f["message"]
                   for f in report["findings"])  # still beta / not removed: nothing to say


def test_the_message_names_the_component_the_value_the_stages_and_how_the_tree_gives_it():
    (finding,) = [f for f in scan_json("--target", "1.36", str(TREE))["findings"]
                  if f["object"]["name"] == "EphemeralContainers"]
    assert finding["message"].startswith("kube-apiserver --feature-gates=EphemeralContainers=true: the feature gate "
                                         "(alpha 1.16-1.22, beta 1.23-1.24, GA 1.25-1.26) is removed in 1.27")
    # where the tree gives it, then (as for every finding) the fix, which has its own field too
    assert finding["message"].endswith("(K3s/RKE2 kube-apiserver-arg); remove the gate before the hop")
    assert finding["fix"] == "remove the gate before the hop"
    assert finding["source"].startswith("https://github.com/kubernetes/website/")
    assert finding["severity"] == "error"


def test_the_plan_carries_the_configuration_findings_in_the_window_of_their_hop():
    done = invoke("plan", "--no-config", "--no-render", "--format", "json", "--target", "1.36", str(TREE))
    assert done.returncode == 1, done.stderr
    plan = json.loads(done.stdout)
    in_windows = [(w["to"], f["rule"], f["object"]) for w in plan["windows"] for f in w["findings"]
                  if f["rule"].startswith("cluster-config/")]
    by_window = set(in_windows)
    assert ("1.27", "cluster-config/feature-gate-removed", "FeatureGate EphemeralContainers") in by_window
    assert ("1.32", "cluster-config/scheduler-plugin-removed", "SchedulerPlugin EBSLimits") in by_window
    # already broken at 1.26 (removed in 1.24): the first window
    assert ("1.27", "cluster-config/flag-removed", "kubelet --network-plugin") in by_window
    scan = scan_json("--target", "1.36", str(TREE))
    assert len(in_windows) == len(found(scan))
    assert (plan["blockers"], plan["warnings"]) == (scan["summary"]["errors"], scan["summary"]["warnings"])


def test_a_patch_kubehop_cannot_read_and_a_gate_list_it_cannot_split_are_named_with_the_reason():
    report = scan_json("--target", "1.36", str(BROKEN))
    assert report["exit_code"] == 3
    problems = {(d["level"], d["line"], d["message"].split(":")[0]) for d in report["diagnostics"]}
    assert ("error", 13, "talconfig controlPlane.patches[0]") in problems
    (gate_problem,) = [d for d in report["diagnostics"] if d["level"] == "warning"]
    assert "'NoValueGate' has no true or false value" in gate_problem["message"]
    # the rest of the same patch is still read
    assert {f["object"]["name"] for f in report["findings"]} == {"EphemeralContainers"}


@pytest.mark.parametrize("text, expected", [
    # kubeadm v1beta4: extraArgs is a list of {name, value}
    ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n"
     "    - name: enable-admission-plugins\n      value: NodeRestriction,SecurityContextDeny\n",
     {("admission-plugin-removed", "1.30", 5, "SecurityContextDeny")}),
    # k3d's cluster configuration carries K3s flags
    ("apiVersion: k3d.io/v1alpha5\nkind: Simple\nmetadata:\n  name: dev\noptions:\n  k3s:\n    extraArgs:\n"
     "      - arg: --kubelet-arg=feature-gates=ExpandCSIVolumes=true\n        nodeFilters: [server:*]\n",
     {("feature-gate-removed", "1.27", 8, "ExpandCSIVolumes")}),
    # an RKE2 config: the same keys, a single string instead of a list
    ("kube-scheduler-arg: feature-gates=MinDomainsInPodTopologySpread=true\n",
     {("feature-gate-removed", "1.32", 1, "MinDomainsInPodTopologySpread")}),
    # --runtime-config naming a built-in group version no minor serves any more (v1alpha1 flowcontrol: 1.29)
    ("kube-apiserver-arg:\n  - runtime-config=flowcontrol.apiserver.k8s.io/v1alpha1=true,api/all=true\n",
     {("runtime-config-removed", "1.21", 2, "flowcontrol.apiserver.k8s.io/v1alpha1")}),
    ("kube-apiserver-arg:\n  - runtime-config=admissionregistration.k8s.io/v1beta1=true\n", set()),  # still served
    # Talos with kube-proxy disabled: its flags go nowhere
    ("cluster:\n  proxy:\n    disabled: true\n    extraArgs:\n      feature-gates: EphemeralContainers=true\n", set()),
    # a Pod's own args are the workload's, not the cluster's
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: x\n"
     "      args: [--kubelet-arg=feature-gates=EphemeralContainers=true]\n", set()),
])
def test_each_way_a_tree_hands_flags_to_a_component(tmp_path, text, expected):
    (tmp_path / "config.yaml").write_text(text)
    report = scan_json("--from", "1.26", "--target", "1.36", str(tmp_path))
    assert {(f["rule"].removeprefix("cluster-config/"), f["breaks_in"], f["line"], f["object"]["name"])
            for f in report["findings"] if f["rule"].startswith("cluster-config/")} == expected


def test_the_gate_data_holds_together():
    """removed_in is the minor after the last stage's `to` (the page's "last release in which you can
    still use a feature gate"); a locked gate's last stage is GA without an end; every fact has a source."""
    from scanner import data

    gates = data.load("rules/cluster-config/feature-gates.yaml")["gates"]
    assert len({g["name"] for g in gates}) == len(gates)
    for gate in gates:
        stages = gate.get("stages", [])
        assert gate["source"].startswith("https://")
        if "removed_in" in gate and stages and gate.get("status") != "projected":
            major, minor = stages[-1]["to"].split(".")
            assert gate["removed_in"] == f"{major}.{int(minor) + 1}", gate["name"]
        if "locked_in" in gate and stages:
            assert stages[-1]["stage"] == "stable" and "to" not in stages[-1] and \
                stages[-1]["from"] == gate["locked_in"], gate["name"]


def test_a_quoted_patch_string_points_at_the_string_and_a_literal_block_at_its_own_line(tmp_path):
    (tmp_path / "talconfig.yaml").write_text(
        "clusterName: c\ntalosVersion: v1.6.0\nnodes: []\nworker:\n  patches:\n"
        "    - \"machine:\\n  kubelet:\\n    extraArgs:\\n      feature-gates: TTLAfterFinished=true\\n\"\n"
        "    - |\n\n      machine:\n        kubelet:\n          extraArgs:\n"
        "            feature-gates: IndexedJob=true\n")
    report = scan_json("--from", "1.24", "--target", "1.36", str(tmp_path))
    assert {(f["object"]["name"], f["line"], f["column"]) for f in report["findings"]} == {
        ("TTLAfterFinished", 6, 7),  # the quoted string itself
        ("IndexedJob", 12, 13),  # the key in the block, a blank line after its indicator
    }


def test_excluded_files_and_links_out_of_the_tree_are_not_read_for_tools(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".tool-versions").write_text("kubectl 1.20.0\n")
    tree = tmp_path / "tree"
    (tree / "vendor-ish").mkdir(parents=True)
    (tree / ".tool-versions").symlink_to(outside / ".tool-versions")
    (tree / "vendor-ish" / "versions.env").write_text("KUBECTL_VERSION=1.20.0\n")
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--from", "1.30", "--target", "1.33",
                  "--exclude", "**/vendor-ish", str(tree))
    assert json.loads(done.stdout)["findings"] == []


def test_every_finding_carries_its_instruction_in_fix_and_not_in_its_message(tmp_path):
    """What clears a finding is Finding.fix (every report shows it as the fix), not words at the end of the
    message: the message says what breaks and where the tree gives it. Every rule, and both answers of a
    locked gate and of a scheduler plugin, on the fixture tree and a few settings beside it."""
    from scanner.checks import cluster_config as cc
    from scanner.scan import ScanOptions, scan
    from scanner.versions import parse_minor

    (tmp_path / "config.yaml").write_text(
        "kube-apiserver-arg:\n  - runtime-config=flowcontrol.apiserver.k8s.io/v1alpha1=true\n")
    (tmp_path / "scheduler.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "  - plugins:\n      filter:\n        disabled:\n          - name: AzureDiskLimits\n")
    result = scan([str(TREE), str(tmp_path)], target=parse_minor("1.36"), current=parse_minor("1.26"),
                  options=ScanOptions(render=False))
    findings = [f for f in result.findings if f.rule_id.startswith("cluster-config/")]
    assert {(f.rule_id, f.severity) for f in findings} == {
        (cc.GATE_REMOVED, "error"), (cc.GATE_LOCKED, "error"), (cc.GATE_LOCKED, "warning"),
        (cc.FLAG_REMOVED, "error"), (cc.ADMISSION_PLUGIN_REMOVED, "error"), (cc.CONFIG_VERSION_REMOVED, "error"),
        (cc.SCHEDULER_PLUGIN_REMOVED, "error"), (cc.SCHEDULER_PLUGIN_REMOVED, "warning"),
        (cc.SETTING_DEPRECATED, "warning"), (cc.NODE_FILE_CHANGED, "warning"), (cc.RUNTIME_CONFIG_REMOVED, "error")}
    for finding in findings:
        assert finding.fix, finding
        assert finding.fix not in finding.message, finding
        assert finding.text == f"{finding.message}; {finding.fix}"
    fixes = {(f.rule_id, f.name): f.fix for f in findings}
    assert fixes[(cc.CONFIG_VERSION_REMOVED, "kube-scheduler")] == \
        "move the file to kubescheduler.config.k8s.io/v1 before the hop"
    assert fixes[(cc.SCHEDULER_PLUGIN_REMOVED, "AzureDiskLimits")] == "drop the entry"
    assert fixes[(cc.ADMISSION_PLUGIN_REMOVED, "PodSecurityPolicy")].startswith(
        "take it out of the list before the hop (replacement: the built-in PodSecurity admission")


def test_the_json_report_gives_the_fix_its_own_field():
    findings = [f for f in scan_json("--target", "1.36", str(TREE))["findings"]
                if f["rule"] == "cluster-config/flag-removed"]
    assert findings and all(f["fix"] == "remove the flag before the hop" for f in findings)
    # the message as JSON says it (Finding.text): what breaks, where the tree gives it, then the fix
    assert {f["message"].rsplit(": ", 1)[1] for f in findings} >= {
        "kubelet does not start with a flag it does not know (K3s/RKE2 kubelet-arg); remove the flag before the hop"}
