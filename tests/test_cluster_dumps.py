"""Cluster dumps are never desired state: a --cluster-state folder inside the scanned tree is read as
cluster state only, and an object carrying server-side state met in the tree is what the cluster
holds, never the CRD the tree brings (the storedVersions trap is still caught)."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, run_kubehop

HOMELAB = FIXTURES / "homelab"


def scan_json(*args: str) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", "--target", "1.36", *args)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def trap(report: dict) -> list[tuple[str, str]]:
    return [(f["file"].rsplit("/", 2)[-2], f["object"]["name"]) for f in report["findings"]
            if f["rule"] == "crd/stored-version-dropped"]


def test_a_cluster_state_folder_inside_the_scanned_tree_is_not_read_as_manifests():
    code, apart = scan_json("--cluster-state", str(HOMELAB / "cluster"), str(HOMELAB / "tree"))
    code_inside, inside = scan_json("--cluster-state", str(HOMELAB / "cluster"), str(HOMELAB))
    assert trap(apart) and trap(inside) == trap(apart)
    assert (code_inside, inside["findings"]) == (code, apart["findings"])
    assert inside["summary"]["objects"] == apart["summary"]["objects"]
    assert any("a kubectl dump inside the scanned paths" in n for n in inside["notices"])


def test_a_dump_met_in_the_tree_is_cluster_state_not_the_crd_the_tree_brings(tmp_path):
    tree = tmp_path / "repo"
    shutil.copytree(HOMELAB / "tree", tree)
    # Sorted first in the walk, the dump's CRD was taken as the tree's: the chart's new CRD was ignored.
    shutil.copy(HOMELAB / "cluster" / "crds.yaml", tree / "0-crds-from-the-cluster.yaml")
    code, report = scan_json(str(tree))
    assert code == 1
    _, given = scan_json("--cluster-state", str(HOMELAB / "cluster" / "crds.yaml"), str(HOMELAB / "tree"))
    assert trap(report) == trap(given) == [("crds", "groups.infra.homecluster.dev"),
                                           ("crds", "nodes.infra.homecluster.dev")]
    (notice,) = [n for n in report["notices"] if "carry server-side state" in n]
    assert "0-crds-from-the-cluster.yaml: metadata.uid" in notice
    # Nothing in the dump is checked as something the tree applies.
    assert not [f for f in report["findings"] if f["file"].endswith("0-crds-from-the-cluster.yaml")]
