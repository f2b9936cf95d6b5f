"""--helm-releases: what Helm has deployed, decoded from a `kubectl get secrets -l owner=helm` dump."""

from __future__ import annotations

import base64
import gzip
import json

import pytest
import yaml

from conftest import run_kubehop
from scanner.sources.releases.helm_releases import decode_release, read_helm_releases

LEGACY_INGRESS = """---
# Source: shop/templates/ingress.yaml
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: shop
"""
CURRENT_INGRESS = LEGACY_INGRESS.replace("extensions/v1beta1", "networking.k8s.io/v1")
SERVICE = """---
# Source: shop/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: shop
"""


def helm_encoded(release: dict) -> str:
    """What Helm writes in the `release` key: gzipped JSON, base64-encoded."""
    return base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()


def release_item(name: str, namespace: str, revision: int, status: str, manifest: str,
                 chart: str = "shop", storage: str = "Secret", hooks: list | None = None) -> dict:
    release = {"name": name, "namespace": namespace, "version": revision, "info": {"status": status},
               "chart": {"metadata": {"name": chart, "version": "1.4.2"}}, "manifest": manifest,
               "hooks": hooks or []}
    encoded = helm_encoded(release)
    if storage == "Secret":  # the Secret's own base64 on top of Helm's
        encoded = base64.b64encode(encoded.encode()).decode()
    return {"apiVersion": "v1", "kind": storage, "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v{revision}", "namespace": namespace,
                         "labels": {"name": name, "owner": "helm", "status": status, "version": str(revision)}},
            "data": {"release": encoded}}


def dump(tmp_path, *items: dict) -> str:
    path = tmp_path / "releases.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(items)}, sort_keys=False))
    return str(path)


def item_line(path: str, secret_name: str) -> int:
    """The line where the List item holding `secret_name` starts."""
    lines = open(path).read().splitlines()
    named = next(i for i, line in enumerate(lines) if line.strip() == f"name: {secret_name}")
    return max(i for i in range(named) if lines[i].startswith("- ")) + 1


def test_latest_deployed_revision_is_scanned_and_named(tmp_path):
    path = dump(
        tmp_path,
        release_item("shop", "web", 1, "superseded", CURRENT_INGRESS),
        release_item("shop", "web", 2, "deployed", LEGACY_INGRESS + SERVICE),
        release_item("shop", "web", 3, "failed", CURRENT_INGRESS),  # a failed upgrade: revision 2 still runs
        release_item("blog", "web", 1, "deployed", CURRENT_INGRESS, chart="blog"),
    )
    proc = run_kubehop("scan", "--target", "1.22", "--format", "json", "--helm-releases", path)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1
    (finding,) = report["findings"]
    assert finding["via"] == "helm release web/shop revision 2, chart shop 1.4.2, shop/templates/ingress.yaml"
    assert finding["file"] == path
    assert finding["line"] == item_line(path, "sh.helm.release.v1.shop.v2")
    assert report["summary"]["objects"] == 3  # shop's Ingress and Service, blog's Ingress
    assert f"{path}: 2 deployed Helm releases scanned" in report["notices"]


def test_hooks_and_the_configmap_driver_are_read(tmp_path):
    hook = {"path": "tools/templates/job.yaml", "manifest": LEGACY_INGRESS.split("\n", 2)[2]}
    path = dump(tmp_path, release_item("tools", "ops", 4, "deployed", SERVICE, chart="tools",
                                       storage="ConfigMap", hooks=[hook]))
    manifests, diagnostics, releases = read_helm_releases(path)
    assert (releases, diagnostics) == (1, [])
    assert sorted((m.kind, m.api_version, m.origin.via.rsplit(", ", 1)[1]) for m in manifests) == [
        ("Ingress", "extensions/v1beta1", "tools/templates/job.yaml"),
        ("Service", "v1", "shop/templates/service.yaml"),
    ]


def test_an_undecodable_release_is_an_input_problem_not_a_crash(tmp_path):
    broken = release_item("bad", "web", 1, "deployed", SERVICE)
    broken["data"]["release"] = base64.b64encode(b"H4sI-not-gzip").decode()
    path = dump(tmp_path, broken, release_item("shop", "web", 1, "deployed", LEGACY_INGRESS))
    proc = run_kubehop("scan", "--target", "1.22", "--format", "json", "--helm-releases", path)
    assert "Traceback" not in proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert proc.returncode == 3
    (problem,) = [d for d in report["diagnostics"] if d["file"] == path]
    assert "Secret web/sh.helm.release.v1.bad.v1: cannot decode the Helm release" in problem["message"]
    assert len(report["findings"]) == 1


def test_scan_needs_paths_or_releases():
    proc = run_kubehop("scan", "--target", "1.22")
    assert proc.returncode == 2 and "give PATHS to scan, or --helm-releases" in proc.stderr.decode()


def test_decode_release_reverses_helms_encoding():
    release = {"name": "x", "manifest": "", "version": 7}
    secret_data = base64.b64encode(helm_encoded(release).encode()).decode()
    assert decode_release(secret_data) == release
    assert decode_release(helm_encoded(release), secret=False) == release


@pytest.mark.parametrize("release", [
    {"name": "x", "chart": "not-a-mapping", "info": ["odd"], "manifest": 42, "hooks": "none"},
    {"name": "x", "version": "seven", "info": {"status": "deployed"}, "manifest": "{{ not: yaml"},
    ["a", "list"],
    {"name": "x", "info": {"status": "deployed"}, "manifest": "---\n# Source: a\n- 1\n- 2\n"},
    {"name": "x", "info": {"status": "deployed"}, "manifest": "", "hooks": 5},
])
def test_odd_release_contents_never_crash(tmp_path, release):
    encoded = base64.b64encode(base64.b64encode(gzip.compress(json.dumps(release).encode()))).decode()
    item = release_item("x", "web", 1, "deployed", "")
    item["data"]["release"] = encoded
    manifests, diagnostics, _ = read_helm_releases(dump(tmp_path, item))
    assert manifests == [] or all(m.origin.path.endswith("releases.yaml") for m in manifests)


def test_a_release_secret_without_labels_is_read(tmp_path):
    item = release_item("web", "shop", 1, "deployed", LEGACY_INGRESS)
    del item["metadata"]["labels"]
    manifests, diagnostics, releases = read_helm_releases(dump(tmp_path, item))
    assert (releases, [m.kind for m in manifests], diagnostics) == (1, ["Ingress"], [])
