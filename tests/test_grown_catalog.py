"""The components added from the real trees' census (issue 23.2), planned from their own sources, and
the census itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO, invoke, write_tree as write

ESO = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: external-secrets, namespace: external-secrets}
spec:
  chart:
    spec:
      chart: external-secrets
      version: 0.16.2
      sourceRef: {kind: HelmRepository, name: external-secrets, namespace: flux-system}
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata: {name: app-secret, namespace: default}
spec:
  secretStoreRef: {kind: ClusterSecretStore, name: onepassword}
  target: {name: app-secret}
  dataFrom:
    - extract: {key: app}
"""


def test_external_secrets_v1beta1_objects_under_0_17_are_blockers_and_planned_migrations_before_it(tmp_path):
    root = write(tmp_path, {"eso.yaml": ESO.replace("version: 0.16.2", "version: 0.17.0")})
    scan = json.loads(invoke("scan", "--from", "1.33", "--target", "1.34", "--format", "json", ".", cwd=root).stdout)
    rule = "external-secrets/external-secrets.io/v1beta1/ExternalSecret"
    [blocker] = [f for f in scan["findings"] if f["rule"] == rule]
    # 0.17 keeps v1beta1 in its CRDs with served: false: the pinned release already no longer serves it.
    assert (blocker["severity"], blocker["line"], blocker["replacement"]) == ("error", 11, "external-secrets.io/v1")
    assert "was removed in external-secrets 0.17" in blocker["message"]

    # Pinned at 0.16 (tested on 1.32 only: its range is unknown), the hop to 1.35 needs 2.0 (1.34-1.35), one ESO
    # minor at a time: the moves cross 0.17, and the migration is planned before that move.
    write(tmp_path, {"eso.yaml": ESO})
    plan = json.loads(invoke("plan", "--from", "1.33", "--target", "1.35", "--format", "json", ".", cwd=root).stdout)
    window = plan["windows"][1]
    moves = [(s["component"], s["from"], s["to"]) for s in window["before"]]
    assert moves[0] == ("external-secrets", "0.16", "0.17") and moves[-1] == ("external-secrets", "1.3", "2.0")
    [migration] = window["migrations"]
    assert (migration["apiVersion"], migration["kind"], migration["replacement"], migration["removed_in"]) == (
        "external-secrets.io/v1beta1", "ExternalSecret", "external-secrets.io/v1", "external-secrets 0.17")
    scan = json.loads(invoke("scan", "--from", "1.33", "--target", "1.35", "--format", "json", ".", cwd=root).stdout)
    assert [f["hop"] for f in scan["findings"] if f["rule"] == rule] == ["hop to 1.35"]
    assert scan["summary"]["errors"] == plan["blockers"]


def test_descheduler_is_judged_by_the_three_minors_its_readme_says_each_release_is_tested_on(tmp_path):
    root = write(tmp_path, {"descheduler.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: descheduler, namespace: kube-system}
        spec:
          chart:
            spec:
              chart: descheduler
              version: 0.31.0
              sourceRef: {kind: HelmRepository, name: descheduler, namespace: flux-system}
        """})
    scan = json.loads(invoke("scan", "--from", "1.31", "--target", "1.33", "--format", "json", ".", cwd=root).stdout)
    [finding] = [f for f in scan["findings"] if f["rule"].startswith("component/descheduler/")]
    assert (finding["rule"], finding["hop"]) == ("component/descheduler/unsupported", "hop to 1.32")
    assert finding["message"].startswith("Descheduler 0.31 supports Kubernetes 1.29–1.31, not 1.32; move it to 0.32")


def test_the_census_counts_what_kubehop_components_lists(tmp_path):
    root = write(tmp_path / "tree", {"eso.yaml": ESO, "node-red.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: node-red, namespace: default}
        spec:
          chart:
            spec:
              chart: node-red
              version: 1.0.4
              sourceRef: {kind: HelmRepository, name: node-red, namespace: flux-system}
        """})
    done = subprocess.run([sys.executable, str(REPO / "bench" / "component_census.py"), "--no-render", str(root)],
                          capture_output=True, text=True, timeout=600,
                          env={"KUBEHOP_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "| tree | 2 | 1 | 1 | 0 | 1 | 50.0 |" in done.stdout
    assert "1 pins in  1 trees  node-red" in done.stdout


def _redis(name: str, repository: str, version: str) -> str:
    return f"""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: HelmRepository
        metadata: {{name: {name}, namespace: flux-system}}
        spec: {{url: {repository}}}
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {{name: {name}, namespace: databases}}
        spec:
          chart:
            spec:
              chart: redis
              version: {version}
              sourceRef: {{kind: HelmRepository, name: {name}, namespace: flux-system}}
        """


def test_two_charts_named_redis_are_told_apart_by_repository_and_one_from_neither_is_no_data(tmp_path):
    root = write(tmp_path, {
        "bitnami.yaml": _redis("bitnami", "https://charts.bitnami.com/bitnami", "18.9.0"),
        "ot.yaml": _redis("ot", "https://ot-container-kit.github.io/helm-charts/", "0.16.8"),
        "mirror.yaml": _redis("mirror", "https://charts.example.org/mirror", "19.6.4")})
    listed = json.loads(invoke("components", "--format", "json", ".", cwd=root).stdout)["components"]
    rows = sorted((c["component"], Path(c["file"]).name, c["data"]) for c in listed)
    # The mirror's redis could be either chart: it is deployed and kubehop has no data on it, never dropped.
    assert rows == [("ot-redis", "ot.yaml", "catalog"), ("redis", "bitnami.yaml", "catalog"),
                    ("redis (chart)", "mirror.yaml", "none")]
    # Bitnami's 18.9 README states "Kubernetes 1.23+" on 2024-01-26: open-ended, as of that day.
    scan = json.loads(invoke("scan", "--from", "1.28", "--target", "1.29", "--format", "json", ".", cwd=root).stdout)
    rules = {(f["rule"], Path(f["file"]).name) for f in scan["findings"] if f["rule"].startswith("component/")}
    assert ("component/redis (chart)/no-data", "mirror.yaml") in rules
    assert not any(name == "bitnami.yaml" for _, name in rules)


HAJIMARI = """
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: HelmRepository
    metadata: {name: hajimari, namespace: flux-system}
    spec: {url: https://hajimari.io}
    ---
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {name: hajimari, namespace: default}
    spec:
      chart:
        spec:
          chart: hajimari
          version: 2.0.1
          sourceRef: {kind: HelmRepository, name: hajimari, namespace: flux-system}
    """


def test_a_component_read_from_an_older_copy_of_its_sources_is_dated_on_its_row_not_the_data(tmp_path):
    """Hajimari's facts were read on 2026-12-02 from a repository whose newest commit is of 2023-05-24:
    its row and the report's foot say so; the data date stays the oldest data_checked."""
    from scanner import freshness

    root = write(tmp_path, {"hajimari.yaml": HAJIMARI, "eso.yaml": ESO})
    text = invoke("components", ".", cwd=root).stdout.splitlines()
    [row] = [line for line in text if line.startswith("hajimari ")]
    assert "1.16–? (no stated maximum), sources as of 2023-05-24" in row
    [eso] = [line for line in text if line.startswith("external-secrets ")]
    assert "sources as of" not in eso
    assert f"(data checked {freshness.data_checked()}: releases after it are unknown to kubehop)" in text[-2]
    assert text[-1] == "older sources: hajimari as of 2023-05-24: their releases after it are unknown to kubehop"
    document = json.loads(invoke("components", "--format", "json", ".", cwd=root).stdout)
    assert document["tool"]["data_checked"] == freshness.data_checked() > "2023-05-24"
    assert document["tool"]["older_sources"]["hajimari"] == "2023-05-24"
    assert {c["component"]: c["sources_as_of"] for c in document["components"]} == {
        "hajimari": "2023-05-24", "external-secrets": None}
