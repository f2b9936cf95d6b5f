"""Upgrade orders checked as their controllers would: each fixture marks the lines where a finding
must point (`# <- finding: <rule>`), and the clean trees give none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scanner.model import Finding
from scanner.scan import ScanOptions, scan
from scanner.versions import Minor
from tests.conftest import FIXTURES

ORDERS = FIXTURES / "orders"
THREE_WORKERS = ORDERS / "dumps" / "three-workers"
SINGLE_CONTROL_PLANE = ORDERS / "dumps" / "single-control-plane"
_MARKER = re.compile(r"#\s*<- finding: ([a-z-]+)")


def order_findings(tree: Path, target: str = "1.37", current: str | None = None,
                   dump: Path | None = None) -> list[Finding]:
    options = ScanOptions(render=False, cluster_state=(str(dump),) if dump else ())
    result = scan([str(tree)], Minor(*map(int, target.split("."))),
                  Minor(*map(int, current.split("."))) if current else None, options)
    return [f for f in result.findings if f.rule_id.startswith("upgrade-order/")]


def marked(tree: Path) -> set[tuple[str, int, str]]:
    found = set()
    for path in sorted(tree.rglob("*.yaml")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = _MARKER.search(line)
            if m:
                found.add((str(path), number, f"upgrade-order/{m.group(1)}"))
    return found


def located(findings: list[Finding]) -> set[tuple[str, int, str]]:
    return {(f.origin.path, f.origin.line, f.rule_id) for f in findings}


@pytest.mark.parametrize("name, current, dump", [
    ("k3s", "1.31", None),
    ("rke2-channel", None, None),
    ("knu", None, THREE_WORKERS),
    ("knu", "1.35", None),
    ("capi", "1.32", None),
])
def test_clean_orders_give_no_finding(name, current, dump):
    assert order_findings(ORDERS / name, current=current, dump=dump) == []


@pytest.mark.parametrize("name, current, dump", [
    ("k3s-no-prepare", None, None),          # an agent Plan without its prepare step
    ("k3s-agent-ahead", None, None),         # the agents' Plan above the servers'
    ("k3s-floating", None, None),            # a channel that names no minor
    ("knu-worker-first", None, None),        # a worker order before the control plane's version
    ("knu-max-unavailable-2", None, THREE_WORKERS),  # maxUnavailable: 2 on three workers
    ("knu-40-percent", None, THREE_WORKERS),  # 40% of three rounds up to two
    ("knu-skip", None, None),                # a skipped minor, against the history kept in Git
    ("capi-skew", "1.32", None),             # a MachinePool four minors behind its control plane
    ("k3s-cilium", "1.32", None),            # an order past what the pinned Cilium runs on
])
def test_each_seed_shape_gives_its_finding_at_the_field(name, current, dump):
    tree = ORDERS / name
    assert located(order_findings(tree, current=current, dump=dump)) == marked(tree)


def test_max_unavailable_says_what_the_operator_does_instead():
    [two] = order_findings(ORDERS / "knu-max-unavailable-2", dump=THREE_WORKERS)
    [forty] = order_findings(ORDERS / "knu-40-percent", dump=THREE_WORKERS)
    assert two.severity == forty.severity == "warning"
    assert "2 of 3 selected workers" in two.message and "upgrades 1 at a time" in two.message
    assert "40% of 3 selected workers rounds up to 2" in forty.message and "upgrades 1 at a time" in forty.message


def test_max_unavailable_needs_the_nodes_to_count_unless_the_percentage_is_past_the_ceiling(tmp_path):
    assert order_findings(ORDERS / "knu-max-unavailable-2") == []  # how many workers: unknown
    worker = (ORDERS / "knu" / "upgrades" / "worker.yaml").read_text()
    (tmp_path / "worker.yaml").write_text(worker.replace("maxUnavailable: 1", "maxUnavailable: 80%"))
    [finding] = order_findings(tmp_path)
    assert finding.rule_id == "upgrade-order/max-unavailable-clamped" and "clamped to 60%" in finding.message


def test_a_skipped_minor_against_from():
    control_plane, workers = order_findings(ORDERS / "knu", current="1.33")
    for finding in (control_plane, workers):
        assert finding.rule_id == "upgrade-order/skips-minor" and finding.severity == "error"
        assert "skips 1.34: the cluster is at 1.33 (--from)" in finding.message
        assert finding.breaks_in == Minor(1, 35)
    assert control_plane.origin.path.endswith("control-plane.yaml") and control_plane.origin.line == 7
    assert "the control plane moves one minor at a time" in control_plane.message
    assert workers.origin.path.endswith("worker.yaml") and "the workers move" in workers.message


def test_a_skipped_minor_against_the_dump(tmp_path):
    plans = (ORDERS / "k3s" / "system-upgrade" / "plans.yaml").read_text()
    (tmp_path / "plans.yaml").write_text(plans.replace("v1.31.14+k3s1", "v1.37.1+k3s1"))
    findings = order_findings(tmp_path, dump=THREE_WORKERS)
    assert {f.rule_id for f in findings} == {"upgrade-order/skips-minor"}
    assert len(findings) == 2  # the servers' Plan against the API server, the agents' against the workers' kubelets
    assert any("the API server of the cluster dump is at 1.35" in f.message for f in findings)
    assert any("runs kubelet v1.35.2 in the cluster dump" in f.message for f in findings)


def test_a_worker_order_at_another_patch_than_the_control_plane(tmp_path):
    for name in ("control-plane.yaml", "worker.yaml"):
        text = (ORDERS / "knu" / "upgrades" / name).read_text()
        (tmp_path / name).write_text(text.replace("v1.35.8", "v1.35.7") if name == "worker.yaml" else text)
    [finding] = order_findings(tmp_path)
    assert finding.rule_id == "upgrade-order/worker-version-not-control-plane"
    assert "exactly" in finding.message and "v1.35.8" in finding.message


def test_a_single_control_plane_node_gets_a_notice():
    [finding] = order_findings(ORDERS / "knu", dump=SINGLE_CONTROL_PLANE)
    assert finding.severity == "notice" and finding.rule_id == "upgrade-order/single-control-plane"
    assert "kmetal-controller" in finding.message and "API server is down" in finding.message


def test_a_notice_does_not_fail_the_scan_even_with_fail_on_warning():
    options = ScanOptions(render=False, cluster_state=(str(SINGLE_CONTROL_PLANE),), fail_on="warning")
    result = scan([str(ORDERS / "knu")], Minor(1, 36), None, options)
    assert [f.severity for f in result.findings] == ["notice"] and result.exit_code == 0


def test_clusters_of_one_tree_are_not_compared_with_each_other():
    # capi-skew holds a second cluster (staging, at 1.33) in the same namespace: only prod's
    # MachinePool is reported, against prod's control plane.
    [finding] = order_findings(ORDERS / "capi-skew", current="1.32")
    assert finding.name == "prod-mp-0" and "v1.32.13" in finding.message


def test_an_agent_plan_with_no_server_plan_to_wait_for_is_a_warning(tmp_path):
    """scout S10 (billimek/k8s-gitops in 2020, k3OS: its servers upgrade themselves, the server Plan is
    commented out): the agent Plan's bare prepare step was an error "already broken at 1.17"."""
    fixture = (Path(FIXTURES) / "orders/k3s-no-prepare/plans.yaml").read_text()
    (tmp_path / "plans.yaml").write_text(fixture.split("---\n", 1)[1])  # the agent Plan alone
    result = scan([str(tmp_path)], target=Minor(1, 32), current=Minor(1, 31))
    (finding,) = [f for f in result.findings if f.rule_id == "upgrade-order/agent-without-prepare"]
    assert (finding.rule_id, finding.severity) == ("upgrade-order/agent-without-prepare", "warning")
    assert "no server Plan in the tree to wait for" in finding.message


def test_the_scan_takes_from_from_the_orders_when_nothing_else_says():
    result = scan([str(ORDERS / "rke2-channel")], Minor(1, 36), None, ScanOptions(render=False))
    assert result.current == Minor(1, 33)
    assert any("--from 1.33 taken from the tree's upgrade orders: Plan cattle-system/rke2-server" in n
               for n in result.notices)


@pytest.mark.parametrize("concurrency, noticed", [("3", True), ("1", False)])
def test_a_server_plan_that_takes_every_control_plane_node_at_once_gets_a_notice(tmp_path, concurrency, noticed):
    plans = (ORDERS / "k3s" / "system-upgrade" / "plans.yaml").read_text()
    plans = plans.replace("v1.31.14+k3s1", "v1.35.8+k3s1").replace("concurrency: 1  # one server at a time",
                                                                    f"concurrency: {concurrency}")
    (tmp_path / "plans.yaml").write_text(plans)
    findings = order_findings(tmp_path, dump=THREE_WORKERS)  # three control-plane nodes at v1.35.2
    assert [(f.rule_id, f.severity, f.origin.line) for f in findings] == \
        ([("upgrade-order/single-control-plane", "notice", 9)] if noticed else [])
    if noticed:
        assert "concurrency 3 upgrades all 3 control-plane nodes" in findings[0].message
