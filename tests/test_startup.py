"""What a one-file run (the pre-commit hook: `kubehop scan --target 1.36 FILE`) imports, in a process of
its own: nothing that renders, builds or finds a tool, no other command's module, no schema validator
once the data cache is filled, and none of the readers a file without them never needs: upgrade orders,
Flux's post-build substitution, CSI migration, a chart's app patches, the cluster version in env files
and templates (bench/bench_startup.py measures what it costs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

REMOVED = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\nspec: {}\n"
# Prefixes of what a plain file given alone never needs.
NEVER = ("scanner.sources.helm", "scanner.sources.kustomize", "scanner.sources.tools", "scanner.sources.releases",
         "scanner.cli_plan", "scanner.cli_tools", "scanner.fix", "scanner.plan", "scanner.client_calls", "jsonschema",
         "scanner.config_rules",
         # Read only where a tree has such objects or files (issue 27): the upgrade orders' readers (the
         # package itself answers whether there are any), Flux's post-build reading (the package names
         # the group looked for), CSI migration's pass over the findings, chart app patches, env files'
         # and Talos templates' cluster versions, .tfvars.
         "scanner.orders.", "scanner.sources.postbuild.", "scanner.csi_migration", "scanner.components.chart_patches",
         "scanner.sources.cluster.version_lines", "scanner.sources.cluster.tfvars")

_MODULES_AFTER_MAIN = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.__stderr__))
sys.argv = ["kubehop", *sys.argv[1:]]
from scanner.cli import main
main()
"""


def _modules_of_a_run(tmp_path, *args: str) -> tuple[int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("KUBEHOP_NO_CACHE", None)
    env.pop("KUBEHOP_DATA_DIR", None)
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER_MAIN, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stderr.splitlines()[-1])


def test_a_one_file_scan_imports_nothing_that_renders_nor_another_command(tmp_path):
    (tmp_path / "ingress.yaml").write_text(REMOVED)
    _modules_of_a_run(tmp_path, "scan", "--target", "1.36", "ingress.yaml")  # fills the data cache, as a first commit
    code, modules = _modules_of_a_run(tmp_path, "scan", "--target", "1.36", "ingress.yaml")
    assert code == 1  # the blocker: the run was the real one
    assert [m for m in modules if m.startswith(NEVER)] == []


def test_each_command_registered_elsewhere_is_looked_up_in_its_module():
    """scanner.cli_shared.ELSEWHERE names every command scanner/cli_plan.py and cli_tools.py register:
    one left out would be "No such command" unless the group had listed them all first."""
    code = """
import importlib, json
from scanner.cli import cli
from scanner.cli_shared import ELSEWHERE
found = {}
for module in sorted(set(ELSEWHERE.values())):
    before = set(cli.commands)
    importlib.import_module(module)
    found.update({name: module for name in set(cli.commands) - before})
print(json.dumps([found, ELSEWHERE]))
"""
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, check=True, timeout=300)
    found, declared = json.loads(done.stdout)
    assert found == declared


def test_the_light_question_of_upgrade_orders_knows_every_kind_the_reader_reads():
    """scanner.orders.may_hold_orders reads rules/upgrade-orders.yaml for itself, so that a run with no
    order imports nothing of the readers: it must know the same (apiVersion, kind) pairs they read."""
    from scanner.orders import _order_api_kinds
    from scanner.orders.kinds import order_kinds

    assert _order_api_kinds() == set(order_kinds()) and len(_order_api_kinds()) > 3


def test_a_text_plan_imports_no_markdown_nor_sarif_reader(tmp_path):
    """A text plan is a view of the scan's analysis: it imports neither the Markdown escaping (only a
    Markdown plan needs it, scanner.report.plan_orders) nor what describes rules for SARIF."""
    (tmp_path / "ingress.yaml").write_text(REMOVED)
    code, modules = _modules_of_a_run(tmp_path, "plan", "--from", "1.31", "--target", "1.36", "ingress.yaml")
    assert code == 1 and "scanner.report.plan_text" in modules  # the plan was made, and it blocks
    assert [m for m in modules if m in ("scanner.report.md", "scanner.report.sarif")] == []
