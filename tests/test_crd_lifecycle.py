"""The CRD lifecycle and cluster-state checks on fixtures modelled on seeds 000, 003 and 004."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_kubehop, shared_or_skip

HOMELAB = "tests/fixtures/homelab"
CELLCAST = "tests/fixtures/cellcast"
HOMELAB_SCAN = ("scan", "--target", "1.36", "--cluster-state", f"{HOMELAB}/cluster", f"{HOMELAB}/tree")
CELLCAST_SCAN = ("scan", "--target", "1.35", "--cluster-state", f"{CELLCAST}/cluster", f"{CELLCAST}/tree")


@pytest.fixture(scope="module")
def homelab() -> dict:
    result = run_kubehop(*HOMELAB_SCAN, "--format", "json")
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def _by_rule(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


def test_homelab_custom_resources_at_the_dropped_version_are_errors(homelab):
    unserved = _by_rule(homelab, "crd/unserved-version")
    assert [(f["file"].rsplit("/", 1)[1], f["line"], f["object"]["name"]) for f in unserved] == [
        ("nodes.yaml", 2, "worker-01"), ("nodes.yaml", 19, "worker-02")]
    assert all(f["replacement"] == "infra.homecluster.dev/v2alpha1" and f["breaks_in"] is None for f in unserved)


def test_homelab_removed_field_is_reported_at_the_line_of_its_key(homelab):
    unknown = _by_rule(homelab, "crd/unknown-field")
    assert [(f["line"], f["column"], f["object"]["name"]) for f in unknown] == [
        (11, 3, "worker-01"), (28, 3, "worker-02"), (46, 3, "worker-03")]
    assert all(f["message"].startswith("spec.powerState: unknown field") for f in unknown)


def test_homelab_type_error_is_reported_at_the_line_of_its_key(homelab):
    [invalid] = _by_rule(homelab, "crd/invalid-value")
    assert (invalid["line"], invalid["column"]) == (48, 5)
    assert invalid["message"].startswith("spec.pricing.hourlyRate: 0.05 is not of type 'string'")


def test_homelab_stored_versions_trap_gives_the_ordered_remediation(homelab):
    trapped = {f["object"]["name"]: f for f in _by_rule(homelab, "crd/stored-version-dropped")}
    assert sorted(trapped) == ["groups.infra.homecluster.dev", "nodes.infra.homecluster.dev"]
    nodes = trapped["nodes.infra.homecluster.dev"]
    assert nodes["file"].endswith("crds/infra.homecluster.dev_nodes.yaml") and nodes["line"] == 13
    steps = nodes["remediation"]
    rewrite = "kubectl -n homelab-autoscaler-system patch nodes.infra.homecluster.dev worker-0{} --type=merge -p '{{}}'"
    status_patch = ("kubectl patch crd nodes.infra.homecluster.dev --subresource=status --type=merge "
                    "-p '{\"status\":{\"storedVersions\":[\"v2alpha1\"]}}'")
    order = [next(i for i, s in enumerate(steps) if s.strip() == wanted)
             for wanted in (rewrite.format(1), rewrite.format(2), status_patch)]
    assert steps[0].startswith("1. Apply a CRD that keeps v1alpha1") and order == sorted(order)
    assert steps[-1].strip() == "kubectl delete nodes.infra.homecluster.dev -n homelab-autoscaler-system --all"
    # No object of this kind was dumped: one loop over every namespace.
    assert any("kubectl get groups.infra.homecluster.dev -A" in s for s in trapped["groups.infra.homecluster.dev"]["remediation"])


def test_homelab_dumped_objects_and_managed_fields_at_the_dropped_version(homelab):
    objects = _by_rule(homelab, "crd/object-at-unserved-version")
    managed = _by_rule(homelab, "crd/managed-fields-unserved-version")
    assert [(f["line"], f["object"]["name"]) for f in objects] == [(3, "worker-01"), (38, "worker-02")]
    assert [(f["line"], f["object"]["name"]) for f in managed] == [(11, "worker-01"), (46, "worker-02")]
    assert "homelab-autoscaler at infra.homecluster.dev/v1alpha1" in managed[0]["message"]
    assert all(f["file"].endswith("cluster/infra-nodes.yaml") for f in objects + managed)


def test_homelab_node_skew_names_the_nodes_per_hop(homelab):
    skew = [(f["rule"], f["hop"], f["object"]["name"]) for f in homelab["findings"] if f["rule"].startswith("node-skew/")]
    assert skew == [
        ("node-skew/control-plane-order", "hop to 1.34", "cp-2"),
        ("node-skew/kubelet-newer", "hop to 1.34", "worker-01"),
        ("node-skew/kubelet-too-old", "hop to 1.34", "worker-02"),
    ]
    assert homelab["from"] == "1.33"


def test_homelab_without_the_dump_still_catches_what_the_tree_shows():
    result = run_kubehop("scan", "--target", "1.36", "--format", "json", f"{HOMELAB}/tree")
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert sorted({f["rule"] for f in report["findings"]}) == [
        "crd/invalid-value", "crd/unknown-field", "crd/unserved-version"]


def test_cellcast_deprecated_but_served_version_gives_warnings_only():
    result = run_kubehop(*CELLCAST_SCAN, "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout.decode()
    assert [(f["rule"], f["severity"], f["object"]["name"]) for f in report["findings"]] == [
        ("crd/deprecated-version", "warning", "cell-eu-1"), ("crd/deprecated-version", "warning", "spread")]
    assert "cellcast.io/v1alpha1 is deprecated; use cellcast.io/v1beta1" in report["findings"][0]["message"]
    assert report["hops"] == [{"hop": "at any Kubernetes version", "breaks_in": None, "errors": 0, "warnings": 2,
                              "notices": 0}]


@pytest.mark.parametrize("args", [HOMELAB_SCAN, CELLCAST_SCAN], ids=["homelab", "cellcast"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_report_snapshots(args, fmt, snapshot):
    result = run_kubehop(*args, "--format", fmt)
    assert result.stderr == b""
    # The machine's helm (3 or 4, any patch) renders the same: its version is not part of the snapshot,
    # nor how this machine keeps it from the network (a network namespace, or closed proxies only).
    report = re.sub(r'("rendered_with": \{\s*"helm": )"[^"]*"', r'\1"<the helm found>"', result.stdout.decode())
    report = re.sub(r'("isolation": \{\s*"helm": )"[^"]*"', r'\1"<as this machine allows>"', report)
    assert report == snapshot


def test_the_status_patch_is_the_one_seed_000_documents(homelab):
    seed = shared_or_skip("seeds/000_cc9d98c2fdf9d013.txt").read_text()
    patches = [line.strip() for f in _by_rule(homelab, "crd/stored-version-dropped") for line in f["remediation"]
               if "--subresource=status" in line]
    assert len(patches) == 2 and all(patch in seed for patch in patches)
