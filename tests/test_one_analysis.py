"""One analysis, several views (issue 22): `plan` carries every finding `scan` makes, both start from
the same current minor, read the same inputs, and a plan with nothing to start from stops before
anything is rendered."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import FIXTURES, invoke, tool_or_skip

TREES = FIXTURES / "one-analysis"
COUNTS = re.compile(r"\((\d+) blockers?, (\d+) warnings?\)")


def counts(*args: str, cwd: Path | None = None, env: dict | None = None) -> dict[str, tuple]:
    """(exit code, blockers, warnings) of scan and plan, each as its JSON report says."""
    seen = {}
    for command in ("scan", "plan"):
        done = invoke(command, "--no-config", "--format", "json", *args, cwd=cwd, env=env)
        assert done.returncode in (0, 1, 3), done.stderr
        report = json.loads(done.stdout)
        blockers, warnings = (report["blockers"], report["warnings"]) if command == "plan" else \
            (report["summary"]["errors"], report["summary"]["warnings"])
        seen[command] = (done.returncode, blockers, warnings)
    return seen


def test_a_custom_resource_its_crd_does_not_serve_blocks_the_plan_as_it_blocks_the_scan():
    seen = counts("--from", "1.31", "--target", "1.33", str(TREES / "crd-unserved"))
    assert seen["scan"] == seen["plan"] == (1, 1, 0)
    plan = json.loads(invoke("plan", "--no-config", "--format", "json", "--from", "1.31", "--target", "1.33",
                             str(TREES / "crd-unserved")).stdout)
    (finding,) = [f for w in plan["windows"] for f in w["findings"]]
    assert finding["rule"] == "crd/unserved-version" and finding["object"] == "Widget apps/left-behind"


def test_plan_reads_the_cluster_state_as_scan_does():
    """The storedVersions trap of the seeds: a chart's CRD drops a version the cluster still stores."""
    tree, dumps = FIXTURES / "orders" / "k3s", FIXTURES / "orders" / "dumps" / "single-control-plane"
    seen = counts("--target", "1.36", "--cluster-state", str(dumps), str(tree))
    assert seen["scan"] == seen["plan"]
    done = invoke("plan", "--no-config", "--target", "1.36", "--cluster-state", str(dumps), str(tree))
    assert "taken from the cluster dump" in done.stderr


def test_scan_and_plan_start_from_the_same_minor_a_role_default_gives_way_to_the_inventory():
    tree = str(TREES / "pinned-by-role")
    for command in ("scan", "plan"):
        done = invoke(command, "--no-config", "--target", "1.36", tree)
        said = re.search(r"--from (\S+) taken from the tree's version variables: variable k3s_version (\S+) at (\S+)",
                         done.stdout + done.stderr)
        assert said and said.groups()[:2] == ("1.29", "v1.29.4+k3s1"), command
        assert said[3].endswith("pinned-by-role/inventory/group_vars/all.yml:2")
    plan = json.loads(invoke("plan", "--no-config", "--format", "json", "--target", "1.36", tree).stdout)
    assert plan["from"] == "1.29" and plan["distro"] == "k3s" and len(plan["windows"]) == 7
    seen = counts("--target", "1.36", tree)
    assert seen["scan"] == seen["plan"] == (1, 2, 0)


def test_a_plan_with_nothing_to_start_from_stops_before_rendering(tmp_path):
    cache = tmp_path / "cache"
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(cache)}
    done = invoke("plan", "--no-config", "--target", "1.36", str(TREES / "unpinned"), env=env)
    assert done.returncode == 2
    assert "the tree pins no cluster version" in done.stderr
    assert not cache.exists() or not any(cache.rglob("*")), "a chart was rendered before the usage error"
    # With a start, the same tree renders and is planned.
    done = invoke("plan", "--no-config", "--from", "1.24", "--target", "1.36", "--format", "json",
                  str(TREES / "unpinned"), env=env)
    assert json.loads(done.stdout)["blockers"] == 1 and any(cache.rglob("*"))


def test_plan_takes_the_inputs_scan_takes():
    done = invoke("plan", "--help")
    for option in ("--cluster-state", "--helm-releases", "--values", "--all-templates", "--no-render", "--exclude",
                   "--ignore", "--rules", "--baseline", "--cluster-version-file", "--allow-network"):
        assert option in done.stdout, option
    scan_help = invoke("scan", "--help").stdout
    assert "--cluster-version-file" in scan_help


def test_the_plan_says_where_its_minors_came_from(tmp_path):
    """A pull request may lower `target` in .kubehop.yaml: the plan says so, as the scan does."""
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    (tree / "cronjob.yaml").write_text((TREES / "pinned-by-role" / "apps" / "cronjob.yaml").read_text())
    (tree / ".kubehop.yaml").write_text('target: "1.33"\nfrom: "1.31"\n')
    text = invoke("plan", ".", cwd=tree).stdout
    assert "target 1.33 set by the configuration .kubehop.yaml; from 1.31 set by the configuration" in text
    plan = json.loads(invoke("plan", "--format", "json", ".", cwd=tree).stdout)
    assert (plan["target_source"], plan["current_source"], plan["configuration"]) == (
        "configuration", "configuration", str(tree / ".kubehop.yaml"))


def test_plan_says_it_checked_nothing_as_scan_does(tmp_path):
    """A wrong path in CI: plan's verdict is scan's, never "nothing blocks" over a tree it did not read."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# not Kubernetes\n")
    for path, words, code in (("deploy", "deploy does not exist", 3),
                              ("docs", "no Kubernetes objects found in docs", 0)):
        for command in ("scan", "plan"):
            done = invoke(command, "--no-config", "--from", "1.31", "--target", "1.33", path, cwd=tmp_path)
            assert done.returncode == code, (command, done.stderr)
            last = done.stdout.strip().splitlines()[-1]
            assert last.startswith(f"nothing checked for 1.33: {words}"), (command, last)


def test_scan_and_plan_read_the_upgrade_orders_once(monkeypatch):
    """The cluster's pins, the order checks and the plan's orders all take the analysis' reading of the
    orders (issue 27: they were read 5 times by a scan, 6 by a plan); with the current minor to find, a
    plan reads the plain files' own once more, before anything renders."""
    from scanner.orders import read

    reads: list[int] = []
    original = read.read_orders

    def counted(manifests):
        reads.append(len(manifests))
        return original(manifests)

    monkeypatch.setattr(read, "read_orders", counted)  # cluster_pin and the checks import it when asked
    tree = str(FIXTURES / "orders" / "k3s")
    for command, minors, times in (("scan", ("--from", "1.31"), 1), ("plan", ("--from", "1.31"), 1),
                                   ("scan", (), 1), ("plan", (), 2)):
        reads.clear()
        done = invoke(command, "--no-config", *minors, "--target", "1.33", tree)
        assert done.returncode in (0, 1), done.stderr
        assert len(reads) == times, (command, minors)
    plan = json.loads(invoke("plan", "--no-config", "--format", "json", "--target", "1.33", tree).stdout)
    assert [o for w in plan["windows"] for o in w["orders"]], "the plan shows the orders it read once"


def test_scan_counts_the_objects_inventory_lists(tmp_path):
    """A kustomization file is read by kustomize, never applied; what it generates is: scan's object count
    and inventory's rows count the same objects (the Deployment and the generated ConfigMap)."""
    env = {"KUBEHOP_KUBECTL": tool_or_skip("kubectl")}
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text(
        "resources: [deploy.yaml]\nconfigMapGenerator:\n  - name: settings\n    literals: [a=b]\n")
    (app / "deploy.yaml").write_text((TREES / "pinned-by-role" / "apps" / "cronjob.yaml").read_text())
    scan = json.loads(invoke("scan", "--no-config", "--target", "1.36", "--format", "json", str(app), env=env).stdout)
    rows = json.loads(invoke("inventory", "--no-config", "--format", "json", str(app), env=env).stdout)
    assert sorted(row["kind"] for row in rows) == ["ConfigMap", "CronJob"]
    assert scan["summary"]["objects"] == sum(row["objects"] for row in rows) == 2
    done = invoke("scan", "--no-config", "--target", "1.36", str(app / "kustomization.yaml"), env=env)
    assert "nothing checked" not in done.stdout  # the build's objects are read from the file given
