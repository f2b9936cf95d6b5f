"""A scan lets go of each file's composed nodes once its per-object checks have run (issue 13 item 5):
the findings stay exact, a later reader gets the node composed again, and scans do not pile up."""

from __future__ import annotations

import gc
from pathlib import Path

from yaml.nodes import Node

from scanner.model import Manifest
from scanner.scan import scan
from scanner.sources import collect
from scanner.sources.files.retention import Retention
from scanner.versions import Minor

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
"""
WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  size: big\n"
GIT_REPO_VOLUME = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: nginx}]
  volumes:
  - name: src
    gitRepo: {repository: https://example.com/x.git}
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "widget.yaml").write_text("# a comment first\n" + WIDGET)
    (tmp_path / "pod.yaml").write_text(GIT_REPO_VOLUME)
    return tmp_path


def test_findings_from_released_and_recomposed_objects_keep_their_lines(tmp_path):
    result = scan([str(_tree(tmp_path))], Minor(1, 36))
    where = {(f.rule_id.split("/")[0], Path(f.origin.path).name, f.origin.line) for f in result.findings}
    assert ("crd", "widget.yaml", 6) in where  # schema check of a custom resource (kept: the CRD checks read it)
    assert any(name == "pod.yaml" and line == 8 for _, name, line in where)  # gitRepo, checked as it was read


def test_released_objects_are_composed_again_on_demand(tmp_path):
    manifests = collect([str(_tree(tmp_path))]).manifests
    retention = Retention()
    retention.release(manifests)
    held = {m.kind: m._node is not None for m in manifests}
    assert held == {"CustomResourceDefinition": True, "Widget": True, "Pod": False}
    pod = next(m for m in manifests if m.kind == "Pod")
    assert pod.node.start_mark.line == 0 and pod.body["spec"]["volumes"][0]["name"] == "src"
    assert pod._node is None and pod._body is None  # composed for the reader, not kept
    (tmp_path / "pod.yaml").write_text("# moved down\n" + GIT_REPO_VOLUME)
    assert pod.node is None  # the file changed: the object is no longer where it was read


def test_a_repeated_crd_is_released_the_first_kept(tmp_path):
    (tmp_path / "a.yaml").write_text(CRD)
    (tmp_path / "b.yaml").write_text(CRD)
    manifests = collect([str(tmp_path)]).manifests
    Retention().release(manifests)
    assert [m._node is not None for m in manifests] == [True, False]


def _live_nodes() -> int:
    gc.collect()
    return sum(isinstance(o, (Node, Manifest)) for o in gc.get_objects())


def test_repeated_scans_in_one_process_do_not_pile_up(tmp_path):
    for n in range(30):
        (tmp_path / f"pod-{n}.yaml").write_text(GIT_REPO_VOLUME)
    scan([str(tmp_path)], Minor(1, 36))
    after_one = _live_nodes()
    for _ in range(3):
        scan([str(tmp_path)], Minor(1, 36))
    assert _live_nodes() <= after_one


def test_files_read_by_worker_processes_give_the_same_report(tmp_path, monkeypatch):
    """Many files are read in worker processes (sources/parallel.py): the report is the same."""
    import shutil

    from conftest import FIXTURES
    from scanner.report import render
    from scanner.sources.files import parallel

    _tree(tmp_path)
    shutil.copytree(FIXTURES / "seed002", tmp_path / "seed002")  # Flux, pins, values with *_version keys
    for n in range(40):
        (tmp_path / f"pod-{n}.yaml").write_text(GIT_REPO_VOLUME.replace("name: p", f"name: p{n}"))
    # A dumped object (server-side state): cluster state, told apart while its node is held.
    (tmp_path / "dumped.yaml").write_text(GIT_REPO_VOLUME.replace("name: p}", "name: dumped, uid: 1a2b}"))
    files = sum(1 for p in tmp_path.rglob("*.y*ml"))
    reports = []
    for threshold in (files + 1, 2):  # in the scan's process, then in workers
        monkeypatch.setattr(parallel, "PARALLEL_FROM", threshold)
        reports.append(render(scan([str(tmp_path)], Minor(1, 36), Minor(1, 31)), "json"))
    assert reports[0] == reports[1]
    assert '"crd/' in reports[1] and "gitRepo" in reports[1]
    assert "carry server-side state" in reports[1] and '"name": "dumped"' not in reports[1]


def _documents(count: int) -> str:
    return "---\n".join(GIT_REPO_VOLUME.replace("name: p}", f"name: p{n}}}") for n in range(count))


def _nodes_alive() -> int:
    return sum(isinstance(o, Node) for o in gc.get_objects())


def test_a_scan_holds_one_document_of_a_file_at_a_time(tmp_path, monkeypatch):
    """A file of many documents is composed and checked a document at a time, each document's nodes let
    go before the next is composed: the nodes alive never come near the whole file's (issue 27)."""
    (tmp_path / "pods.yaml").write_text(_documents(60))
    alive: list[int] = []
    release = Retention.release

    def counting(self, manifests):
        alive.append(_nodes_alive())
        release(self, manifests)

    monkeypatch.setattr(Retention, "release", counting)
    gc.collect()
    before = _nodes_alive()
    result = scan([str(tmp_path)], Minor(1, 36))
    one_document = _nodes_alive_in(GIT_REPO_VOLUME)
    assert len(result.findings) == 60 and {f.origin.line for f in result.findings} == {8 + 9 * n for n in range(60)}
    assert len(alive) == 60  # read once, a document at a time: the clusters are told from that read (fleet.py)
    assert max(alive) - before < 3 * one_document  # not 60 documents' worth


def _nodes_alive_in(text: str) -> int:
    import yaml

    stack, count = [yaml.compose(text, Loader=yaml.CSafeLoader)], 0
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node.value, list):
            stack.extend(n for item in node.value for n in (item if isinstance(item, tuple) else (item,)))
    return count


def _read(text: str, hook=None):
    from scanner.sources.files.source import read_manifest_file, read_manifest_file_streamed
    from scanner.sources.files.walk import ManifestFile

    if hook is None:
        return read_manifest_file(ManifestFile("-"), text.encode())
    return read_manifest_file_streamed(ManifestFile("-"), text.encode(), hook)


def _what(found) -> tuple:
    return ([(m.kind, m.name, m.origin) for m in found.manifests], sorted(found.diagnostics, key=str),
            found.unrendered)


def test_a_yaml_error_in_a_later_document_reads_the_file_whole():
    """The documents before a broken one were handed on already: they are dropped, and the whole text is
    read as without the hook (the documents around the broken one, each at its line), seen once."""
    text = _documents(3).replace("name: p2}", "name: p2}\n  bad: [") + "---\n" + _documents(1)
    seen: list[list[str | None]] = []
    found, answers = _read(text, lambda part: seen.append([m.name for m in part.manifests]) or ([], None))
    assert seen == [["p0"], ["p1"], ["p0", "p1", "p0"]]  # two documents streamed, then the file whole
    assert answers == [([], None)] and _what(found) == _what(_read(text))
    assert [d.line for d in found.diagnostics] == [22]  # the broken document's line in the file


def test_a_template_in_a_later_document_leaves_the_file_unrendered():
    text = _documents(2) + "---\n" + GIT_REPO_VOLUME.replace("image: nginx", "image: {{ .Values.image }}")
    found, answers = _read(text, lambda part: ([], None))
    assert answers == [] and found.manifests == [] and _what(found) == _what(_read(text))
    assert [d.message for d in found.unrendered] == ["holds Helm template syntax; not rendered"]


def test_an_anchor_redefined_in_a_later_document_reads_the_file_whole():
    redefined = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &x 1\n  b: &x 2\n  c: *x\n"
    text = _documents(2) + "---\n" + redefined
    found, answers = _read(text, lambda part: ([], len(part.manifests)))
    assert answers == [([], 3)] and _what(found) == _what(_read(text))
    assert found.manifests[2].body["data"] == {"a": 1, "b": 2, "c": 2}


def test_the_files_composed_again_are_remembered_up_to_a_bound_of_text(tmp_path, monkeypatch):
    """Readers that ask for the same objects in turn find them composed (many small files), while the
    nodes remembered stay bounded by their text, and the one asked for last is always kept."""
    from scanner.model import Manifest, Origin
    from scanner.sources.files import retention

    composed = []
    real = retention._nodes_of
    monkeypatch.setattr(retention, "_nodes_of", lambda path: composed.append(path) or real(path))
    small = []
    for n in range(40):
        path = tmp_path / f"cm{n}.yaml"
        path.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{n}}}\n")
        small.append(Manifest("v1", "ConfigMap", f"cm{n}", None, Origin(str(path), 1, 1)))
    recomposer = retention.Recomposer()
    for _ in range(2):  # two readers in turn
        assert all(recomposer(m) is not None for m in small)
    assert len(composed) == 40
    monkeypatch.setattr(retention, "_TEXT_REMEMBERED", 200)
    recomposer, composed[:] = retention.Recomposer(), []
    for _ in range(2):
        assert all(recomposer(m) is not None for m in small)
    assert len(composed) == 80 and len(recomposer._files) <= 4


def test_secrets_are_not_composed_again_in_a_tree_without_application_sets(tmp_path, monkeypatch):
    """Which Secrets are Argo CD cluster Secrets (their labels) only an ApplicationSet asks: a tree of
    plain Secrets reads none of their files again once their checks have run."""
    from scanner.sources.files import retention

    composed = []
    real = retention._nodes_of
    monkeypatch.setattr(retention, "_nodes_of", lambda path: composed.append(path) or real(path))
    for n in range(3):
        (tmp_path / f"secret{n}.yaml").write_text(
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s{n}\n  labels: {{app: web}}\nstringData: {{a: b}}\n")
    (tmp_path / "ingress.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web}\n")
    result = scan([str(tmp_path)], Minor(1, 36))
    assert [f.rule_id for f in result.findings if f.kind == "Ingress"] and composed == []


def test_what_a_worker_sends_of_a_file_crosses_whole():
    """A worker process sends each file's ScanInput and its objects' origins pickled, in short forms
    (only the fields that hold something; an origin's four fields): they arrive equal."""
    import dataclasses
    import pickle

    from scanner.model import Diagnostic, Origin
    from scanner.sources.scan_input import ScanInput

    origin = Origin("a.yaml", 3, 5, "helm release x (chart y)")
    assert pickle.loads(pickle.dumps(origin)) == origin and pickle.loads(pickle.dumps(Origin("b.yaml"))) == Origin("b.yaml")
    values = {"manifests": [Manifest("v1", "ConfigMap", "c", "ns", origin)], "diagnostics": [Diagnostic("a.yaml", "m", 2)],
              "files_read": 1, "excluded": 2, "latent": {"via"}, "rendered_with": {"helm": "v4"}, "notices": ["n"],
              "unreferenced": {"a.yaml": "kustomization.yaml"}, "scanned": ["."]}
    full = ScanInput(**values)
    back = pickle.loads(pickle.dumps(full))
    assert [(m.api_version, m.kind, m.name, m.namespace, m.origin) for m in back.manifests] == \
        [("v1", "ConfigMap", "c", "ns", origin)]
    assert {f.name: getattr(back, f.name) for f in dataclasses.fields(ScanInput) if f.name != "manifests"} == \
        {f.name: getattr(full, f.name) for f in dataclasses.fields(ScanInput) if f.name != "manifests"}
    assert pickle.loads(pickle.dumps(ScanInput())) == ScanInput()
