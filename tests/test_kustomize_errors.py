"""A failed kustomize build, told as its cause: once, where it lies, from the repository root.

Real builds (every kubectl found: the one on PATH and the one scripts/get-tools.sh fetches, whose
kustomize words errors differently) of one small tree that is broken in each usual way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import run_kubehop
from scanner.sources.kustomize.errors import Paths, error_text, read_cause
from scanner.sources.tools.find import cache_dir

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n"
TREE = {
    "missing/kustomization.yaml": "resources:\n  - ok.yaml\n  - cni\n",
    "missing/ok.yaml": CONFIG_MAP.format("ok"),
    "nested/kustomization.yaml": "resources:\n  - b\n",
    "nested/b/kustomization.yaml": "resources:\n  - c\n",
    "nested/b/c/kustomization.yaml": "namespace: x\nresources:\n  - gone.yaml\n",
    "generator/kustomization.yaml": "configMapGenerator:\n  - name: c\n    files:\n      - ./configs/config.yml\n",
    "no-kustomization/kustomization.yaml": "resources:\n  - plain\n",
    "no-kustomization/plain/cm.yaml": CONFIG_MAP.format("plain"),
    "empty/kustomization.yaml": "",
    "uses-empty/kustomization.yaml": "resources:\n  - ../empty\n",
    "bad-yaml/kustomization.yaml": "resources:\n  - web.yaml\n",
    "bad-yaml/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels: a: b\n",
    "sops/kustomization.yaml": "resources:\n  - secret.yaml\n",
    "sops/secret.yaml": CONFIG_MAP.format("s") + "---\nsops:\n  version: 3.7.1\n",
    "plugin/kustomization.yaml": "generators:\n  - tshirt.yaml\n",
    "plugin/tshirt.yaml": "apiVersion: example.com/v1\nkind: Tshirt\nmetadata:\n  name: t\n",
}
EXPECTED = {
    ("missing/kustomization.yaml", 3): "resource cni does not exist (listed in missing/kustomization.yaml)",
    ("nested/b/c/kustomization.yaml", 3):
        "resource gone.yaml does not exist (listed in nested/b/c/kustomization.yaml)",
    ("generator/kustomization.yaml", 4):
        "configMapGenerator file ./configs/config.yml does not exist (listed in generator/kustomization.yaml)",
    ("no-kustomization/kustomization.yaml", 2): "no-kustomization/plain is a folder without a kustomization.yaml "
                                                "(resource plain, listed in no-kustomization/kustomization.yaml)",
    ("empty/kustomization.yaml", None): "empty/kustomization.yaml is empty: kustomize cannot build it",
    ("bad-yaml/web.yaml", 5): "invalid YAML: mapping values are not allowed in this context",  # its reading's only
    ("sops/kustomization.yaml", 2): "resource secret.yaml holds a document without metadata, which is no object "
                                    "(listed in sops/kustomization.yaml)",
}


def _kubectls() -> list[str]:
    found = {}
    for path in (shutil.which("kubectl"), str(cache_dir() / "tools" / "kubectl" / "kubectl")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            version = subprocess.run([path, "version", "--client"], capture_output=True, text=True).stdout
            found.setdefault(version, path)
    return list(found.values())


@pytest.fixture(params=_kubectls() or [None])
def kubectl(request) -> str:
    if request.param is None:
        pytest.skip("no kubectl found: run `kubehop tools install`")
    return request.param


@pytest.fixture
def broken_tree(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository root: paths are named from here
    for path, text in TREE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def test_each_cause_is_one_input_problem_at_the_entry_that_is_broken(broken_tree, kubectl):
    proc = run_kubehop("scan", "--target", "1.36", "--format", "json", str(broken_tree),
                       env={"KUBEHOP_KUSTOMIZE": "", "KUBEHOP_KUBECTL": kubectl})
    assert "Traceback" not in proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert proc.returncode == 3  # the tree is broken: Flux could not build it either
    problems = {(d["file"], d["line"]): d["message"] for d in report["diagnostics"]}
    assert problems == EXPECTED  # the empty file once (not also as an "empty file" notice)
    assert all(len(d["message"]) < 200 for d in report["diagnostics"])
    unrendered = {u["file"]: u["reason"] for u in report["unrendered"]}
    assert unrendered["nested"] == unrendered["nested/b"] == \
        "not built because nested/b/c could not be built (see input problems)"
    assert unrendered["uses-empty"] == "not built because empty could not be built (see input problems)"
    assert unrendered["missing"] == "kustomize build failed (see input problems)"
    assert unrendered["plugin"] == "needs the kustomize plugin 'Tshirt', which kubehop does not run; not built"
    assert str(broken_tree) not in proc.stdout.decode()  # never the runner's own paths


ROOT = "/srv/runner/work/repo"


def _cause(text: str, built: str = f"{ROOT}/apps/web"):
    return read_cause(text, built, Paths(ROOT, "repo", base="/tmp/kubehop-kustomize-1/x/wrapper"))


def test_an_error_not_recognised_falls_back_to_its_innermost_clause_from_the_repository_root():
    cause = _cause("accumulating resources: accumulation err='accumulating resources from "
                   "'../../../../srv/runner/work/repo/apps/web': '/srv/runner/work/repo/apps/web' must resolve to a "
                   "file': recursed accumulation of path '/srv/runner/work/repo/apps/web': something new went wrong "
                   "with '/srv/runner/work/repo/apps/web/odd.yaml' and /etc/passwd")
    assert cause.folder == f"{ROOT}/apps/web"
    assert cause.message == ("something new went wrong with 'apps/web/odd.yaml' and …/passwd "
                             "(in apps/web/kustomization.yaml)")
    wrapper_level = _cause("accumulating resources: accumulation err='accumulating resources from "
                           "'../../../../srv/runner/work/repo/apps/web': boom at ../../../../srv/runner/work/repo/x")
    assert ROOT not in wrapper_level.message and "srv/runner" not in wrapper_level.message


def test_a_long_clause_is_cut_from_the_front_where_the_chain_is():
    cause = _cause(f"{'wrapped: ' * 100}the real reason")
    assert cause.message.startswith("…") and "the real reason (in apps/web" in cause.message
    assert len(cause.message) < 400


def test_a_component_quoted_inside_the_chain_is_read_through_its_quotes():
    text = ('accumulating components: accumulateDirectory: "recursed accumulation of path '
            f"'{ROOT}/components/broken': accumulating resources: accumulation err='accumulating resources from "
            f"'gone.yaml': evalsymlink failure on '{ROOT}/components/broken/gone.yaml' : lstat "
            f"{ROOT}/components/broken/gone.yaml: no such file or directory': must build at directory: not a "
            f"valid directory: evalsymlink failure on '{ROOT}/components/broken/gone.yaml' : lstat "
            f'{ROOT}/components/broken/gone.yaml: no such file or directory"')
    cause = _cause(text)
    assert cause.folder == f"{ROOT}/components/broken"
    assert cause.message == "components/broken/gone.yaml does not exist (needed by components/broken/kustomization.yaml)"


def test_an_error_on_several_lines_is_read_whole():
    stderr = ("error: trouble configuring builtin PatchTransformer with config: `\npath: p.yaml\n`: failed to get "
              "the patch file from path(p.yaml): evalsymlink failure on '/r/p.yaml' : lstat /r/p.yaml: no such "
              "file or directory\n")
    assert error_text(stderr).endswith("lstat /r/p.yaml: no such file or directory")


def test_a_cause_followed_by_a_yaml_dump_is_shown_first():
    """kustomize prints the node it could not use after the cause: the cause is kept, not the dump's tail."""
    dump = " ".join(f"key-{n}: value-{n}" for n in range(60))
    cause = _cause(f"visit traversal on path: [spec template]: wrong node kind: expected MappingNode but got "
                   f"SequenceNode: node contents: {dump}")
    assert cause.message.startswith("visit traversal on path: [spec template]: wrong node kind: expected MappingNode "
                                    "but got SequenceNode: node contents: key-0: value-0 key-1: value-1")
    assert "…" in cause.message and len(cause.message) < 340


def test_a_real_wrong_node_kind_keeps_its_cause(tmp_path, kubectl):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kustomization.yaml").write_text("resources: [deploy.yaml]\npatches:\n  - path: patch.yaml\n")
    (tmp_path / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                          "spec:\n  template:\n    - a: 1\n")
    labels = "".join(f"        key-{n}: value-{n}-of-a-long-label\n" for n in range(30))
    (tmp_path / "patch.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                         f"spec:\n  template:\n    metadata:\n      labels:\n{labels}")
    proc = run_kubehop("scan", "--format", "json", str(tmp_path), env={"KUBEHOP_KUSTOMIZE": "", "KUBEHOP_KUBECTL": kubectl})
    [problem] = json.loads(proc.stdout)["diagnostics"]
    assert "wrong node kind: expected SequenceNode but got MappingNode" in problem["message"]
    assert problem["message"].index("wrong node kind") < 60
