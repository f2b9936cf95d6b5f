"""A chart version of its own numbering ships one app patch, which the data lists (compat-matrix
chart_versions app_patches): ingress-nginx chart 4.10.1 ships controller 1.10.1, which the project's
table lists with Kubernetes 1.30, while 4.10.0 ships 1.10.0 (up to 1.29). A chart pin is judged by the
range of the patch it ships; a chart version the data does not list, as before (its patch unknown)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import invoke, write_tree as write

RELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: ingress-nginx, namespace: networking}}
spec:
  interval: 30m
  chart:
    spec:
      chart: ingress-nginx
      version: {version}
      sourceRef: {{kind: HelmRepository, name: ingress-nginx, namespace: flux-system}}
  values:
    controller:
      replicaCount: 2
"""

REPOSITORY = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: ingress-nginx, namespace: flux-system}
spec:
  interval: 2h
  url: https://kubernetes.github.io/ingress-nginx
"""


def ingress_findings(tmp_path: Path, version: str, *hops: str) -> list[dict]:
    root = write(tmp_path, {"flux/repositories/ingress-nginx.yaml": REPOSITORY,
                            "apps/networking/ingress-nginx/helmrelease.yaml": RELEASE.format(version=version)})
    done = invoke("scan", "--format", "json", *hops, ".", cwd=root)
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"].startswith("component/ingress-nginx/")]


def test_chart_4_10_0_ships_1_10_0_which_does_not_list_1_30(tmp_path):
    [finding] = ingress_findings(tmp_path, "4.10.0", "--from", "1.29", "--target", "1.30")
    assert (finding["rule"], finding["severity"], finding["line"]) == ("component/ingress-nginx/unsupported", "error", 9)
    assert finding["message"].startswith("Ingress-NGINX Controller 1.10.0 supports Kubernetes 1.26–1.29; from 1.10.1: "
                                          "1.26–1.30, not 1.30; move it to 1.10.1 before the hop to 1.30")
    assert finding["remediation"] == ["before the hop to 1.30: ingress-nginx 1.10.0 → 1.10.1"]


def test_chart_4_10_1_ships_1_10_1_which_lists_1_30(tmp_path):
    """Before: judged as some 1.10 patch (1.10.0 up to 1.29, 1.10.1 up to 1.30), a warning at 1.30."""
    assert ingress_findings(tmp_path, "4.10.1", "--from", "1.29", "--target", "1.30") == []
    [finding] = ingress_findings(tmp_path / "next", "4.10.1", "--from", "1.29", "--target", "1.31")
    assert finding["message"].startswith("Ingress-NGINX Controller 1.10.1 supports Kubernetes 1.26–1.30, not 1.31")


@pytest.mark.parametrize("version, app, hop", [("4.9.0", "1.9.5", "1.29"), ("4.8.3", "1.9.4", "1.29")])
def test_chart_versions_whose_app_patch_is_numbered_apart_ship_the_listed_one(tmp_path, version, app, hop):
    """4.9.0 ships 1.9.5 and 4.8.3 ships 1.9.4, neither the 1.9.6 the table lists with 1.29."""
    [finding] = ingress_findings(tmp_path, version, "--from", "1.28", "--target", hop)
    assert (finding["rule"], finding["severity"]) == ("component/ingress-nginx/unsupported", "error")
    assert finding["message"].startswith(f"Ingress-NGINX Controller {app} supports Kubernetes 1.25–1.28; from 1.9.6: "
                                          "1.25–1.29, not 1.29; move it to 1.9.6 before the hop to 1.29")


def test_chart_4_9_1_ships_1_9_6_which_lists_1_29(tmp_path):
    assert ingress_findings(tmp_path, "4.9.1", "--from", "1.28", "--target", "1.29") == []


def test_a_range_installs_the_newest_chart_version_it_admits(tmp_path):
    """">=4.10.1 <4.11.0" installs 4.10.6 (1.10.6) or a later 4.10 chart, all on 1.30; "<4.10.1"
    admits only 4.10.0, which ships 1.10.0 (before: judged as 1.10's newest patch, 1.10.1: nothing)."""
    assert ingress_findings(tmp_path, '">=4.10.1 <4.11.0"', "--from", "1.29", "--target", "1.30") == []
    [finding] = ingress_findings(tmp_path / "only", '">=4.10.0 <4.10.1"', "--from", "1.29", "--target", "1.30")
    assert (finding["rule"], finding["severity"]) == ("component/ingress-nginx/unsupported", "error")
    assert finding["message"].startswith("Ingress-NGINX Controller 1.10.0 supports Kubernetes 1.26–1.29")


@pytest.mark.parametrize("version", ['"~4.8.0"', "4.8.x"])
def test_a_range_past_the_listed_chart_versions_is_unknown_where_the_later_patches_disagree(tmp_path, version):
    """~4.8.0 installs 4.8.3 (1.9.4, up to 1.28) or a later 4.8 chart the data does not list, whose 1.9
    patch may be 1.9.6 (up to 1.29): 1.29 is unknown, neither supported (before: ~4.8.0 was judged as
    1.9.6, the newest 1.9 patch, which no 4.8 chart ships) nor a blocker."""
    [finding] = ingress_findings(tmp_path, version, "--from", "1.28", "--target", "1.29")
    assert (finding["rule"], finding["severity"]) == ("component/ingress-nginx/unknown-support", "warning")
    assert finding["message"].startswith(
        "Ingress-NGINX Controller 1.9.4 is pinned by a chart range that installs 1.9.4 or a later 1.9 patch (from "
        "chart versions the data does not list), and those disagree on Kubernetes 1.29 (1.25–1.28; from 1.9.6: 1.25–1.29)")


def test_a_chart_version_the_data_does_not_list_is_judged_as_before(tmp_path):
    """4.10.9 is no chart version the repository's index lists: which 1.10 patch it ships is unknown,
    and 1.10.0 and 1.10.1 disagree on 1.30: a warning, never support nor a blocker it may not be."""
    [finding] = ingress_findings(tmp_path, "4.10.9", "--from", "1.29", "--target", "1.30")
    assert (finding["rule"], finding["severity"]) == ("component/ingress-nginx/unknown-support", "warning")
    assert "does not say which 1.10 patch it ships, and its patches disagree on Kubernetes 1.30" in finding["message"]


def components_row(tmp_path: Path, version: str) -> dict:
    root = write(tmp_path, {"flux/repositories/ingress-nginx.yaml": REPOSITORY,
                            "apps/networking/ingress-nginx/helmrelease.yaml": RELEASE.format(version=version)})
    text = invoke("components", ".", cwd=root).stdout
    [row] = json.loads(invoke("components", "--format", "json", ".", cwd=root).stdout)["components"]
    return row | {"text": next(line for line in text.splitlines() if line.startswith("ingress-nginx "))}


def test_components_shows_the_app_patch_a_chart_version_ships(tmp_path):
    """Before: `release 1.10`, `1.26–1.29; from 1.10.1: 1.26–1.30` for a pin that installs 1.10.1."""
    row = components_row(tmp_path, "4.10.1")
    assert row["text"].split()[1:4] == ["4.10.1", "1.10.1", "1.26–1.30"]
    assert row["installs"]["release"] == "1.10.1" and (row["installs"]["min"], row["installs"]["max"]) == ("1.26", "1.30")
    assert row["releases"] == ["1.10"]  # what the data lists for the pin stays as it was


def test_components_keeps_the_minor_for_a_range_and_an_unlisted_chart_version(tmp_path):
    for folder, version in (("range", "~4.10.0"), ("unlisted", "4.10.99")):
        row = components_row(tmp_path / folder, version)
        assert row["installs"] is None and row["text"].split()[2] == "1.10", (version, row["text"])


@pytest.mark.parametrize("pinned, hop, written", [
    ("4.10.0", ("--from", "1.29"), "4.10.6"),  # needs 1.10.1 (1.26–1.30): the newest 4.10 the data lists keeps it
    ("4.10.1", ("--from", "1.30"), "4.12.8"),  # needs 1.12 for 1.31
])
def test_the_plan_writes_the_chart_version_the_data_lists_for_the_release(tmp_path, pinned, hop, written):
    """Before: 'kubehop knows no chart version on line 4.10 ... set a 4.10.x chart version', left to a person
    unless --allow-network read the repository's index."""
    root = write(tmp_path, {"flux/repositories/ingress-nginx.yaml": REPOSITORY,
                            "apps/networking/ingress-nginx/helmrelease.yaml": RELEASE.format(version=pinned)})
    done = invoke("plan", *hop, "--target", "1.31", "--window", "1", "--diff", ".", cwd=root)
    assert f"-      version: {pinned}\n+      version: {written}\n" in done.stdout, done.stdout + done.stderr
    assert "left to a person: ingress-nginx" not in done.stderr


def test_a_chart_version_the_data_does_not_list_is_left_to_a_person(tmp_path):
    """opentelemetry-operator's chart lines carry no app_patches: no chart version of line 0.69 is guessed."""
    root = write(tmp_path, {"cluster/plans.yaml": "apiVersion: upgrade.cattle.io/v1\nkind: Plan\n"
                                                  "metadata: {name: server, namespace: system-upgrade}\n"
                                                  "spec:\n  version: v1.30.4+k3s1\n",
                            "apps/otel/kustomization.yaml": (
                                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n"
                                "  - name: opentelemetry-operator\n"
                                "    repo: https://open-telemetry.github.io/opentelemetry-helm-charts\n"
                                "    version: 0.61.0\n")})
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert done.returncode == 1 and "version: 0.6" not in done.stdout
    assert ("left to a person: opentelemetry-operator 0.101 → 0.108: kustomization helmCharts opentelemetry-operator "
            "pins '0.61.0': the pin names one chart version and kubehop knows no OpenTelemetry Operator chart "
            "version on line 0.69") in done.stderr
