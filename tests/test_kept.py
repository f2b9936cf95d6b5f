"""A scan reads each plain file once (issue 27): Flux's post-build substitution must know its variables
before any object is read, so the plan's reading reads every plain file's text first, and composes the
files holding a Flux Kustomization or the ConfigMap it substitutes from; the main read takes that
text and those documents (sources/files/kept.py) instead of reading and composing them again. What
the scan finds is the same either way, in the scan's process and in worker processes. Modelled on
onedr0p's and joryirving's home-ops: `ks.yaml` files of Flux Kustomizations substituting from a
cluster-settings ConfigMap."""

from __future__ import annotations

import collections
import textwrap

import pytest

from conftest import write_tree
from scanner.model import Diagnostic
from scanner.report import render
from scanner.scan import scan
from scanner.sources.files import kept, parallel, source
from scanner.sources.yaml.yamldoc import TemplateSyntax, compose_streamable, stream_composed, stream_text
from scanner.versions import Minor

TREE = {
    "kubernetes/flux/cluster/ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: apps, namespace: flux-system}
        spec:
          interval: 1h
          path: ./kubernetes/apps
          prune: true
          sourceRef: {kind: GitRepository, name: flux-system}
          postBuild:
            substituteFrom:
              - {kind: ConfigMap, name: cluster-settings}
        ---
        apiVersion: policy/v1beta1
        kind: PodSecurityPolicy
        metadata: {name: restricted}
        spec: {}
        """,
    "kubernetes/flux/vars/cluster-settings.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cluster-settings, namespace: flux-system}
        data:
          AUTOSCALING_API: autoscaling/v2beta2
        """,
    "kubernetes/apps/web/hpa.yaml": """
        apiVersion: ${AUTOSCALING_API}
        kind: HorizontalPodAutoscaler
        metadata: {name: web, namespace: default}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
          minReplicas: 1
          maxReplicas: 3
        """,
    "kubernetes/flux/cluster/broken-ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: broken, namespace: flux-system}
        spec: {path: ./x, sourceRef: {kind: GitRepository, name: flux-system}
        ---
        apiVersion: extensions/v1beta1
        kind: Ingress
        metadata: {name: old}
        spec: {}
        """,
    "kubernetes/flux/cluster/odd-ks.yaml": """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: odd, namespace: flux-system, name: twice}
        spec: {path: ./kubernetes/elsewhere, sourceRef: {kind: GitRepository, name: flux-system}}
        ---
        apiVersion: batch/v1beta1
        kind: CronJob
        metadata: {name: loops}
        spec: &loop {again: *loop}
        """,
    "kubernetes/apps/web/kustomization.yaml": """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources: [hpa.yaml]
        """,
}


def _report(root) -> str:
    return render(scan([str(root)], Minor(1, 36), Minor(1, 21)), "json")


def _counted(monkeypatch, module) -> collections.Counter:
    """The paths `module` reads with read_file, counted."""
    calls: collections.Counter = collections.Counter()
    read = module.read_file

    def counting(path, *args):
        calls[path] += 1
        return read(path, *args)

    monkeypatch.setattr(module, "read_file", counting)
    return calls


def test_each_plain_file_is_read_once_its_text_taken_by_the_main_read(tmp_path, monkeypatch):
    root = write_tree(tmp_path, TREE)
    first, again = _counted(monkeypatch, kept), _counted(monkeypatch, source)
    taken = collections.Counter()
    take = kept.Kept.take

    def counting_take(self, path):
        found = take(self, path)
        taken[path, found is not None and found[2] is not None] += 1
        return found

    monkeypatch.setattr(kept.Kept, "take", counting_take)
    report = _report(root)
    plain = {str(root / name) for name in TREE}
    assert set(first) == plain and set(first.values()) == {1}
    assert not again  # the main read read nothing again
    composed = {path for (path, documents), _ in taken.items() if documents}
    # The Flux Kustomizations' files and the ConfigMap a substituteFrom names came composed; a file with a
    # YAML error is read whole again, as without the plan's reading.
    assert composed == {str(root / name) for name in ("kubernetes/flux/cluster/ks.yaml",
                                                      "kubernetes/flux/vars/cluster-settings.yaml",
                                                      "kubernetes/flux/cluster/odd-ks.yaml")}
    assert '"autoscaling/v2beta2"' in report and "hpa.yaml" in report


@pytest.mark.parametrize("workers", [False, True])
def test_what_the_scan_finds_is_the_same_as_when_every_file_is_read_again(tmp_path, monkeypatch, workers):
    root = write_tree(tmp_path, TREE)
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 2 if workers else 100)
    once = _report(root)
    monkeypatch.setattr(kept.Kept, "take", lambda self, path: None)
    assert _report(root) == once
    for expected in ("PodSecurityPolicy", "HorizontalPodAutoscaler", "recursive alias", "duplicate"):
        assert expected in once


def test_past_its_bound_a_file_is_read_again(tmp_path, monkeypatch):
    root = write_tree(tmp_path, TREE)
    once = _report(root)
    monkeypatch.setattr(kept, "_TEXT_KEPT", 0)
    again = _counted(monkeypatch, source)
    assert _report(root) == once
    assert set(again) == {str(root / name) for name in TREE}


TEXTS = [
    TREE["kubernetes/flux/cluster/ks.yaml"],
    TREE["kubernetes/flux/cluster/odd-ks.yaml"],  # a duplicate key, a recursive alias
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
    "- {apiVersion: v1, kind: Secret, metadata: {name: [b]}}\n",
    "apiVersion: ${API}\nkind: Thing\nmetadata: {name: x}\n---\nplain: values\n---\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tagged}\ndata: !odd {a: b}\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_documents_composed_ahead_stream_as_the_text_streams(text):
    def streamed(documents) -> tuple:
        diagnostics: list[Diagnostic] = []
        objects = [(m.api_version, m.kind, m.name, m.origin, node.start_mark.line) for node, manifests in
                   documents(diagnostics) for m in manifests]
        return objects, diagnostics

    text = textwrap.dedent(text).lstrip()
    composed = compose_streamable(text, "f.yaml")
    assert composed is not None
    ahead = streamed(lambda diagnostics: stream_composed(composed, "f.yaml", diagnostics))
    assert ahead == streamed(lambda diagnostics: stream_text(text, "f.yaml", diagnostics))


def test_a_text_that_does_not_stream_is_not_composed_ahead():
    assert compose_streamable("a: [1\nb: 2\n", "f.yaml") is None  # a YAML error: read_text reads it whole
    with pytest.raises(TemplateSyntax):
        compose_streamable("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Name }}}\n", "f.yaml")
