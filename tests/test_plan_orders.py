"""`kubehop plan --orders DIR`: each window's upgrade orders, in the tree's own style, that kubehop's
own scan then accepts window after window."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scanner.scan import ScanOptions, scan
from scanner.versions import Minor
from tests.conftest import FIXTURES, run_kubehop_text as run_kubehop

ORDERS = FIXTURES / "orders"


def plan_orders(tree: Path, out: Path, *args: str) -> dict:
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.36", "--orders", str(out), "--format", "json",
                       *args, str(tree))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def apply(tree: Path, out: Path, windows: list[str], work: Path) -> Path:
    """The tree with the given windows' folders copied over it, in order."""
    shutil.copytree(tree, work)
    for window in windows:
        shutil.copytree(out / window, work, dirs_exist_ok=True)
    return work


def order_findings(tree: Path, current: Minor) -> list:
    result = scan([str(tree)], Minor(1, 37), current, ScanOptions(render=False))
    return [f for f in result.findings if f.rule_id.startswith("upgrade-order/")]


WINDOWS = ["01-1.32", "02-1.33", "03-1.34", "04-1.35", "05-1.36"]


@pytest.mark.parametrize("fixture", ["k3s", "knu-131", "tuppr"])
def test_five_windows_that_the_scan_accepts_one_after_the_other(fixture, tmp_path):
    tree, out = ORDERS / fixture, tmp_path / "orders"
    plan = plan_orders(tree, out)
    assert sorted(p.name for p in out.iterdir()) == WINDOWS
    assert [len(w["orders"]) > 0 for w in plan["windows"]] == [True] * 5
    for k, window in enumerate(WINDOWS, 1):
        applied = apply(tree, out, WINDOWS[:k], tmp_path / f"after-{window}")
        assert order_findings(applied, Minor(1, 30 + k)) == [], window
    # the check can fail: window 2 without window 1 skips 1.32
    skipped = apply(tree, out, ["02-1.33"], tmp_path / "skipping")
    assert {f.rule_id for f in order_findings(skipped, Minor(1, 31))} == {"upgrade-order/skips-minor"}


def test_k3s_windows_are_server_and_agent_plans_at_the_newest_known_patch(tmp_path):
    out = tmp_path / "orders"
    plan = plan_orders(ORDERS / "k3s", out)
    first = plan["windows"][0]["orders"]
    assert [o["file"] for o in first] == [f"{out}/01-1.32/system-upgrade/plans.yaml"]
    assert first[0]["orders"] == ["Plan system-upgrade/k3s-server: spec.version v1.32.13+k3s1",
                                  "Plan system-upgrade/k3s-agent: spec.version v1.32.13+k3s1"]
    original = (ORDERS / "k3s" / "system-upgrade" / "plans.yaml").read_text()
    written = (out / "05-1.36" / "system-upgrade" / "plans.yaml").read_text()
    # only the two version lines differ: comments, flow lists and key order are kept
    changed = [(a, b) for a, b in zip(original.splitlines(), written.splitlines()) if a != b]
    assert changed == [("  version: v1.31.14+k3s1  # the cluster's version", "  version: v1.36.4+k3s1  # the cluster's version"),
                       ("  version: v1.31.14+k3s1", "  version: v1.36.4+k3s1")]
    assert len(original.splitlines()) == len(written.splitlines())
    assert not (out / "05-1.36" / "system-upgrade" / "kustomization.yaml").exists()  # only the orders' files


def test_knu_windows_add_a_control_plane_then_a_worker_order_beside_the_existing(tmp_path):
    out = tmp_path / "orders"
    plan_orders(ORDERS / "knu-131", out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    assert files[:2] == ["01-1.32/upgrades/control-plane-v1.32.yaml", "01-1.32/upgrades/worker-v1.32.yaml"]
    control_plane = (out / "01-1.32" / "upgrades" / "control-plane-v1.32.yaml").read_text()
    assert control_plane.startswith("# Created with kubectl create")  # the template's comments kept
    assert "version: v1.32.13" in control_plane and "role: ControlPlane" in control_plane
    worker = (out / "01-1.32" / "upgrades" / "worker-v1.32.yaml").read_text()
    assert "maxUnavailable: 1  # every entry restarts a kubelet" in worker


def test_a_minor_channel_moves_by_minor_and_an_unknown_patch_is_left_to_pick(tmp_path):
    out = tmp_path / "orders"
    proc = run_kubehop("plan", "--from", "1.33", "--target", "1.37", "--orders", str(out), str(ORDERS / "rke2-channel"))
    assert proc.returncode == 0, proc.stderr
    assert "channel: https://update.rke2.io/v1-release/channels/v1.37" in (out / "04-1.37" / "plans.yaml").read_text()
    tree = tmp_path / "pinned"
    tree.mkdir()
    text = (ORDERS / "k3s" / "system-upgrade" / "plans.yaml").read_text()
    # rules/distro-releases.yaml lists RKE2 patches from 1.31 on: 1.30 is a minor it knows no patch of.
    (tree / "plans.yaml").write_text(text.replace("v1.31.14+k3s1", "v1.29.15+rke2r1").replace("k3s-upgrade", "rke2-upgrade"))
    proc = run_kubehop("plan", "--from", "1.29", "--target", "1.30", "--orders", str(tmp_path / "rke2"), str(tree))
    written = (tmp_path / "rke2" / "01-1.30" / "plans.yaml").read_text()
    assert "version: v1.30  # kubehop: pick the patch: the data knows no rke2 release of 1.30" in written
    assert "pick the patch" in proc.stdout


def test_the_markdown_plan_shows_each_windows_orders(tmp_path):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.33", "--format", "markdown",
                       "--orders", str(tmp_path / "o"), str(ORDERS / "k3s"))
    assert proc.returncode == 0, proc.stderr
    window = proc.stdout.split("### W2")[1]
    assert "02-1.33/system-upgrade/plans.yaml" in window and "spec.version v1.33.13+k3s2" in window
    assert "```diff" in window and "+  version: v1.33.13+k3s2" in window


def test_without_orders_the_plan_still_says_what_to_set_and_writes_nothing(tmp_path):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.32", str(ORDERS / "k3s"), cwd=tmp_path)
    assert "upgrade orders in " in proc.stdout and "spec.version v1.32.13+k3s1" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_cluster_api_orders_are_not_written_and_the_plan_says_why(tmp_path):
    plan = plan_orders(ORDERS / "capi", tmp_path / "o")
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").rglob("*.yaml"))
    assert any("machine images" in note for note in plan["order_notes"])


def test_the_orders_folder_must_be_outside_the_tree(tmp_path):
    tree = shutil.copytree(ORDERS / "k3s", tmp_path / "tree")
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.32", "--orders", str(tree / "out"), str(tree))
    assert proc.returncode == 2 and "inside a scanned path" in proc.stderr
