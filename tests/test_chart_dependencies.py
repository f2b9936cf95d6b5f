"""Umbrella charts whose dependencies charts/ does not hold, rendered with the real helm: never an
input problem for that alone, never a write into the user's tree; charts/ fetched into a throwaway
copy with --allow-network (a loopback chart repository), else taken from helm's local cache, else
the chart rendered alone and each missing dependency listed with its pin."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import threading
from functools import partial
from pathlib import Path

import pytest

from conftest import run_kubehop

LEGACY_INGRESS = """\
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: {{ .Release.Name }}-web
spec:
  backend:
    serviceName: web
    servicePort: 80
"""
LEGACY_PDB = """\
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-db
spec:
  minAvailable: 1
"""


def write_chart(folder: Path, name: str, version: str, templates: dict[str, str], dependencies: str = "") -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: {version}\n" + dependencies)
    for file, text in templates.items():
        (folder / "templates" / file).write_text(text)
    return folder


@pytest.fixture
def helm_env(helm_env, tmp_path, monkeypatch) -> dict[str, str]:
    """The real helm with a cache, configuration and data of this test's own."""
    homes = {k: str(tmp_path / "helm" / k) for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")}
    for key, value in homes.items():
        monkeypatch.setenv(key, value)
    return {**helm_env, **homes}


@pytest.fixture
def chart_repository(helm_env, tmp_path):
    """A chart repository on loopback holding `db` 2.1.0 (it emits a PodDisruptionBudget policy/v1beta1);
    yields (url, requests seen)."""
    source = write_chart(tmp_path / "src" / "db", "db", "2.1.0", {"pdb.yaml": LEGACY_PDB})
    repo = tmp_path / "repo"
    repo.mkdir()
    helm = helm_env["KUBEHOP_HELM"]
    subprocess.run([helm, "package", str(source), "-d", str(repo)], check=True, capture_output=True)
    seen: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            seen.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(repo)))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run([helm, "repo", "index", str(repo), "--url", url], check=True, capture_output=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield url, seen
    server.shutdown()
    server.server_close()


def umbrella(tmp_path: Path, url: str, version: str = "2.1.0") -> Path:
    return write_chart(tmp_path / "tree" / "shop", "shop", "1.0.0", {"ingress.yaml": LEGACY_INGRESS},
                       f"dependencies:\n  - name: db\n    version: \"{version}\"\n    repository: {url}\n")


def scan_json(*args: str, env: dict) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", "--target", "1.25", *args, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def api_findings(report: dict) -> list[dict]:
    """The findings of the chart's objects (the component layer names the dependency too: no data)."""
    return [f for f in report["findings"] if not f["rule"].startswith("component/")]


def tree_files(folder: Path) -> list[tuple[str, bytes | None]]:
    """Every file of the tree with its bytes (a copy made of links must never be written through)."""
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else None) for p in folder.rglob("*"))


def test_without_network_the_chart_renders_alone_and_the_dependency_is_listed_with_its_pin(
        helm_env, chart_repository, tmp_path):
    url, seen = chart_repository
    chart = umbrella(tmp_path, url)
    before = tree_files(chart)
    code, report = scan_json(str(chart), env=helm_env)
    assert code == 1 and report["summary"]["input_errors"] == 0
    (finding,) = api_findings(report)  # the parent's own template, rendered
    assert (finding["file"], finding["line"]) == (str(chart / "templates" / "ingress.yaml"), 1)
    assert "read as text" not in finding["via"]
    (entry,) = report["unrendered"]
    assert (entry["file"], entry["reason"].split(" is ")[0]) == (str(chart / "Chart.yaml"), f"dependency db 2.1.0 from {url}")
    assert "--allow-network" in entry["reason"]
    assert seen == [] and tree_files(chart) == before
    # The dependency is deployed and no data names it: said at its pin, as --unknown says (a warning).
    (dependency,) = [f for f in report["findings"] if f["rule"] == "component/db/no-data"]
    assert (dependency["file"], dependency["line"], dependency["severity"]) == (str(chart / "Chart.yaml"), 6, "warning")


def test_with_network_the_dependencies_are_fetched_into_a_copy_not_the_tree(helm_env, chart_repository, tmp_path):
    url, seen = chart_repository
    chart = umbrella(tmp_path, url)
    before = tree_files(chart)
    code, report = scan_json("--allow-network", str(chart), env=helm_env)
    assert code == 1 and report["unrendered"] == [] and report["summary"]["input_errors"] == 0
    found = {(f["object"]["kind"], Path(f["file"]).name, f["line"]) for f in api_findings(report)}
    # The dependency's object has no file in the tree: it is reported at the pin, named in `via`.
    assert found == {("Ingress", "ingress.yaml", 1), ("PodDisruptionBudget", "Chart.yaml", 6)}
    pdb = next(f for f in report["findings"] if f["object"]["kind"] == "PodDisruptionBudget")
    assert f"dependency db 2.1.0 from {url}" in pdb["via"] and pdb["via"].endswith("db/templates/pdb.yaml")
    assert any(path.endswith(".tgz") for path in seen)
    assert tree_files(chart) == before  # no charts/, no Chart.lock in the user's tree


def test_without_network_an_archive_in_helms_cache_of_the_pinned_version_is_used(
        helm_env, chart_repository, tmp_path):
    url, seen = chart_repository
    helm = helm_env["KUBEHOP_HELM"]
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    subprocess.run([helm, "pull", "db", "--repo", url, "--version", "2.1.0", "-d", str(pulled)], check=True,
                   capture_output=True)
    # helm 4 keeps what it pulled in its content cache; helm 3 in its repository cache by file name.
    repository = Path(helm_env["HELM_CACHE_HOME"]) / "repository"
    repository.mkdir(parents=True, exist_ok=True)
    shutil.copy(pulled / "db-2.1.0.tgz", repository / "db-2.1.0.tgz")
    seen.clear()
    code, report = scan_json(str(umbrella(tmp_path, url, version="~2.1.0")), env=helm_env)
    assert code == 1 and report["unrendered"] == []
    assert {f["object"]["kind"] for f in api_findings(report)} == {"Ingress", "PodDisruptionBudget"}
    assert seen == []

    # A pin the cache holds no version of: rendered alone.
    shutil.rmtree(tmp_path / "tree")
    code, report = scan_json(str(umbrella(tmp_path, url, version="3.0.0")), env=helm_env)
    assert {f["object"]["kind"] for f in api_findings(report)} == {"Ingress"}
    (entry,) = report["unrendered"]
    assert entry["reason"].startswith(f"dependency db 3.0.0 from {url} is neither in charts/ nor in helm's local cache")


def test_helms_cache_is_looked_for_where_its_environment_says_now(helm_env, chart_repository, tmp_path, monkeypatch):
    url, _ = chart_repository
    helm = helm_env["KUBEHOP_HELM"]
    (tmp_path / "pulled").mkdir()
    subprocess.run([helm, "pull", "db", "--repo", url, "--version", "2.1.0", "-d", str(tmp_path / "pulled")],
                   check=True, capture_output=True)
    holding = tmp_path / "holding"
    (holding / "repository").mkdir(parents=True)
    shutil.copy(tmp_path / "pulled" / "db-2.1.0.tgz", holding / "repository" / "db-2.1.0.tgz")
    chart = str(umbrella(tmp_path, url))
    # kubehop keeps `helm env`'s answer (find.remembered), for the variables it was asked under only.
    for cache, rendered in ((tmp_path / "empty", {"Ingress"}), (holding, {"Ingress", "PodDisruptionBudget"}),
                            (tmp_path / "empty", {"Ingress"})):
        monkeypatch.setenv("HELM_CACHE_HOME", str(cache))
        env = {**helm_env, "HELM_CACHE_HOME": str(cache)}
        assert {f["object"]["kind"] for f in api_findings(scan_json(chart, env=env)[1])} == rendered


def test_the_releases_of_one_chart_prepared_at_once_share_one_copy(helm_env, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from scanner.sources.helm.chart_copies import ChartCopies, Preparation
    from scanner.sources.helm.render import ChartRelease

    chart = umbrella(tmp_path, "https://charts.example.org")
    before = tree_files(chart)
    releases = [ChartRelease(str(chart), f"release-{number}") for number in range(8)]
    with ChartCopies([str(tmp_path / "tree")], helm_env["KUBEHOP_HELM"], False) as copies:
        with ThreadPoolExecutor(max_workers=8) as pool:  # as the render pool's workers prepare them
            prepared = list(pool.map(copies.prepared, releases))
        found = Preparation()
        copies.collect(releases, found)
        (folder,) = {release.render_dir for release in prepared}
        assert folder and Path(folder, "Chart.yaml").is_file() and [r.release for r in prepared] == \
            [r.release for r in releases]
        assert len(list(Path(folder).parent.parent.iterdir())) == 1  # one copy made
    (entry,) = found.unrendered  # said once, for the chart
    assert "dependency db 2.1.0 from https://charts.example.org" in entry.message
    assert tree_files(chart) == before


def test_a_copy_made_of_links_renders_again_when_the_chart_changes(helm_env, tmp_path):
    # The copy links to the chart's own templates/: the render cache's key reads through the links.
    chart = umbrella(tmp_path, "https://charts.example.org")
    before = tree_files(chart)
    _, report = scan_json(str(chart), env=helm_env)
    assert [(f["object"]["kind"], f["file"]) for f in api_findings(report)] == \
        [("Ingress", str(chart / "templates" / "ingress.yaml"))]
    assert tree_files(chart) == before
    (chart / "templates" / "ingress.yaml").write_text(LEGACY_PDB.replace("-db", "-web"))
    before = tree_files(chart)
    _, report = scan_json(str(chart), env=helm_env)
    assert [(f["object"]["kind"], f["file"]) for f in api_findings(report)] == \
        [("PodDisruptionBudget", str(chart / "templates" / "ingress.yaml"))]
    assert tree_files(chart) == before


def test_a_copy_helm_cannot_render_is_read_as_text_through_its_links(helm_env, tmp_path):
    chart = umbrella(tmp_path, "https://charts.example.org")
    (chart / "templates" / "broken.yaml").write_text('{{ required "set me" .Values.missing }}\n')
    code, report = scan_json(str(chart), env=helm_env)
    assert code == 1 and report["summary"]["input_errors"] == 0
    (finding,) = api_findings(report)
    assert (finding["file"], finding["line"]) == (str(chart / "templates" / "ingress.yaml"), 1)
    assert "read as text" in finding["via"]


def test_a_file_dependency_in_the_tree_is_rendered_and_reported_at_its_own_file(helm_env, tmp_path):
    library = write_chart(tmp_path / "tree" / "library", "library", "0.1.0", {"pdb.yaml": LEGACY_PDB})
    chart = write_chart(tmp_path / "tree" / "app", "app", "1.0.0", {"ingress.yaml": LEGACY_INGRESS},
                        "dependencies:\n  - name: library\n    version: 0.1.0\n    repository: file://../library\n")
    before = tree_files(tmp_path / "tree")
    code, report = scan_json(str(tmp_path / "tree"), env=helm_env)
    assert code == 1 and report["unrendered"] == []
    found = {(f["object"]["kind"], f["file"], f["line"], f["via"].split(" of ")[0]) for f in api_findings(report)}
    assert found == {("Ingress", str(chart / "templates" / "ingress.yaml"), 1, "helm release app"),
                     ("PodDisruptionBudget", str(library / "templates" / "pdb.yaml"), 1, "helm release app"),
                     ("PodDisruptionBudget", str(library / "templates" / "pdb.yaml"), 1, "helm release library")}
    assert tree_files(tmp_path / "tree") == before

    # Scanned alone, the chart's dependency lies outside the scanned tree: not read.
    code, report = scan_json(str(chart), env=helm_env)
    assert {f["object"]["kind"] for f in api_findings(report)} == {"Ingress"}
    (entry,) = report["unrendered"]
    assert "is not a chart folder in the scanned tree" in entry["reason"]


def test_the_missing_dependency_is_still_a_component_and_a_wrapper_chart_is_not_a_release(tmp_path):
    from test_detect import found, tree

    root = tree(tmp_path, {
        "platform/mesh/Chart.yaml": """
            apiVersion: v2
            name: mesh
            version: 0.0.0
            dependencies:
              - name: mesh
                version: 1.17.2
                repository: https://charts.example.org/
            """,
    })
    assert [(d[0], d[1], d[3], d[6]) for d in found(root)] == [("mesh", "1.17.2", "Chart.yaml", "chart")]
