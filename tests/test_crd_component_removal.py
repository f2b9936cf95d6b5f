"""`kubehop scan` reports third-party CRD versions that the pinned (or planned) component release drops."""

from __future__ import annotations

import json
import textwrap

import pytest

from catalogs import catalog, crd_rules, gitops
from conftest import run_kubehop
from scanner.checks import ScanContext, crd_component_removal
from scanner.components import catalog as catalog_module
from scanner.rulebook import load_rulebook
from scanner.sources.yaml.yamldoc import read_text
from scanner.versions import Minor

RULES = [crd_rules("gitops",
                   {"apiVersion": "image.gitops.example.org/v1beta1", "kind": "ImagePolicy", "removed_in": "2.5",
                    "replacement": "image.gitops.example.org/v1"},
                   {"apiVersion": "image.gitops.example.org/v1beta2", "kind": "ImagePolicy", "removed_in": "2.9",
                    "replacement": "image.gitops.example.org/v1"})]
BOOK = catalog([gitops()], RULES)


@pytest.fixture
def synthetic_catalog(monkeypatch):
    """The one-component catalog, for the tests that run the check alone (the CLI test reads the real data)."""
    monkeypatch.setattr(catalog_module, "load_components", lambda names: BOOK)
    monkeypatch.setattr(crd_component_removal, "load_crd_rules", lambda: BOOK.crd_rules)


def manifests(gitops_version: str, policy_version: str):
    text = textwrap.dedent(f"""
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {{name: gitops, namespace: gitops}}
        spec:
          chart:
            spec: {{chart: gitops, version: "{gitops_version}"}}
        ---
        apiVersion: image.gitops.example.org/{policy_version}
        kind: ImagePolicy
        metadata: {{name: app, namespace: apps}}
        spec: {{}}
        """).lstrip()
    found, problems = read_text(text, "tree.yaml")
    assert problems == []
    return found


def run(found, target: str, current: str | None = None):
    major, minor = target.split(".")
    start = Minor(1, int(current.split(".")[1])) if current else None
    context = ScanContext(target=Minor(int(major), int(minor)), rulebook=load_rulebook(), current=start)
    return list(crd_component_removal.check(found, context))


@pytest.mark.usefixtures("synthetic_catalog")
def test_an_api_the_pinned_release_no_longer_serves_is_an_error():
    [finding] = run(manifests("2.6.0", "v1beta1"), "1.32", "1.31")
    assert (finding.severity, finding.origin.line, finding.kind, finding.name) == ("error", 8, "ImagePolicy", "app")
    assert finding.breaks_in == Minor(1, 31)
    assert "was removed in gitops 2.5" in finding.message
    assert finding.replacement == "image.gitops.example.org/v1"


@pytest.mark.usefixtures("synthetic_catalog")
def test_an_api_the_hops_to_the_target_move_past_breaks_at_that_hop():
    [finding] = run(manifests("2.6.0", "v1beta2"), "1.36", "1.33")
    assert finding.breaks_in == Minor(1, 36)
    assert "no longer served from gitops 2.9, which the hop to 1.36 needs" in finding.message


@pytest.mark.usefixtures("synthetic_catalog")
def test_nothing_is_reported_while_the_release_that_drops_it_is_not_needed():
    assert run(manifests("2.6.0", "v1beta2"), "1.33", "1.31") == []
    assert run(manifests("2.6.0", "v1"), "1.36", "1.33") == []


@pytest.mark.usefixtures("synthetic_catalog")
def test_without_from_the_target_alone_decides_the_release():
    [finding] = run(manifests("2.8.0", "v1beta2"), "1.36")
    assert finding.breaks_in == Minor(1, 36)


def test_scan_cli_reports_a_version_the_pinned_cert_manager_dropped(tmp_path):
    (tmp_path / "cm.yaml").write_text(textwrap.dedent("""
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: cert-manager, namespace: cert-manager}
        spec:
          chart:
            spec: {chart: cert-manager, version: "v1.16.5"}
        ---
        apiVersion: cert-manager.io/v1alpha2
        kind: Certificate
        metadata: {name: web, namespace: shop}
        spec: {}
        """).lstrip())
    proc = run_kubehop("scan", "--target", "1.33", "--format", "json", str(tmp_path))
    assert proc.returncode == 1, proc.stderr.decode()
    [finding] = [f for f in json.loads(proc.stdout)["findings"] if not f["rule"].startswith("component/")]
    assert finding["rule"] == "cert-manager/cert-manager.io/v1alpha2/Certificate"
    # The pinned release already dropped it: it fails whatever the Kubernetes version.
    assert (finding["line"], finding["hop"]) == (8, "at any Kubernetes version")
    assert finding["replacement"] == "cert-manager.io/v1" and finding["source"].startswith("https://")
