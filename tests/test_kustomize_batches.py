"""Kustomizations that read no file in common are built together, several to one kustomize run
(sources/kustomize/batches.py): what the scan reports is what building each alone reports, whether the
run holds them all, fails (two objects with one id), or holds one that does not build."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import kustomize_or_skip, run_kubehop, write_tree
from scanner.sources.kustomize import batches

APP = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      volumes: [{{name: old, gitRepo: {{repository: "https://example.com/{name}.git"}}}}]
      containers: [{{name: app, image: "nginx:1.27"}}]
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {name}
spec: {{maxUnavailable: 1}}
"""


def _tree(tmp_path, names: list[str], extra: dict[str, str] | None = None):
    files = {}
    for name in names:
        files[f"apps/{name}/app.yaml"] = APP.format(name=name)
        files[f"apps/{name}/kustomization.yaml"] = (f"namespace: {name}\nresources: [app.yaml]\n"
                                                    f"configMapGenerator: [{{name: {name}-settings, literals: [a=b]}}]\n"
                                                    f"commonLabels: {{team: {name}}}\n")
    return write_tree(tmp_path / "repo", {**files, **(extra or {})})


def _with_shared_role(tree, names: list[str]):
    """Each of `names` also makes the ClusterRole `shared`: each builds alone, and they fail together."""
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: shared}\nrules: []\n"
    for name in names:
        (tree / "apps" / name / "role.yaml").write_text(role)
        path = tree / "apps" / name / "kustomization.yaml"
        path.write_text(path.read_text().replace("resources: [app.yaml]", "resources: [app.yaml, role.yaml]"))
    return tree


@pytest.fixture
def counted(tmp_path, monkeypatch):
    """kustomize (or kubectl) behind a script that counts its runs."""
    command = kustomize_or_skip()
    log = tmp_path / "runs.log"
    script = tmp_path / "kustomize-counted"
    script.write_text(f"#!/bin/sh\necho run >> '{log}'\nexec '{command[0]}' \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL", str(script))
    return lambda: len(log.read_text().splitlines()) if log.exists() else 0


def _scan(tree, monkeypatch, batch: int) -> dict:
    monkeypatch.setattr(batches, "MAX_BATCH", batch)
    done = run_kubehop("scan", "--no-config", "--format", "json", "--target", "1.36", str(tree),
                       env={"KUBEHOP_CACHE_DIR": str(tree.parent / f"cache-{batch}")})
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return json.loads(done.stdout)


def _findings(report: dict) -> list:
    return sorted(json.dumps(f, sort_keys=True) for f in report["findings"])


def test_independent_kustomizations_are_built_in_one_run_as_each_alone(tmp_path, monkeypatch, counted):
    tree = _tree(tmp_path, ["web", "api", "jobs", "mail"])
    alone = _scan(tree, monkeypatch, 1)
    runs_alone = counted()
    together = _scan(tree, monkeypatch, 24)
    assert counted() - runs_alone == 1 and runs_alone == 4
    assert _findings(together) == _findings(alone) and together["summary"] == alone["summary"]
    via = {f.get("via") for f in together["findings"] if f["rule"].startswith("policy/")}
    assert via == {None} or all(v.startswith("kustomize build") for v in via)
    assert together["diagnostics"] == alone["diagnostics"] == []


def test_a_run_that_fails_is_built_again_one_by_one(tmp_path, monkeypatch, counted):
    """Two kustomizations that each make the ClusterRole `shared` build alone, and fail together."""
    tree = _with_shared_role(_tree(tmp_path, ["web", "api"]), ["web", "api"])
    alone = _scan(tree, monkeypatch, 1)
    runs_alone = counted()
    together = _scan(tree, monkeypatch, 24)
    assert counted() - runs_alone == 1 + runs_alone  # the failed run, then each again
    assert _findings(together) == _findings(alone) and together["diagnostics"] == alone["diagnostics"]


def test_one_kustomization_that_does_not_build_is_reported_as_alone(tmp_path, monkeypatch, counted):
    tree = _tree(tmp_path, ["web", "api", "jobs"], {"apps/broken/kustomization.yaml": "resources: [missing.yaml]\n"})
    alone, together = _scan(tree, monkeypatch, 1), _scan(tree, monkeypatch, 24)
    assert _findings(together) == _findings(alone)
    assert together["diagnostics"] == alone["diagnostics"]
    assert any("broken" in d["file"] for d in together["diagnostics"])


def test_kustomizations_that_read_a_file_in_common_are_not_batched_together(tmp_path):
    tree = _tree(tmp_path, ["web"], {
        "shared/base.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n",
        "over/a/kustomization.yaml": "resources: [../../shared/base.yaml]\nnamePrefix: a-\n",
        "over/b/kustomization.yaml": "resources: [../../shared/base.yaml]\nnamePrefix: b-\n"})

    class Plan:
        def __init__(self, folder):
            from scanner.sources.kustomize.refs import closure
            self.folder, self.root, self.unrestricted = str(folder), os.path.realpath(tree), False
            self.reach = closure(self.folder, self.root)

    plans = [Plan(tree / "over" / "a"), Plan(tree / "over" / "b"), Plan(tree / "apps" / "web")]
    together, alone = batches.batches(plans, lambda plan: True)
    assert [[p.folder for p in b.plans] for b in together] == [[plans[0].folder, plans[2].folder]]
    assert [p.folder for p in alone] == [plans[1].folder]


def test_a_kustomization_naming_a_missing_file_is_built_alone_from_the_start(tmp_path, monkeypatch, counted):
    """Its build fails, and in a run with others it would fail them all: one run for the seven, one for it."""
    names = [f"app{i}" for i in range(7)]
    tree = _tree(tmp_path, names, {"apps/zbroken/kustomization.yaml": "resources: [missing.yaml]\n"})
    alone = _scan(tree, monkeypatch, 1)
    runs_alone = counted()
    together = _scan(tree, monkeypatch, 24)
    assert runs_alone == 8 and counted() - runs_alone == 2
    assert _findings(together) == _findings(alone) and together["diagnostics"] == alone["diagnostics"]


def test_the_kustomization_kustomize_names_in_a_failed_run_is_built_alone(tmp_path, monkeypatch, counted):
    """A resource that is no YAML: the run fails naming that kustomization, which is built alone, and the
    others together again (three runs, not a run per halving)."""
    names = [f"app{i}" for i in range(7)]
    tree = _tree(tmp_path, names, {"apps/zbroken/kustomization.yaml": "resources: [bad.yaml]\n",
                                   "apps/zbroken/bad.yaml": "kind: ConfigMap\nmetadata: {name: x\n"})
    alone = _scan(tree, monkeypatch, 1)
    runs_alone = counted()
    together = _scan(tree, monkeypatch, 24)
    assert runs_alone == 8 and counted() - runs_alone == 3
    assert _findings(together) == _findings(alone) and together["diagnostics"] == alone["diagnostics"]
    assert any("zbroken" in d["file"] for d in together["diagnostics"])


def test_a_failed_run_that_names_no_kustomization_is_tried_again_in_halves(tmp_path, monkeypatch, counted):
    """Eight kustomizations, two of which make the ClusterRole `shared`: halves, not eight runs of one."""
    tree = _with_shared_role(_tree(tmp_path, [f"app{i}" for i in range(8)]), ["app0", "app7"])
    alone = _scan(tree, monkeypatch, 1)
    runs_alone = counted()
    together = _scan(tree, monkeypatch, 24)
    assert runs_alone == 8 and counted() - runs_alone < 8
    assert _findings(together) == _findings(alone) and together["diagnostics"] == alone["diagnostics"]


def test_without_keeps_what_each_other_kustomization_reads():
    batch = batches.Batch(["a", "b", "c"], {"/a.yaml": 0, "/b.yaml": 1, "/c1.yaml": 2, "/c2.yaml": 2})
    rest = batches.without(batch, 1)
    assert rest.plans == ["a", "c"] and rest.files == {"/a.yaml": 0, "/c1.yaml": 1, "/c2.yaml": 1}
