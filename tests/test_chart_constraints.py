"""Charts state their own constraints: Chart.yaml `kubeVersion`, read from the tree, helm's cache and
(with --allow-network) a repository's index.yaml, served here by a loopback server the test starts
and stops. A constraint that excludes a hop's minor blocks it at the pin; the plan moves the chart to
the first version in the index whose constraint admits the minor.
"""

from __future__ import annotations

import functools
import http.server
import io
import json
import tarfile
import textwrap
import threading
from pathlib import Path

import pytest
import yaml

from conftest import run_kubehop

VERSIONS = [  # gadget's versions as its repository lists them; 1.2.0 is the first that admits 1.33
    ("1.0.0", ">=1.25.0-0 <1.33.0-0"),
    ("1.1.0", ">=1.25.0-0 <1.33.0-0"),
    ("1.2.0", ">=1.27.0-0 <1.35.0-0"),
    ("2.0.0", ">=1.34.0-0"),
]


def chart_archive(version: str, constraint: str) -> bytes:
    """gadget-<version>.tgz as helm packages it: gadget/Chart.yaml and one template."""
    files = {"gadget/Chart.yaml": f'apiVersion: v2\nname: gadget\nversion: {version}\nkubeVersion: "{constraint}"\n',
             "gadget/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gadget\n"}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, text in files.items():
            body = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    return out.getvalue()


def index_yaml(base: str) -> str:
    entries = [{"apiVersion": "v2", "name": "gadget", "version": v, "kubeVersion": c, "created": "2025-03-01T10:00:00Z",
                "urls": [f"{base}/gadget-{v}.tgz"]} for v, c in reversed(VERSIONS)]
    return yaml.safe_dump({"apiVersion": "v1", "entries": {"gadget": entries}})


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test's output is kubehop's, not the server's
        pass


@pytest.fixture
def repository(tmp_path):
    """A chart repository on 127.0.0.1 (index.yaml and the archives), stopped when the test ends."""
    served = tmp_path / "served"
    served.mkdir()
    for version, constraint in VERSIONS:
        (served / f"gadget-{version}.tgz").write_bytes(chart_archive(version, constraint))
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    (served / "index.yaml").write_text(index_yaml(base))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield base
    server.shutdown()
    server.server_close()
    thread.join()


def flux_tree(root: Path, url: str, version: str = "1.0.0") -> Path:
    (root / "tree").mkdir(exist_ok=True)
    (root / "tree" / "gadget.yaml").write_text(textwrap.dedent(f"""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: HelmRepository
        metadata: {{name: gadgets, namespace: flux-system}}
        spec:
          url: {url}
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {{name: gadget, namespace: apps}}
        spec:
          chart:
            spec:
              chart: gadget
              version: "{version}"
              sourceRef: {{kind: HelmRepository, name: gadgets, namespace: flux-system}}
        """).lstrip())
    return root / "tree"


def isolated(tmp_path: Path, **extra: str) -> dict:
    """No helm cache but the test's, no render cache but the test's."""
    return {"HELM_REPOSITORY_CACHE": str(tmp_path / "helm-cache"), "HELM_REPOSITORY_CONFIG":
            str(tmp_path / "helm-repositories.yaml"), "KUBEHOP_CACHE_DIR": str(tmp_path / "kubehop-cache"), **extra}


def run_json(*args: str, env: dict) -> tuple[int, dict, str]:
    proc = run_kubehop(*args, "--format", "json", env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout), proc.stderr.decode()


def gadget_findings(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["rule"].startswith("component/chart/gadget/")]


def test_a_served_index_blocks_the_hop_its_constraint_excludes_at_the_pin_with_the_move(tmp_path, repository):
    tree = flux_tree(tmp_path, repository)
    code, report, _ = run_json("scan", "--allow-network", "--no-render", "--from", "1.32", "--target", "1.33",
                               str(tree), env=isolated(tmp_path))
    assert code == 1
    [finding] = gadget_findings(report)
    assert (finding["rule"], finding["severity"], finding["hop"]) == (
        "component/chart/gadget/unsupported", "error", "hop to 1.33")
    assert (finding["file"].endswith("gadget.yaml"), finding["line"]) == (True, 14)  # the version: line
    assert finding["message"] == (
        'chart gadget 1.0.0 supports Kubernetes 1.25–1.32 (kubeVersion ">=1.25.0-0 <1.33.0-0"), not 1.33; move it '
        'to 1.2.0 before the hop to 1.33 (it supports 1.27–1.34 (kubeVersion ">=1.27.0-0 <1.35.0-0"))')
    assert finding["remediation"] == ["before the hop to 1.33: chart/gadget 1.0.0 → 1.2.0"]
    assert finding["source"] == f"{repository}/index.yaml"


def test_the_plan_moves_the_chart_to_the_first_version_whose_constraint_admits_the_hop(tmp_path, repository):
    tree = flux_tree(tmp_path, repository)
    code, plan, _ = run_json("plan", "--allow-network", "--from", "1.31", "--target", "1.34", str(tree),
                             env=isolated(tmp_path))
    moves = {w["to"]: [(s["from"], s["to"]) for s in w["before"] if s["component"] == "chart/gadget"]
             for w in plan["windows"]}
    # 1.0.0 admits 1.32, not 1.33: 1.2.0 before the hop to 1.33; 1.2.0 admits 1.34 too.
    assert moves == {"1.32": [], "1.33": [("1.0.0", "1.2.0")], "1.34": []}
    assert code == 1 and plan["blockers"] == 1


def test_the_version_a_pin_names_decides_nothing_blocks_when_it_admits_every_hop(tmp_path, repository):
    tree = flux_tree(tmp_path, repository, "1.2.0")
    code, report, _ = run_json("scan", "--allow-network", "--no-render", "--from", "1.32", "--target", "1.34",
                               str(tree), env=isolated(tmp_path))
    assert gadget_findings(report) == [] and code == 0


def test_helm_s_repository_cache_is_read_without_the_network(tmp_path):
    """A cache folder laid out as helm lays it out: repositories.yaml names the repository, and
    <name>-index.yaml in the repository cache holds its index."""
    url = "https://charts.example.invalid/gadgets"
    (tmp_path / "helm-cache").mkdir()
    (tmp_path / "helm-cache" / "gadgets-index.yaml").write_text(index_yaml(url))
    (tmp_path / "helm-cache" / "gadgets-charts.txt").write_text("gadget\n")
    (tmp_path / "helm-repositories.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "", "generated": "0001-01-01T00:00:00Z", "repositories": [
            {"name": "gadgets", "url": url, "caFile": "", "certFile": "", "keyFile": "", "username": "",
             "password": ""}]}))
    tree = flux_tree(tmp_path, url + "/")
    code, report, _ = run_json("scan", "--no-render", "--from", "1.32", "--target", "1.33", str(tree),
                               env=isolated(tmp_path))
    [finding] = gadget_findings(report)
    assert code == 1 and "move it to 1.2.0 before the hop to 1.33" in finding["message"]
    assert finding["source"].endswith("gadgets-index.yaml")


def test_a_chart_archive_in_helm_s_cache_states_the_pinned_version_s_constraint(tmp_path):
    (tmp_path / "helm-cache").mkdir()
    (tmp_path / "helm-cache" / "gadget-1.0.0.tgz").write_bytes(chart_archive("1.0.0", ">=1.25.0-0 <1.33.0-0"))
    tree = flux_tree(tmp_path, "https://charts.example.invalid/gadgets")
    code, report, _ = run_json("scan", "--no-render", "--from", "1.32", "--target", "1.33", str(tree),
                               env=isolated(tmp_path))
    [finding] = gadget_findings(report)
    # no index: the pinned version's own constraint blocks, and no later version is known
    assert (finding["rule"], code) == ("component/chart/gadget/blocked", 1)
    assert 'kubeVersion ">=1.25.0-0 <1.33.0-0"' in finding["message"]


def test_without_the_network_or_a_cache_nothing_is_claimed(tmp_path, repository):
    tree = flux_tree(tmp_path, repository)
    code, report, _ = run_json("scan", "--no-render", "--from", "1.32", "--target", "1.33", str(tree),
                               env=isolated(tmp_path))
    assert gadget_findings(report) == [] and code == 0 and report["notices"] == []


def test_an_unreachable_repository_is_a_notice_not_an_input_error(tmp_path):
    tree = flux_tree(tmp_path, "http://127.0.0.1:9/nothing-listens-here")
    code, report, _ = run_json("scan", "--allow-network", "--no-render", "--from", "1.32", "--target", "1.33",
                               str(tree), env=isolated(tmp_path))
    assert code == 0 and report["summary"]["input_errors"] == 0
    assert any("index.yaml not read" in n for n in report["notices"])


def test_a_chart_kept_in_the_tree_blocks_at_its_kubeversion_line(tmp_path):
    chart = tmp_path / "charts" / "gadget"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text('apiVersion: v2\nname: gadget\nversion: 0.3.0\nkubeVersion: ">=1.25.0-0 <1.33.0-0"\n')
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: g\n")
    code, report, _ = run_json("scan", "--from", "1.32", "--target", "1.33", str(tmp_path / "charts"),
                               env=isolated(tmp_path))
    [finding] = gadget_findings(report)
    assert (finding["file"].endswith("Chart.yaml"), finding["line"], finding["severity"]) == (True, 4, "error")
    assert "chart gadget (kept in the tree)" in finding["message"]
    code, report, _ = run_json("scan", "--from", "1.31", "--target", "1.32", str(tmp_path / "charts"),
                               env=isolated(tmp_path))
    assert gadget_findings(report) == []


@pytest.mark.parametrize("constraint, admitted", [
    (">=1.25.0-0 <1.33.0-0", ("1.25", "1.32", False)),
    (">= 1.19.0-0", ("1.19", None, True)),
    ("^1.28.0", ("1.28", None, True)),
    ("~1.30.0", ("1.30", "1.30", False)),
    (">=1.29.0 <=1.31.5", ("1.29", "1.31", False)),
])
def test_kube_version_constraints_read_as_helm_reads_them(constraint, admitted):
    from scanner.components.charts import admitted as read

    low, high, open_ended = read(constraint)
    assert (str(low), str(high) if high else None, open_ended) == admitted
