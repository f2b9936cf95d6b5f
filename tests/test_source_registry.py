"""The registered sources (scanner/sources/registry.py): each kind of input has its source, collect
dispatches to whatever is registered, and a source's failure is an input problem of what it read."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from scanner.model import Diagnostic
from scanner.options import ScanOptions
from scanner.sources import collect, registry
from scanner.sources.files.walk import ChartFolder, KustomizeFolder, ManifestFile
from scanner.sources.registry import PLAIN, RENDERED, RegistryError, Source
from scanner.sources.scan_input import ScanInput
from scanner.versions import Minor

DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
CHART = "apiVersion: v2\nname: demo\nversion: 0.1.0\n"
KUSTOMIZATION = "resources:\n  - deployment.yaml\n"
HELM_RELEASE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\n"
                "spec:\n  chart:\n    spec:\n      chart: app\n")
PROBLEM = "kubehop could not read this; please report it (RuntimeError: boom)"


def tree(root, files: dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def by_name(name: str) -> Source:
    return next(source for source in registry.SOURCES if source.name == name)


def test_every_kind_of_input_has_its_registered_source_with_a_module_that_reads_it():
    registry.validate(registry.SOURCES)
    assert [(s.name, s.stage) for s in registry.SOURCES] == [
        ("files", PLAIN), ("helm", RENDERED), ("kustomize", RENDERED), ("releases", RENDERED)]
    assert {s.claims for s in registry.SOURCES if s.claims} == {ManifestFile, ChartFolder, KustomizeFolder}
    assert by_name("releases").given == "helm_releases" and hasattr(ScanOptions(), "helm_releases")
    for source in registry.SOURCES:
        assert callable(registry.module_of(source).read)
    assert callable(registry.module_of(by_name("kustomize")).claim)  # it takes chart folders from helm
    assert by_name("kustomize").takes_from == "helm"
    assert by_name("helm").also_for_kinds == {"HelmRelease"}


@pytest.mark.parametrize("change, complaint", [
    ({"takes_from": "nowhere"}, "takes from nowhere, which is not registered"),
    ({"stage": "later"}, "stage must be"),
    ({"given": "helm_releases"}, "claims a kind of walked item or is given an option"),
    ({"each": False, "stage": PLAIN}, "a plain source reads one item at a time"),
])
def test_a_source_declared_wrong_is_refused(change, complaint):
    wrong = dataclasses.replace(by_name("kustomize"), **change)
    with pytest.raises(RegistryError, match=complaint):
        registry.validate((*registry.SOURCES[:2], wrong))
    with pytest.raises(RegistryError, match="share a name or claim the same kind"):
        registry.validate((*registry.SOURCES, dataclasses.replace(by_name("helm"), name="helm2")))


def test_a_module_without_read_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "fake_reader", types.ModuleType("fake_reader"))
    with pytest.raises(RegistryError, match="has no read"):
        registry.module_of(Source("fake", "fake_reader", RENDERED, given="helm_releases"))


@pytest.fixture
def fake(monkeypatch):
    """A source registered in helm's place: it claims the chart folders and records what it is given."""
    calls: list[tuple] = []
    module = types.ModuleType("fake_charts")

    def read(items, so_far, reading):
        calls.append((items, [m.kind for m in so_far.manifests], reading.target))
        if any("broken" in item.path for item in items):
            raise RuntimeError("boom")
        return ScanInput(notices=[f"fake read {len(items)}"], files_read=len(items))

    module.read = read
    monkeypatch.setitem(sys.modules, "fake_charts", module)
    sources = tuple(Source("fake", "fake_charts", RENDERED, claims=ChartFolder, also_for_kinds=frozenset({"HelmRelease"}))
                    if s.name == "helm" else s for s in registry.SOURCES)
    monkeypatch.setattr(registry, "SOURCES", sources)
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    return calls


def test_collect_hands_each_registered_source_what_it_claims(tmp_path, fake):
    root = tree(tmp_path, {"app.yaml": DEPLOYMENT, "chart/Chart.yaml": CHART, "chart/templates/x.yaml": "{{ .x }}"})
    result = collect([str(root)], Minor(1, 33))
    assert fake == [([ChartFolder(f"{root}/chart")], ["Deployment"], Minor(1, 33))]
    assert "fake read 1" in result.notices and [m.kind for m in result.manifests] == ["Deployment"]


def test_a_source_is_read_for_the_kinds_it_asks_for_even_with_nothing_walked_for_it(tmp_path, fake):
    collect([str(tree(tmp_path, {"app.yaml": DEPLOYMENT}))], Minor(1, 33))
    assert fake == []  # nothing for it
    collect([str(tree(tmp_path, {"release.yaml": HELM_RELEASE}))], Minor(1, 33))
    assert fake == [([], ["Deployment", "HelmRelease"], Minor(1, 33))]


def test_a_source_that_fails_is_an_input_problem_of_each_folder_it_read_and_the_scan_goes_on(tmp_path, fake):
    root = tree(tmp_path, {"app.yaml": DEPLOYMENT, "a/Chart.yaml": CHART, "broken/Chart.yaml": CHART})
    result = collect([str(root)], Minor(1, 33))
    assert [(d.path, d.message) for d in result.diagnostics] == [
        (f"{root}/a", PROBLEM), (f"{root}/broken", PROBLEM)]
    assert [m.kind for m in result.manifests] == ["Deployment"]


def test_a_source_read_one_item_at_a_time_fails_for_that_item_alone(tmp_path, monkeypatch):
    module = types.ModuleType("fake_dumps")

    def read(dumps, so_far, reading):
        if dumps[0].endswith("bad.json"):
            raise RuntimeError("boom")
        return ScanInput(notices=[f"read {dumps[0]}"])

    module.read = read
    monkeypatch.setitem(sys.modules, "fake_dumps", module)
    monkeypatch.setattr(registry, "SOURCES", (*registry.SOURCES[:3], Source(
        "dumps", "fake_dumps", RENDERED, given="helm_releases", each=True)))
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    result = collect([str(tree(tmp_path, {"app.yaml": DEPLOYMENT}))], Minor(1, 33),
                     ScanOptions(helm_releases=("bad.json", "good.json")))
    assert result.diagnostics == [Diagnostic("bad.json", PROBLEM)]
    assert "read good.json" in result.notices


def test_a_source_takes_the_items_it_declares_it_takes_before_the_other_reads_them(tmp_path, fake, monkeypatch):
    module = types.ModuleType("fake_kustomize")
    module.read = lambda items, so_far, reading: ScanInput(notices=[f"built {len(items)}"])
    module.claim = lambda items, theirs, reading: [chart for chart in theirs if not chart.path.endswith("inflated")]
    monkeypatch.setitem(sys.modules, "fake_kustomize", module)
    monkeypatch.setattr(registry, "SOURCES", tuple(
        Source("kustomize", "fake_kustomize", RENDERED, claims=KustomizeFolder, takes_from="fake")
        if s.name == "kustomize" else s for s in registry.SOURCES))
    root = tree(tmp_path, {"k/kustomization.yaml": KUSTOMIZATION, "k/deployment.yaml": DEPLOYMENT,
                           "inflated/Chart.yaml": CHART, "own/Chart.yaml": CHART})
    result = collect([str(root)], Minor(1, 33))
    assert [items for items, _, _ in fake] == [[ChartFolder(f"{root}/own")]]
    assert "built 1" in result.notices


@pytest.mark.parametrize("module, function, files, folder", [
    ("scanner.sources.helm.source", "read_charts", {"chart/Chart.yaml": CHART}, "chart"),
    ("scanner.sources.kustomize.source", "build_kustomizations",
     {"k/kustomization.yaml": KUSTOMIZATION, "k/deployment.yaml": DEPLOYMENT}, "k"),
])
def test_a_real_source_that_fails_is_the_folders_input_problem(tmp_path, monkeypatch, module, function, files, folder):
    def failing(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(sys.modules.get(module) or __import__(module, fromlist=["_"]), function, failing)
    monkeypatch.delenv("KUBEHOP_DEBUG", raising=False)
    root = tree(tmp_path, {"app.yaml": DEPLOYMENT, **files})
    result = collect([str(root)], Minor(1, 33))
    assert [(d.path, d.message) for d in result.diagnostics] == [(f"{root}/{folder}", PROBLEM)]
    assert "Deployment" in [m.kind for m in result.manifests]
