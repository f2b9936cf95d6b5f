"""In-tree volume types that CSI migration sends to a CSI driver (rules/fields/volumes.yaml `csi_migration`):
a blocker only where the tree shows no CSIDriver of that name, a warning that says so where it does."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import run_kubehop, tool_or_skip, write_tree
from scanner.analysis import analyse
from scanner.versions import parse_minor

CSI_DRIVER = """\
    apiVersion: storage.k8s.io/v1
    kind: CSIDriver
    metadata:
      name: ebs.csi.aws.com
    spec:
      attachRequired: true
      podInfoOnMount: false
    """
GP2 = """\
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: gp2
    provisioner: kubernetes.io/aws-ebs
    parameters:
      type: gp2
    """
PV = """\
    apiVersion: v1
    kind: PersistentVolume
    metadata:
      name: data
    spec:
      capacity: {storage: 10Gi}
      accessModes: [ReadWriteOnce]
      awsElasticBlockStore:
        volumeID: vol-0123456789abcdef0
        fsType: ext4
    """


def volume_findings(paths, target="1.36"):
    analysis = analyse([str(p) for p in paths], parse_minor(target))
    assert not analysis.input_errors, analysis.input_errors
    return analysis, [f for f in analysis.findings if f.rule_id.startswith("field/volume/")]


def test_without_the_driver_in_the_tree_a_persistent_volume_breaks_when_the_in_tree_driver_goes(tmp_path):
    write_tree(tmp_path, {"pv.yaml": PV})
    _, [finding] = volume_findings([tmp_path])
    assert (finding.severity, str(finding.breaks_in), finding.origin.line) == ("error", "1.27", 8)
    assert finding.message == ("spec.awsElasticBlockStore: in-tree awsElasticBlockStore volume does not work from "
                               "Kubernetes 1.27 unless the ebs.csi.aws.com CSI driver is installed on the cluster "
                               "(kubehop sees none in the tree)")
    _, [before] = volume_findings([tmp_path], target="1.26")
    assert before.severity == "warning"
    assert "is deprecated since 1.19 and stops working in 1.27 unless the ebs.csi.aws.com CSI driver" in before.message


@pytest.mark.parametrize("target, severity", [("1.22", "warning"), ("1.23", "error"), ("1.36", "error")])
def test_a_storage_class_of_the_in_tree_provisioner_breaks_when_migration_is_on_by_default(tmp_path, target,
                                                                                           severity):
    """CSIMigrationAWS is on by default from 1.23, and provisioning has no fallback to the in-tree code."""
    write_tree(tmp_path, {"gp2.yaml": GP2})
    _, [finding] = volume_findings([tmp_path], target=target)
    assert (finding.severity, str(finding.breaks_in)) == (severity, "1.23")
    if severity == "error":
        assert "provisions nothing from Kubernetes 1.23" in finding.message
        assert "unless the ebs.csi.aws.com CSI driver is installed on the cluster" in finding.message


def test_a_driver_the_tree_installs_keeps_the_objects_working(tmp_path):
    write_tree(tmp_path, {"gp2.yaml": GP2, "pv.yaml": PV, "driver/csidriver.yaml": CSI_DRIVER})
    analysis, findings = volume_findings([tmp_path])
    assert len(findings) == 2 and {f.severity for f in findings} == {"warning"}
    assert {f.breaks_in for f in findings} == {None}
    storage_class = next(f for f in findings if f.kind == "StorageClass")
    assert storage_class.message == (
        "provisioner: in-tree awsElasticBlockStore volume is deprecated since 1.19, and keeps working through CSI "
        "migration because the tree installs the ebs.csi.aws.com CSI driver (CSIDriver ebs.csi.aws.com at "
        f"{tmp_path}/driver/csidriver.yaml:1)")
    assert storage_class.fix.startswith("use the ebs.csi.aws.com CSI driver: a StorageClass with provisioner "
                                        "ebs.csi.aws.com") and storage_class.fix.endswith("(the lasting fix)")
    assert analysis.exit_code == 0


def test_another_driver_excuses_nothing(tmp_path):
    write_tree(tmp_path, {"gp2.yaml": GP2, "csidriver.yaml": CSI_DRIVER.replace("ebs.csi.aws.com", "disk.csi.azure.com")})
    _, [finding] = volume_findings([tmp_path])
    assert finding.severity == "error" and "kubehop sees none in the tree" in finding.message


def test_a_driver_in_the_cluster_state_keeps_them_working_too(tmp_path):
    write_tree(tmp_path, {"tree/pv.yaml": PV, "dump/drivers.yaml": """\
        apiVersion: v1
        kind: List
        items:
          - apiVersion: storage.k8s.io/v1
            kind: CSIDriver
            metadata: {name: ebs.csi.aws.com, uid: 4c1f, resourceVersion: "12"}
            spec: {attachRequired: true}
        """})
    _, [finding] = volume_findings([tmp_path])  # a dump met in the tree is the cluster's state
    assert finding.severity == "warning"
    assert "because the cluster state has the ebs.csi.aws.com CSI driver" in finding.message


@pytest.mark.parametrize("target, severity, breaks", [("1.30", "warning", "1.31"), ("1.31", "error", "1.31")])
def test_portworx_provisioning_needs_its_driver_from_1_31(tmp_path, target, severity, breaks):
    """CSIMigrationPortworx: beta, on by default from 1.31; the in-tree plugin is removed in 1.36."""
    write_tree(tmp_path, {"px.yaml": """\
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: px}
        provisioner: kubernetes.io/portworx-volume
        ---
        apiVersion: v1
        kind: PersistentVolume
        metadata: {name: px}
        spec:
          portworxVolume: {volumeID: pxvol}
        """})
    _, findings = volume_findings([tmp_path], target=target)
    by_kind = {f.kind: f for f in findings}
    assert (by_kind["StorageClass"].severity, str(by_kind["StorageClass"].breaks_in)) == (severity, breaks)
    assert (by_kind["PersistentVolume"].severity, str(by_kind["PersistentVolume"].breaks_in)) == ("warning", "1.36")


CHART_STORAGE_CLASS = """\
    {{- if .Values.gp2.enabled }}
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: gp2
    parameters:
      {{- .Values.gp2.parameters | toYaml | nindent 2 }}
    {{ .Values.gp2.spec | toYaml }}
    {{- end }}
    """
CHART_VALUES = """\
    gp2:
      enabled: true
      parameters:
        type: gp2
      spec:
        provisioner: kubernetes.io/aws-ebs
        reclaimPolicy: Delete
    driver:
      enabled: true
    """


def write_chart(root, with_driver=True):
    files = {"ebs/Chart.yaml": "apiVersion: v2\nname: ebs\nversion: 1.0.0\n", "ebs/values.yaml": CHART_VALUES,
             "ebs/templates/gp2.yaml": CHART_STORAGE_CLASS}
    if with_driver:
        files["ebs/templates/csidriver.yaml"] = "{{- if .Values.driver.enabled }}\n" + textwrap.dedent(CSI_DRIVER) \
            + "{{- end }}\n"
    return write_tree(root, files) / "ebs"


def scan_json(*args, env):
    proc = run_kubehop("scan", "-o", "json", "--target", "1.36", *args, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def test_a_chart_that_renders_the_driver_keeps_its_storage_class_working(tmp_path):
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    chart = write_chart(tmp_path / "repo")
    code, report = scan_json(str(chart), env=env)
    [finding] = [f for f in report["findings"] if f["rule"] == "field/volume/awsElasticBlockStore"]
    assert code == 0 and finding["severity"] == "warning" and finding["breaks_in"] is None
    assert f"because the tree installs the ebs.csi.aws.com CSI driver (CSIDriver ebs.csi.aws.com at " \
           f"{chart}/templates/csidriver.yaml:2)" in finding["message"]
    # The provisioner comes from values.yaml, through `toYaml`: that line is the one to edit.
    assert (finding["file"], finding["line"], finding["column"]) == (f"{chart}/values.yaml", 6, 5)


def test_a_driver_the_chart_values_switch_off_is_not_installed(tmp_path):
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    chart = write_chart(tmp_path / "repo")
    (chart / "values.yaml").write_text(textwrap.dedent(CHART_VALUES).replace("driver:\n  enabled: true",
                                                                            "driver:\n  enabled: false"))
    code, report = scan_json("--all-templates", str(chart), env=env)
    [finding] = [f for f in report["findings"] if f["rule"] == "field/volume/awsElasticBlockStore"]
    assert code == 1 and finding["severity"] == "error" and "kubehop sees none in the tree" in finding["message"]
