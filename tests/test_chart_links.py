"""Chart files that are symbolic links out of the scanned tree are never read, by helm or by kubehop's
own text reading: helm gets a copy of the chart without them, with a notice (real helm)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_kubehop, tool_or_skip

SECRET = "s3cr3t-outside-the-tree"
LEAKY = """\
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web{{ .Files.Get "leak.txt" | trim }}
spec:
  backend:
    serviceName: web
    servicePort: 80
"""
OUTSIDE_MANIFEST = """\
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: outside-{SECRET}
spec:
  minAvailable: 1
""".replace("{SECRET}", SECRET)
SHARED = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: shared
spec:
  schedule: "* * * * *"
  jobTemplate: {spec: {template: {spec: {containers: [{name: x, image: x}]}}}}
"""


@pytest.fixture
def layout(tmp_path) -> tuple[Path, Path]:
    """tree/web: a chart whose leak.txt and templates/outside.yaml link out of tree/, and whose
    templates/shared.yaml links to a file elsewhere in tree/ (followed: it is in the scanned tree)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "pdb.yaml").write_text(OUTSIDE_MANIFEST)
    tree = tmp_path / "tree"
    chart = tree / "web"
    (chart / "templates").mkdir(parents=True)
    (tree / "shared").mkdir()
    (tree / "shared" / "cronjob.yaml.tpl").write_text(SHARED)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 1.0.0\n")
    (chart / "templates" / "ingress.yaml").write_text(LEAKY)
    os.symlink(outside / "secret.txt", chart / "leak.txt")
    os.symlink(outside / "pdb.yaml", chart / "templates" / "outside.yaml")
    os.symlink(tree / "shared" / "cronjob.yaml.tpl", chart / "templates" / "shared.yaml")
    return tree, chart


@pytest.mark.parametrize("how", ["rendered", "helm fails", "--no-render"])
def test_links_out_of_the_tree_are_never_read(layout, tmp_path, how):
    tree, chart = layout
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    flags = ["--no-render"] if how == "--no-render" else []
    if how == "helm fails":
        (chart / "templates" / "broken.yaml").write_text("{{ required \"needs a value\" .Values.nothing }}\n")
    proc = run_kubehop("scan", "--format", "json", "--target", "1.25", *flags, str(tree), env=env)
    assert b"Traceback" not in proc.stderr
    assert SECRET.encode() not in proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    kinds = {f["object"]["kind"]: f["file"] for f in report["findings"]}
    assert "PodDisruptionBudget" not in kinds  # the linked template outside the tree
    assert kinds["Ingress"] == str(chart / "templates" / "ingress.yaml")
    assert kinds["CronJob"] == str(chart / "templates" / "shared.yaml")  # a link inside the tree is followed
    (notice,) = [d for d in report["diagnostics"] if "left unread" in d["message"]]
    assert notice["level"] == "notice" and notice["file"] == str(chart) and "leak.txt" in notice["message"]
    assert "templates/outside.yaml" in notice["message"]
