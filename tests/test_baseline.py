"""Baselines: accept today's findings, fail only on new ones, whatever moves in the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_kubehop_text as run_kubehop


def ingress(name: str) -> str:
    return f"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: shop\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(ingress("web") + "---\n" + ingress("api"))
    return tmp_path


def scan(tree: Path, *args: str):
    done = run_kubehop("scan", "--no-config", "--format", "json", *args, cwd=tree)
    return done, json.loads(done.stdout) if done.stdout else None


def test_written_baseline_accepts_todays_findings(tree):
    done, report = scan(tree, "--write-baseline", "baseline.json", "apps")
    assert done.returncode == 0 and report["findings"] == []
    recorded = json.loads((tree / "baseline.json").read_text())
    assert [(e["file"], e["name"], e["count"]) for e in recorded["findings"]] == [
        ("apps/web.yaml", "api", 1), ("apps/web.yaml", "web", 1)]
    done, report = scan(tree, "--baseline", "baseline.json", "apps")
    assert done.returncode == 0
    assert report["notices"] == ["findings recorded in the baseline baseline.json, not shown: 2"]


def test_only_new_findings_fail_even_after_lines_shift(tree):
    scan(tree, "--write-baseline", "baseline.json", "apps")
    web = tree / "apps" / "web.yaml"
    web.write_text("# a comment that shifts every line\n\n" + web.read_text() + "---\n" + ingress("new"))
    done, report = scan(tree, "--baseline", "baseline.json", "apps")
    assert done.returncode == 1
    assert [(f["object"]["name"], f["line"]) for f in report["findings"]] == [("new", 15)]


def test_baseline_paths_do_not_depend_on_the_working_folder(tree):
    scan(tree, "--write-baseline", "baseline.json", "apps")
    done, _ = scan(tree / "apps", "--baseline", str(tree / "baseline.json"), str(tree / "apps" / "web.yaml"))
    assert done.returncode == 0


def test_fixed_findings_are_reported_as_gone(tree):
    scan(tree, "--write-baseline", "baseline.json", "apps")
    (tree / "apps" / "web.yaml").write_text(ingress("web"))
    done, report = scan(tree, "--baseline", "baseline.json", "apps")
    assert done.returncode == 0
    assert report["notices"][-1] == ("findings recorded in the baseline baseline.json but no longer found: 1 "
                                     "(refresh it with --write-baseline baseline.json)")


def test_same_object_twice_counts_twice(tree):
    (tree / "apps" / "web.yaml").write_text(ingress("web"))
    scan(tree, "--write-baseline", "baseline.json", "apps")
    (tree / "apps" / "web.yaml").write_text(ingress("web") + "---\n" + ingress("web"))
    done, report = scan(tree, "--baseline", "baseline.json", "apps")
    assert done.returncode == 1 and len(report["findings"]) == 1


def test_baseline_from_config(tree):
    (tree / ".git").mkdir()
    (tree / ".kubehop.yaml").write_text("baseline: ci/baseline.json\n")
    (tree / "ci").mkdir()
    done = run_kubehop("scan", "--write-baseline", "ci/baseline.json", "apps", cwd=tree)
    assert done.returncode == 0
    assert run_kubehop("scan", "apps", cwd=tree).returncode == 0


@pytest.mark.parametrize("content, expected", [
    (None, "cannot read the baseline (No such file or directory); create it with --write-baseline"),
    ("{not json", "not a kubehop baseline"),
    ('{"kubehop_baseline": 2, "findings": []}', "not a kubehop baseline"),
])
def test_unusable_baseline_is_a_usage_error(tree, content, expected):
    if content is not None:
        (tree / "baseline.json").write_text(content)
    done = run_kubehop("scan", "--no-config", "--baseline", "baseline.json", "apps", cwd=tree)
    assert done.returncode == 2
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_baseline_schema_error_names_the_file_once(tree):
    (tree / "baseline.json").write_text("[]")
    done = run_kubehop("scan", "--no-config", "--baseline", "baseline.json", "apps", cwd=tree)
    assert done.returncode == 2
    assert "baseline.json: not a kubehop baseline: (top): [] is not of type 'object'" in done.stderr
    assert done.stderr.count("baseline.json") == 1
