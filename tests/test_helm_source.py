"""Helm charts rendered by the real helm for the target minor, findings pointing at template lines."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial

import pytest

from conftest import FIXTURES, REPO, run_kubehop, shared_or_skip, tool_or_skip
from scanner.rulebook import load_rulebook
from scanner.scan import ScanOptions
from scanner.sources import collect
from scanner.sources.helm.chart_templates import locate, possible_objects
from scanner.sources.helm.discovery import discovery_documents
from scanner.sources.helm.render import HelmSettings, render_all, releases_for
from scanner.versions import Minor

CHARTS = FIXTURES / "charts"
CHARTS_ARG = "tests/fixtures/charts"


@pytest.fixture
def helm_env(tmp_path, monkeypatch) -> dict[str, str]:
    """The real helm, and a render cache of this test's own."""
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def scan_json(*args: str, env: dict[str, str]) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", *args, env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def objects(paths: list[str], target: str, **options) -> dict[str, list]:
    """kind/name -> (apiVersion, path, line, via) of everything the sources produce."""
    found = collect(paths, Minor(*map(int, target.split("."))), ScanOptions(**options))
    return {f"{m.kind}/{m.name}": (m.api_version, m.origin.path, m.origin.line, m.origin.via)
            for m in found.manifests}


# --- Exact Capabilities ---------------------------------------------------------------------------

def api_findings(report: dict) -> list[dict]:
    """The findings of the tree's objects; the component layer also names what the tree deploys."""
    return [f for f in report["findings"] if not f["rule"].startswith("component/")]


def test_discovery_serves_what_the_target_serves_and_nothing_removed():
    minor = Minor(1, 25)
    docs = discovery_documents(minor, load_rulebook().served.served_at(minor))
    assert docs["/version"]["minor"] == "25"
    assert "/apis/extensions/v1beta1" not in docs
    kinds = {r["kind"] for r in docs["/apis/networking.k8s.io/v1"]["resources"]}
    assert "Ingress" in kinds
    groups = {v["groupVersion"] for g in docs["/apis"]["groups"] for v in g["versions"]}
    assert "networking.k8s.io/v1" in groups and "extensions/v1beta1" not in groups


def test_plain_helm_template_claims_long_removed_apis():
    """Why kubehop does not use `helm template --kube-version` alone: its Capabilities still list
    extensions/v1beta1 at 1.25, so the gated chart would render an API 1.25 does not serve."""
    helm = tool_or_skip("helm")
    out = subprocess.run([helm, "template", "x", str(CHARTS / "capabilities-gated"), "--kube-version", "1.25.0"],
                         capture_output=True, text=True, check=True).stdout
    assert "apiVersion: extensions/v1beta1" in out


def test_a_2019_chart_gated_on_a_removed_api_renders_the_successor(helm_env):
    """chaoskube (helm/charts stable, 2019) asks `.Capabilities.APIVersions.Has "apps/v1beta1"`:
    plain `helm template --kube-version 1.25.0` says yes, a 1.25 cluster says no."""
    chart = shared_or_skip("corpora/helm-charts-2019/stable/chaoskube")
    found = collect([str(chart)], Minor(1, 25)).manifests
    assert [(m.api_version, m.kind, m.origin.line) for m in found] == [("apps/v1", "Deployment", 4)]
    assert found[0].origin.path == str(chart / "templates" / "deployment.yaml")


@pytest.mark.parametrize("target, api_version, line", [
    ("1.25", "networking.k8s.io/v1", 4),  # extensions/v1beta1 is gone: the else branch
    ("1.21", "extensions/v1beta1", 2),  # still served at 1.21: the chart's first choice
])
def test_capabilities_gate_renders_as_on_a_cluster_of_the_target(helm_env, target, api_version, line):
    found = objects([f"{CHARTS_ARG}/capabilities-gated"], target)
    assert found["Ingress/capabilities-gated"] == (
        api_version, f"{CHARTS_ARG}/capabilities-gated/templates/ingress.yaml", line,
        "helm release capabilities-gated of chart capabilities-gated 1.0.0")
    assert found["Service/capabilities-gated"][0] == "v1"


def test_chart_emits_removed_api_only_below_the_minor_its_switch_names(helm_env):
    code, report = scan_json("--target", "1.22", f"{CHARTS_ARG}/version-switch", env=helm_env)
    assert code == 1
    (finding,) = report["findings"]
    assert (finding["file"], finding["line"], finding["column"]) == (
        f"{CHARTS_ARG}/version-switch/templates/ingress.yaml", 2, 1)
    assert finding["object"]["apiVersion"] == "extensions/v1beta1"
    assert finding["via"] == "helm release version-switch of chart version-switch 0.3.0"
    code, report = scan_json("--target", "1.23", f"{CHARTS_ARG}/version-switch", env=helm_env)
    assert code == 0 and report["findings"] == [] and report["summary"]["objects"] == 1


def test_subchart_emitting_a_removed_api_unconditionally_is_reported(helm_env):
    """The target cannot map extensions/v1beta1 at all: helm's own server dry-run would fail on it."""
    code, report = scan_json("--target", "1.25", f"{CHARTS_ARG}/umbrella", env=helm_env)
    assert code == 1
    where = {(f["object"]["name"], f["file"], f["line"], f["via"]) for f in report["findings"]}
    template = f"{CHARTS_ARG}/umbrella/charts/legacy/templates/ingresses.yaml"
    assert where == {(name, template, 3, "helm release umbrella of chart umbrella 2.0.0")
                     for name in ("admin", "public")}
    assert report["summary"]["objects"] == 4  # the parent's ConfigMap and pre-install Job too


def test_objects_helm_skips_are_not_checked(helm_env):
    """A Helm 2 crd-install hook is never installed by Helm 3+: no finding for its removed API."""
    code, report = scan_json("--target", "1.25", f"{CHARTS_ARG}/umbrella", env=helm_env)
    assert not [f for f in report["findings"] if f["object"]["kind"] == "CustomResourceDefinition"]
    (notice,) = report["diagnostics"]
    assert (notice["file"], notice["line"], notice["level"]) == (
        f"{CHARTS_ARG}/umbrella/templates/crd.yaml", 2, "notice")
    assert "'crd-install' is not one Helm runs" in notice["message"]
    assert code == 1  # a notice does not make the input unreadable


# --- Values ---------------------------------------------------------------------------------------

def test_values_file_given_on_the_command_line(helm_env):
    chart = f"{CHARTS_ARG}/values-switch"
    assert scan_json("--target", "1.22", chart, env=helm_env)[0] == 0
    code, report = scan_json("--target", "1.22", "--values", "tests/fixtures/legacy-values.yaml", chart,
                             env=helm_env)
    assert code == 1
    assert [(f["file"], f["line"]) for f in report["findings"]] == [(f"{chart}/templates/ingress.yaml", 2)]


def test_flux_helmrelease_renders_its_local_chart_with_its_values(helm_env):
    code, report = scan_json("--target", "1.22", "tests/fixtures/flux-repo", env=helm_env)
    assert code == 1
    (finding,) = api_findings(report)  # the chart is rendered as the release, not again with defaults
    assert finding["file"] == "tests/fixtures/flux-repo/charts/web/templates/ingress.yaml"
    assert finding["object"]["name"] == "shop-web"  # spec.releaseName
    assert finding["via"] == "Flux HelmRelease shop/web (chart web 3.0.0)"
    (remote,) = report["unrendered"]
    assert remote["file"] == "tests/fixtures/flux-repo/apps/web.yaml"
    assert "monitoring/metrics" in remote["reason"] and "HelmRepository" in remote["reason"]


# --- Failures, fallbacks, cache -------------------------------------------------------------------

def test_a_chart_helm_cannot_render_is_read_as_text_and_the_rest_is_scanned(helm_env):
    code, report = scan_json("--target", "1.25", f"{CHARTS_ARG}/broken", f"{CHARTS_ARG}/umbrella", env=helm_env)
    assert code == 1 and [d for d in report["diagnostics"] if d["level"] == "error"] == []
    (entry,) = report["unrendered"]
    assert entry["file"] == f"{CHARTS_ARG}/broken"
    assert "nil pointer evaluating interface {}.name" in entry["reason"] and "read as text" in entry["reason"]
    assert len(report["findings"]) == 2


@pytest.mark.parametrize("how", ["no helm", "--no-render"])
def test_without_rendering_templates_are_read_as_text_in_the_branches_helm_would_take(how, helm_env):
    """Both charts choose their Ingress by the cluster's Capabilities (one directly, one in a helper):
    read as text at 1.25, they take networking.k8s.io/v1 as helm would, so nothing blocks."""
    env = {**helm_env, "KUBEHOP_HELM": ""} if how == "no helm" else helm_env
    flags = ["--no-render"] if how == "--no-render" else []
    code, report = scan_json("--target", "1.25", *flags, f"{CHARTS_ARG}/capabilities-gated",
                             f"{CHARTS_ARG}/version-switch", env=env)
    assert code == 0 and report["findings"] == []
    assert len(report["unrendered"]) == 2
    assert report["summary"]["files"] == 6  # Chart.yaml, values.yaml and the templates, as when rendered
    (notice,) = report["notices"]
    assert ("helm was not found" if how == "no helm" else "--no-render") in notice


def test_text_reading_follows_helpers_to_both_branches():
    found = {(o.api_version, o.kind, o.line) for o in possible_objects(str(CHARTS / "version-switch"))}
    assert found == {("networking.k8s.io/v1", "Ingress", 2), ("extensions/v1beta1", "Ingress", 2)}
    from test_template_branches import capabilities

    found = {(o.api_version, o.line) for o in possible_objects(str(CHARTS / "version-switch"), capabilities("1.25"))}
    assert found == {("networking.k8s.io/v1", 2)}  # the helper's branch helm takes at 1.25


def test_locate_prefers_the_branch_that_wrote_the_rendered_api_version():
    template = str(CHARTS / "capabilities-gated" / "templates" / "ingress.yaml")
    assert locate(template, "networking.k8s.io/v1", "Ingress") == (4, 1)
    assert locate(template, "extensions/v1beta1", "Ingress") == (2, 1)


def test_render_cache_is_reused_until_the_chart_changes(helm_env, tmp_path):
    chart = tmp_path / "chart"
    shutil.copytree(CHARTS / "capabilities-gated", chart)
    minor = Minor(1, 25)
    settings = HelmSettings(helm_env["KUBEHOP_HELM"], minor, frozenset(load_rulebook().served.served_at(minor)))
    first, = render_all(releases_for([str(chart)]), settings)
    again, = render_all(releases_for([str(chart)]), settings)
    assert (first.cached, again.cached) == (False, True) and first.text == again.text
    (chart / "values.yaml").write_text("host: other.example.com\n")
    changed, = render_all(releases_for([str(chart)]), settings)
    assert not changed.cached and "other.example.com" in changed.text
    other_target = HelmSettings(settings.helm, Minor(1, 21), frozenset(load_rulebook().served.served_at(Minor(1, 21))))
    assert not render_all(releases_for([str(chart)]), other_target)[0].cached


def test_no_progress_output_when_stderr_is_not_a_terminal(helm_env):
    proc = run_kubehop("scan", "--target", "1.25", f"{CHARTS_ARG}/umbrella", env=helm_env)
    assert proc.stderr == b""


def test_report_of_the_test_charts(helm_env, snapshot):
    """What the Helm source decides (where, via, what was not rendered), not the rules' wording."""
    code, report = scan_json("--target", "1.22", CHARTS_ARG, env=helm_env)
    assert code == 1
    sourced = {key: report[key] for key in ("summary", "diagnostics", "unrendered", "notices")}
    sourced["findings"] = [{key: f[key] for key in ("rule", "file", "line", "column", "via", "object")}
                           for f in report["findings"]]
    assert sourced == snapshot


def test_a_problem_in_rendered_output_names_its_template(helm_env, tmp_path):
    chart = tmp_path / "tagged"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: tagged\nversion: 1.0.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: !custom '1'\n")
    code, report = scan_json("--target", "1.25", str(chart), env=helm_env)
    (problem,) = report["diagnostics"]
    assert problem["file"] == str(chart / "templates" / "cm.yaml")
    assert "unknown YAML tag !custom" in problem["message"] and code == 0


REMOTE_RELEASE = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
  namespace: apps
spec:
  url: {url}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: edge
  namespace: apps
spec:
  chart:
    spec:
      chart: values-switch
      version: "1.1.x"
      sourceRef:
        kind: HelmRepository
        name: charts
  values:
    legacyIngress: true
"""


@pytest.fixture
def chart_repository(helm_env, tmp_path):
    """A Helm chart repository on loopback HTTP holding the values-switch chart, packaged by helm."""
    repo = tmp_path / "repo"
    repo.mkdir()
    helm = helm_env["KUBEHOP_HELM"]
    subprocess.run([helm, "package", str(CHARTS / "values-switch"), "-d", str(repo)], check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(http.server.SimpleHTTPRequestHandler, directory=str(repo)))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run([helm, "repo", "index", str(repo), "--url", url], check=True, capture_output=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield url
    server.shutdown()
    server.server_close()


def test_remote_chart_is_downloaded_only_with_allow_network(helm_env, chart_repository, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "edge.yaml").write_text(REMOTE_RELEASE.format(url=chart_repository))
    env = {**helm_env, **{k: str(tmp_path / k) for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")}}
    code, report = scan_json("--target", "1.22", str(tree), env=env)
    assert code == 0 and api_findings(report) == []
    (entry,) = report["unrendered"]
    assert "values-switch 1.1.x from http://127.0.0.1:" in entry["reason"] and "--allow-network" in entry["reason"]

    code, report = scan_json("--target", "1.22", "--allow-network", str(tree), env=env)
    assert code == 1 and report["unrendered"] == []
    (finding,) = api_findings(report)
    assert (finding["file"], finding["line"]) == (str(tree / "edge.yaml"), 9)  # the HelmRelease
    assert finding["via"].startswith("Flux HelmRelease apps/edge (chart values-switch 1.1.x from http://127.0.0.1:")
    assert finding["via"].endswith(", values-switch/templates/ingress.yaml")


OPERATOR_RELEASE = """\
apiVersion: helm.fluxcd.io/v1
kind: HelmRelease
metadata:
  name: edge
  namespace: apps
spec:
  releaseName: edge
  chart:
    repository: {url}/
    name: values-switch
    version: 1.1.0
  values:
    legacyIngress: true
"""


def test_a_flux_v1_helmrelease_is_rendered_like_a_v2_one(helm_env, chart_repository, tmp_path):
    """scout S8 (billimek/k8s-gitops in 2020): 40 helm-operator HelmReleases were passed over without a
    word, "0 not rendered"; their charts are read the way a v2 release's are, and pinned as components."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "edge.yaml").write_text(OPERATOR_RELEASE.format(url=chart_repository))
    env = {**helm_env, **{k: str(tmp_path / k) for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")}}
    code, report = scan_json("--target", "1.22", str(tree), env=env)
    (entry,) = report["unrendered"]
    assert entry["reason"].startswith("Flux v1 HelmRelease apps/edge: chart values-switch from http://127.0.0.1:")
    assert "--allow-network" in entry["reason"]

    code, report = scan_json("--target", "1.22", "--allow-network", str(tree), env=env)
    assert code == 1 and report["unrendered"] == []
    (finding,) = api_findings(report)  # the values switch the legacy Ingress on
    assert finding["object"]["apiVersion"] == "extensions/v1beta1" and finding["file"] == str(tree / "edge.yaml")
    assert finding["via"].startswith("Flux v1 HelmRelease apps/edge (chart values-switch 1.1.0 from http://127.0.0.1:")


def test_a_flux_v1_helmrelease_pins_its_chart(tmp_path):
    from catalogs import catalog, store
    from scanner.components.reading import detect

    # The chart's repository is one the component's data lists (components.repositories).
    (tmp_path / "store.yaml").write_text(OPERATOR_RELEASE.format(url="oci://ghcr.io/example/charts").replace(
        "values-switch", "store").replace("1.1.0", "6.1.0"))
    (pin,) = detect([str(tmp_path)], catalog([store()])).detections
    assert (pin.component, pin.pin, pin.origin.line, pin.source) == ("store", "6.1.0", 11, "chart")
    assert [r.version for r in pin.releases] == ["1.8"]  # chart 6 ships store 1.8


def test_progress_is_shown_on_a_terminal(helm_env):
    pty = pytest.importorskip("pty")  # POSIX terminals
    controller, terminal = pty.openpty()
    env = {**os.environ, **helm_env, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "scanner", "scan", "--target", "1.25", f"{CHARTS_ARG}/umbrella"],
                          cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=terminal, timeout=120)
    os.close(terminal)
    shown = os.read(controller, 4096).decode()
    os.close(controller)
    assert done.returncode == 1
    assert "kubehop: rendered 1/1 charts" in shown


def test_flux_chart_outside_the_scanned_paths_is_found_in_the_repository(helm_env, tmp_path):
    """Pointed at the cluster folder only, the HelmRelease's ./charts/web is still the repo's chart."""
    repo = tmp_path / "platform"
    shutil.copytree(FIXTURES / "flux-repo", repo)
    (repo / ".git").mkdir()
    code, report = scan_json("--target", "1.22", str(repo / "apps"), env=helm_env)
    assert code == 1
    (finding,) = api_findings(report)
    assert finding["file"] == "charts/web/templates/ingress.yaml"  # from the repository root
    assert finding["via"] == "Flux HelmRelease shop/web (chart web 3.0.0)"


def test_apis_of_crds_in_the_tree_are_in_the_capabilities(helm_env):
    """A cluster running the tree's CRDs serves their APIs: templates gated on them render."""
    tree = "tests/fixtures/custom-api"
    alone = objects([f"{tree}/chart"], "1.30")
    with_crd = objects([tree], "1.30")
    assert "ServiceMonitor/metrics" not in alone
    assert with_crd["ServiceMonitor/metrics"][:3] == (
        "monitoring.example.com/v1", f"{tree}/chart/templates/servicemonitor.yaml", 2)
