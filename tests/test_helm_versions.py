"""helm 3 and helm 4 render the same charts with the target's Capabilities, and give the same findings;
a helm too old to do it is named, with the version kubehop needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_kubehop, shared_or_skip
from scanner.scan import ScanOptions
from scanner.sources import collect
from scanner.sources.helm.capture import MINIMUM, find_helm, helm_version, unsupported
from scanner.sources.tools.find import cache_dir
from scanner.versions import Minor

CHARTS = "tests/fixtures/charts"
CORPUS = "corpora/helm-charts-2019/stable"
# 2019 charts with Capabilities switches, hooks, subcharts, CRDs and removed APIs.
CORPUS_CHARTS = ("chaoskube", "prometheus-operator", "nginx-ingress", "grafana", "kube-state-metrics",
                 "metrics-server", "cert-manager", "traefik", "jenkins", "elasticsearch")


def _helms() -> dict[int, str]:
    """helm by major version: the one kubehop finds, and those scripts/get-tools.sh installs."""
    found: dict[int, str] = {}
    for candidate in (find_helm(), str(cache_dir() / "tools" / "helm3" / "helm"),
                      str(cache_dir() / "tools" / "helm" / "helm")):
        if candidate and Path(candidate).is_file() and unsupported(candidate) is None:
            found.setdefault(helm_version(candidate).major, candidate)
    return found


HELMS = _helms()


def helm_or_skip(major: int) -> str:
    if major not in HELMS:
        pytest.skip(f"no helm {major} found (scripts/get-tools.sh installs helm 4, and helm 3 for these tests)")
    return HELMS[major]


def scan(helm: str, target: str, *paths: str, tmp_path: Path) -> tuple[int, dict]:
    env = {"KUBEHOP_HELM": helm, "KUBEHOP_CACHE_DIR": str(tmp_path / f"cache-{Path(helm).parent.name}")}
    proc = run_kubehop("scan", "--format", "json", "--target", target, *paths, env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def findings(report: dict) -> list[tuple]:
    return sorted((f["rule"], f["file"], f["line"], f["column"], f["via"], json.dumps(f["object"], sort_keys=True))
                  for f in report["findings"])


@pytest.mark.parametrize("target", ["1.22", "1.25", "1.36"])
def test_helm_3_and_helm_4_find_the_same(target, tmp_path):
    helm3, helm4 = helm_or_skip(3), helm_or_skip(4)
    corpus = shared_or_skip(CORPUS)
    paths = [CHARTS, *(str(corpus / name) for name in CORPUS_CHARTS)]
    code3, report3 = scan(helm3, target, *paths, tmp_path=tmp_path)
    code4, report4 = scan(helm4, target, *paths, tmp_path=tmp_path)
    assert report4["findings"], "the chart set has findings at every target"
    assert findings(report3) == findings(report4)
    assert (code3, report3["summary"]["objects"]) == (code4, report4["summary"]["objects"])
    assert [u["file"] for u in report3["unrendered"]] == [u["file"] for u in report4["unrendered"]]
    assert report3["notices"] == report4["notices"] == []


@pytest.mark.parametrize("major", [3, 4])
@pytest.mark.parametrize("target, api_version", [("1.25", "apps/v1"), ("1.15", "apps/v1beta1")])
def test_chaoskube_switch_renders_the_api_the_target_serves(major, target, api_version, monkeypatch, tmp_path):
    """chaoskube (2019) asks `.Capabilities.APIVersions.Has "apps/v1beta1"`: a 1.25 cluster says no,
    though helm's own built-in list says yes."""
    chart = shared_or_skip(f"{CORPUS}/chaoskube")
    monkeypatch.setenv("KUBEHOP_HELM", helm_or_skip(major))
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path))
    found = collect([str(chart)], Minor(*map(int, target.split("."))), ScanOptions()).manifests
    assert [(m.api_version, m.kind, m.origin.path, m.origin.line) for m in found] == [
        (api_version, "Deployment", str(chart / "templates" / "deployment.yaml"), 2 if target == "1.15" else 4)]


@pytest.mark.parametrize("major", [3, 4])
def test_capabilities_gated_fixture_under_both(major, tmp_path):
    for target, api_version, line in (("1.25", "networking.k8s.io/v1", 4), ("1.21", "extensions/v1beta1", 2)):
        code, report = scan(helm_or_skip(major), target, f"{CHARTS}/capabilities-gated", tmp_path=tmp_path)
        ingress = [f for f in report["findings"] if f["object"]["kind"] == "Ingress"]
        if api_version == "extensions/v1beta1":  # still served at 1.21, removed at 1.22: a warning now
            assert [(f["line"], f["object"]["apiVersion"]) for f in ingress] == [(line, api_version)]
        else:
            assert ingress == [] and code == 0


def _fake_helm(folder: Path, version: str) -> str:
    helm = folder / "helm"
    helm.write_text(f"#!/bin/sh\necho '{version}'\n")
    helm.chmod(0o755)
    return str(helm)


def test_a_helm_too_old_is_named_with_the_version_needed(tmp_path):
    old = _fake_helm(tmp_path, "v3.12.3+g3a31588")
    proc = run_kubehop("scan", "--format", "json", "--target", "1.25", f"{CHARTS}/capabilities-gated",
                       env={"KUBEHOP_HELM": old, "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")})
    (notice,) = json.loads(proc.stdout)["notices"]
    assert f"{old} is helm v3.12.3+g3a31588" in notice
    assert f"helm {MINIMUM[0]}.{MINIMUM[1]} or later" in notice and "`kubehop tools install`" in notice
    assert "read as text" in notice


def test_an_old_helm_on_path_gives_way_to_the_cached_one(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    _fake_helm(tmp_path / "bin", "v3.8.0+gd141386")
    cached = tmp_path / "cache" / "tools" / "helm"
    cached.mkdir(parents=True)
    new = _fake_helm(cached, "v4.1.4+g05fa379")
    monkeypatch.delenv("KUBEHOP_HELM", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    assert find_helm() == new
    Path(new).unlink()
    assert find_helm() == str(tmp_path / "bin" / "helm")  # the only one: its notice will name it
