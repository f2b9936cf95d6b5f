"""Cluster dumps: what is read from them, the Diagnostics for dumps that are not what they claim,
and the node-skew policy hop by hop."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scanner.cluster_state import load_cluster_state
from scanner.scan import ScanOptions, scan
from scanner.versions import Minor, parse_minor
from tests.conftest import FIXTURES, run_kubehop

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {{kind: Widget, plural: widgets}}
  scope: {scope}
  {conversion}
  versions:
    - name: v2
      served: true
      storage: true
      schema:
        openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
{status}"""


def _write(folder: Path, name: str, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))
    return str(folder / name)


def _messages(tmp_path: Path, name: str, text: str) -> list[str]:
    _, diagnostics = load_cluster_state([_write(tmp_path, name, text)])
    return [d.message for d in diagnostics]


def test_a_crd_manifest_is_not_a_dump_of_the_cluster(tmp_path):
    text = CRD.format(scope="Namespaced", conversion="", status="")
    [message] = _messages(tmp_path, "crds.yaml", text)
    assert "widgets.example.com has no status.storedVersions" in message


def test_a_node_without_kubelet_version_is_not_kubectl_get_nodes_output(tmp_path):
    [message] = _messages(tmp_path, "nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    assert message.startswith("Node n1 has no valid status.nodeInfo.kubeletVersion")


def test_an_object_without_uid_was_not_read_from_a_cluster(tmp_path):
    text = "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w, namespace: a}\n"
    [message] = _messages(tmp_path, "widgets.yaml", text)
    assert "has no metadata.uid" in message


def test_version_output_without_server_version(tmp_path):
    [message] = _messages(tmp_path, "version.json", '{"clientVersion": {"gitVersion": "v1.34.1"}}')
    assert "without serverVersion.gitVersion" in message


@pytest.mark.parametrize("output", [
    '{"clientVersion": {"gitVersion": "v1.34.1"}, "serverVersion": {"gitVersion": "v1.33.4+k3s1"}}',
    "clientVersion:\n  gitVersion: v1.34.1\nserverVersion:\n  gitVersion: v1.33.4+k3s1\n",
    "Client Version: v1.34.1\nKustomize Version: v5.7.1\nServer Version: v1.33.4+k3s1\n",
])
def test_every_kubectl_version_output_gives_the_server_minor(tmp_path, output):
    state, diagnostics = load_cluster_state([_write(tmp_path, "version", output)])
    assert (state.server, state.server_version, diagnostics) == (Minor(1, 33), "v1.33.4+k3s1", [])


def test_a_file_with_no_objects(tmp_path):
    [message] = _messages(tmp_path, "notes.yaml", "hello: world\n")
    assert message.startswith("no Kubernetes objects")


def test_bad_dumps_make_the_scan_exit_3_but_the_tree_is_still_scanned(tmp_path):
    dump = tmp_path / "dump"
    _write(dump, "crds.yaml", CRD.format(scope="Namespaced", conversion="", status=""))
    result = run_kubehop("scan", "--target", "1.36", "--cluster-state", str(dump), "tests/fixtures/homelab/tree")
    assert result.returncode == 3
    assert b"crd/unserved-version" in result.stdout and b"no status.storedVersions" in result.stdout


def test_a_missing_cluster_state_path_is_a_usage_error(tmp_path):
    result = run_kubehop("scan", "--cluster-state", str(tmp_path / "absent"), "tests/fixtures/homelab/tree")
    assert result.returncode == 2


def test_stored_versions_remediation_for_a_cluster_scoped_crd_with_a_webhook(tmp_path):
    conversion = "conversion: {strategy: Webhook}"
    tree = _write(tmp_path / "tree", "crd.yaml", CRD.format(scope="Cluster", conversion=conversion, status=""))
    live = CRD.format(scope="Cluster", conversion="", status="status: {storedVersions: [v1]}").replace("v2", "v1")
    dump = _write(tmp_path / "dump", "crds.yaml", live)
    result = scan([tree], Minor(1, 36), options=ScanOptions(cluster_state=(dump,)))
    [finding] = result.findings
    assert finding.rule_id == "crd/stored-version-dropped" and finding.origin.line == 10
    steps = "\n".join(finding.remediation)
    assert "its conversion webhook converts them" in steps
    assert ("kubectl get widgets.example.com -o name | while read -r name; do "
            "kubectl patch \"$name\" --type=merge -p '{}'; done") in steps
    assert "kubectl delete widgets.example.com --all" in steps


def test_a_custom_resource_whose_crd_is_only_in_the_cluster_is_checked_against_it(tmp_path):
    live = CRD.format(scope="Namespaced", conversion="", status="status: {storedVersions: [v2]}")
    dump = _write(tmp_path / "dump", "crds.yaml", live.replace("{type: object, x-kubernetes-preserve-unknown-fields: true}",
                                                             "{type: object, properties: {spec: {type: object}}}"))
    tree = _write(tmp_path / "tree", "w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n"
                                               "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: x}\nsize: 3\n")
    result = scan([tree], Minor(1, 36), options=ScanOptions(cluster_state=(dump,)))
    assert [(f.rule_id, f.name, f.origin.line) for f in result.findings] == [
        ("crd/unserved-version", "w", 1), ("crd/unknown-field", "x", 8)]
    assert f"({dump}:1)" in result.findings[0].message


def test_an_object_at_a_version_kept_but_no_longer_served_is_a_warning(tmp_path):
    crd = CRD.format(scope="Namespaced", conversion="", status="").replace(
        "  versions:\n", "  versions:\n    - {name: v1, served: false, storage: false}\n")
    tree = _write(tmp_path / "tree", "crd.yaml", crd)
    dump = tmp_path / "dump"
    _write(dump, "crds.yaml", crd + "status: {storedVersions: [v1, v2]}\n")
    _write(dump, "widgets.yaml", "apiVersion: example.com/v1\nkind: Widget\n"
                                 "metadata: {name: w, namespace: a, uid: 1f}\n")
    result = scan([tree], Minor(1, 36), options=ScanOptions(cluster_state=(str(dump),)))
    [finding] = result.findings
    assert (finding.rule_id, finding.severity, finding.name) == ("crd/object-at-unserved-version", "warning", "w")
    assert "keeps but no longer serves" in finding.message
    assert finding.remediation[-1].strip() == "kubectl -n a patch widgets.example.com w --type=merge -p '{}'"


def _skew_findings(tmp_path: Path, server: str, nodes: dict[str, tuple[str, bool]], target: str) -> list[tuple]:
    control_plane = "{node-role.kubernetes.io/control-plane: ''}"
    items = "".join(
        f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: {name}\n"
        f"    labels: {control_plane if cp else '{}'}\n"
        f"  status: {{nodeInfo: {{kubeletVersion: {version}}}}}\n"
        for name, (version, cp) in nodes.items())
    dump = tmp_path / "dump"
    _write(dump, "nodes.yaml", f"apiVersion: v1\nkind: List\nitems:\n{items}")
    _write(dump, "version.json", f'{{"serverVersion": {{"gitVersion": "{server}"}}}}')
    result = scan([str(dump / "version.json")], Minor(*map(int, target.split("."))),
                  options=ScanOptions(cluster_state=(str(dump),)))
    assert not result.input_errors
    return [(f.rule_id, str(f.breaks_in), f.name) for f in result.findings]


def test_node_skew_hops(tmp_path):
    nodes = {"cp": ("v1.31.2", True), "w-old": ("v1.28.0", False), "w-ok": ("v1.31.0", False)}
    # 1.28 + 3 = 1.31: w-old blocks the hop to 1.32; w-ok (1.31) blocks only the hop to 1.35.
    assert _skew_findings(tmp_path, "v1.31.2", nodes, "1.34") == [("node-skew/kubelet-too-old", "1.32", "w-old")]
    assert _skew_findings(tmp_path, "v1.31.2", nodes, "1.35") == [
        ("node-skew/kubelet-too-old", "1.32", "w-old"), ("node-skew/kubelet-too-old", "1.35", "cp, w-ok")]


def test_before_1_25_a_kubelet_may_lag_two_minors_only(tmp_path):
    nodes = {"cp": ("v1.26.5", True), "w": ("v1.24.3", False)}
    assert _skew_findings(tmp_path, "v1.26.5", nodes, "1.27") == [("node-skew/kubelet-too-old", "1.27", "w")]


def test_control_plane_nodes_all_at_n_before_any_moves_to_n_plus_one(tmp_path):
    nodes = {"cp-1": ("v1.33.1", True), "cp-2": ("v1.32.4", True), "cp-3": ("v1.33.1", True)}
    assert _skew_findings(tmp_path, "v1.33.1", nodes, "1.34") == [
        ("node-skew/control-plane-order", "1.34", "cp-2")]


def test_no_skew_finding_when_every_node_is_in_step(tmp_path):
    nodes = {"cp": ("v1.34.3", True), "w": ("v1.33.7", False)}
    assert _skew_findings(tmp_path, "v1.34.3", nodes, "1.35") == []


@pytest.mark.parametrize("body", [
    "spec: []",
    "spec: {group: example.com, names: {kind: Widget, plural: widgets}, versions: [3, {name: v1, schema: 7}]}",
    "spec: {group: example.com, names: {kind: Widget, plural: widgets}, versions: "
    "[{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: 12}}}]}",
])
def test_malformed_crds_never_raise(tmp_path, body):
    crd = _write(tmp_path, "crd.yaml", f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                                       f"metadata: {{name: widgets.example.com}}\n{body}\n")
    cr = _write(tmp_path, "cr.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {a: 1}\n")
    result = scan([crd, cr], Minor(1, 36))
    assert {f.rule_id for f in result.findings} <= {"crd/unserved-version", "crd/schema-unusable"}


@pytest.mark.parametrize("given, target, current, notice", [
    (None, "1.36", "1.33", "--from 1.33 taken from the cluster dump (API server v1.33.4+k3s1)"),
    ("1.32", "1.36", "1.32", "--from 1.32 differs from the API server in the cluster dump (1.33)"),
    ("1.33", "1.36", "1.33", None),
    (None, "1.32", None, "the API server in the cluster dump (1.33) is newer than --target 1.32"),
])
def test_the_dumped_api_server_version_and_from(given, target, current, notice):
    result = scan([], parse_minor(target), given and parse_minor(given),
                  options=ScanOptions(cluster_state=(str(FIXTURES / "homelab/cluster/version.json"),)))
    assert result.current == (current and parse_minor(current))
    assert [n.split(";")[0] for n in result.notices] == ([notice] if notice else [])


def test_an_object_without_a_name_is_named_unnamed(tmp_path):
    notice, message = _messages(tmp_path, "nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: [n1]}\n")
    assert notice.startswith("metadata.name is a list, not a string")
    assert message.startswith("Node <unnamed> has no valid status.nodeInfo.kubeletVersion")


def test_dumped_objects_are_compared_only_with_a_crd_the_tree_brings(tmp_path):
    """Without a new CRD in the tree there is no 'new CRD' to drop a version from."""
    from scanner.checks import ScanContext, run_checks
    from scanner.rulebook import load_rulebook

    _write(tmp_path / "dump", "crd.yaml", CRD.format(
        scope="Namespaced", conversion="", status="status: {storedVersions: [v2]}"))
    _write(tmp_path / "dump", "objects.yaml",
           "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: a, uid: '1'}\n")
    cluster, diagnostics = load_cluster_state([str(tmp_path / "dump")])
    assert not diagnostics and len(cluster.crds) == 1 and cluster.objects
    context = ScanContext(Minor(1, 36), load_rulebook(), crds=cluster.crds, cluster=cluster)
    assert run_checks([], context) == []


def test_a_dump_folder_holding_a_kustomization_is_read_file_by_file(tmp_path):
    _write(tmp_path / "dump", "kustomization.yaml", "resources: [crds.yaml]\n")
    _write(tmp_path / "dump", "crds.yaml", CRD.format(scope="Namespaced", conversion="",
                                                       status="status: {storedVersions: [v2]}"))
    cluster, diagnostics = load_cluster_state([str(tmp_path / "dump")])
    assert len(cluster.crds) == 1
    assert [d.path for d in diagnostics] == [str(tmp_path / "dump" / "kustomization.yaml")]
