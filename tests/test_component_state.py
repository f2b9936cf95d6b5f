"""Component state end to end: unknown is never fine, never blocked; scan and plan say the same.

The Flux homelab fixture is shaped like issue 11's (k3s v1.28.3+k3s1 in system-upgrade Plans, Flux
v2.1.2 from a remote kustomization, 29 helm v2beta1 HelmReleases, 23 source v1beta2 sources).
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from datetime import date
from pathlib import Path

import pytest

from conftest import REPO, run_kubehop

HOMELAB = "tests/fixtures/flux-homelab"


def run_json(*args: str, env: dict | None = None) -> tuple[int, dict]:
    proc = run_kubehop(*args, "--format", "json", env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def flux_steps(window: dict) -> list[tuple[str, str]]:
    return [(s["from"], s["to"]) for s in window["before"] if s["component"] == "flux"]


def test_homelab_plan_moves_flux_early_enough_for_every_hop():
    code, plan = run_json("plan", "--target", "1.36", HOMELAB)
    assert (plan["from"], plan["distro"]) == ("1.28", "k3s")  # read from the system-upgrade Plans
    assert code == 1
    windows = plan["windows"]
    # Flux 2.1 does not support 1.29 (or states nothing for it): the plan moves it to the oldest release
    # that states support, before the first hop, and on before every hop its range stops at.
    [(source, first)] = flux_steps(windows[0])
    assert source == "2.1" and first != "2.1"
    [flux] = [c for c in plan["components"] if c["name"] == "flux"]
    assert (flux["start"], flux["end"]) == ("2.1", "2.9")
    catalog = _flux_ranges()
    release = "2.1"
    for window in windows:
        for _, to in flux_steps(window):
            release = to
        low, high = catalog[release]
        assert low <= _minor(window["to"]) <= high, (window["to"], release)


def test_homelab_plan_migrates_helm_v2beta1_and_source_v1beta2_before_the_moves_that_remove_them():
    _, plan = run_json("plan", "--target", "1.36", HOMELAB)
    found = {}
    for window in plan["windows"]:
        for migration in window["migrations"]:
            found.setdefault(migration["apiVersion"], []).append((window["to"], migration))
    helm, source = found["helm.toolkit.fluxcd.io/v2beta1"], found["source.toolkit.fluxcd.io/v1beta2"]
    assert sum(len(m["objects"]) for _, m in helm) == 29
    assert sum(len(m["objects"]) for _, m in source) == 23
    for hop, migration in helm + source:
        [window] = [w for w in plan["windows"] if w["to"] == hop]
        removed = migration["removed_in"].split()[1]  # "flux 2.7"
        # planned in the window of the move that crosses the removal, not already, not unknown
        assert any(s["component"] == "flux" and s["from"] < removed <= s["to"] for s in window["before"])
        assert not migration["already"]


def test_homelab_scan_reports_those_objects_as_blockers_at_their_hop_with_file_and_line():
    code, report = run_json("scan", "--from", "1.28", "--target", "1.36", HOMELAB)
    assert code == 1
    by_kind = {}
    for f in report["findings"]:
        if f["rule"].startswith("flux/"):
            by_kind.setdefault((f["object"]["apiVersion"], f["object"]["kind"]), []).append(f)
    helm = by_kind[("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease")]
    assert len(helm) == 29 and {f["hop"] for f in helm} == {"hop to 1.34"}
    assert {f["severity"] for f in helm} == {"error"}
    assert all(f["line"] == 1 and f["file"].endswith("/helmrelease.yaml") for f in helm)
    sources = [f for (api, _), fs in by_kind.items() if api == "source.toolkit.fluxcd.io/v1beta2" for f in fs]
    assert len(sources) == 23 and {f["hop"] for f in sources} == {"hop to 1.35"}
    lines = {f["line"] for f in sources if f["file"].endswith("repositories.yaml")}
    assert len(lines) == 22 and 1 in lines  # each object at its own apiVersion line
    # Flux itself, at the line of its pin (the remote kustomization's ?ref=v2.1.2)
    [flux] = [f for f in report["findings"] if f["rule"].startswith("component/flux/")]
    assert (flux["file"], flux["line"], flux["hop"]) == (f"{HOMELAB}/clusters/home/flux-system/kustomization.yaml",
                                                         4, "hop to 1.29")
    assert "move it" in flux["message"] and flux["support"] in ("unknown", "unsupported")
    assert "before the hop to 1.34: flux 2.6 → 2.7" in flux["remediation"]


def test_homelab_scan_and_plan_count_the_same_blockers_and_warnings():
    _, report = run_json("scan", "--from", "1.28", "--target", "1.36", HOMELAB)
    _, plan = run_json("plan", "--from", "1.28", "--target", "1.36", HOMELAB)
    assert report["summary"]["errors"] == plan["blockers"] > 52


def test_scan_without_from_starts_the_components_where_the_tree_pins_the_cluster():
    _, given = run_json("scan", "--from", "1.28", "--target", "1.36", HOMELAB)
    _, read = run_json("scan", "--target", "1.36", HOMELAB)
    rules = lambda r: sorted((f["rule"], f["file"], f["line"], f["breaks_in"]) for f in r["findings"])  # noqa: E731
    assert rules(read) == rules(given)


def test_homelab_scan_with_the_cluster_at_the_target_judges_each_component_there_not_at_past_hops():
    """The system-upgrade Plans pin k3s v1.28.3: a scan up to 1.28 has no hop left. cert-manager 1.13
    (1.21-1.27) is already outside its range, and its fix is the release that supports 1.28, not a move
    'before the hop to 1.28'; nothing is said of the hops that already happened (unverified, unknown
    support), and Flux 2.1, which runs on 1.28, moves nowhere, so its v2beta1 objects are not due. The
    Plans at 1.28 are where the cluster is: they move nothing, so no order is blamed for cert-manager."""
    code, report = run_json("scan", "--target", "1.28", HOMELAB)
    assert (report["from"], code) == ("1.28", 0)  # warnings only: the orders that put it there move nothing
    assert not [f for f in report["findings"] if f["rule"] == "upgrade-order/component-support"]
    components = [f for f in report["findings"] if f["rule"].startswith("component/")]
    [cert] = [f for f in components if f["rule"].startswith("component/cert-manager/")]
    assert (cert["rule"], cert["severity"], cert["hop"]) == ("component/cert-manager/outside-range", "warning",
                                                             "at 1.28")
    assert cert["message"] == ("cert-manager 1.13 does not list Kubernetes 1.28 (supports 1.21–1.27): the cluster "
                               "already runs outside its stated range; move it to 1.14 (it supports 1.24–1.31)")
    assert cert["fix"] == "move it to 1.14 (it supports 1.24–1.31)"
    assert cert["remediation"] == ["at 1.28: cert-manager 1.13 → 1.14"]
    assert not any("before the hop" in text for f in components
                   for text in (f["message"], f["fix"] or "", *f["remediation"]))
    assert {f["rule"].rpartition("/")[2] for f in components} == {"outside-range", "unknown-release"}
    assert not any(f["rule"].startswith("flux/") for f in report["findings"])


def _minor(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def _flux_ranges() -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
    from scanner.components.catalog import load_catalog

    return {e.version: (tuple(e.min), tuple(e.max) if e.max else (1, 99))
            for r in load_catalog().components["flux"].releases for e in r.effective() if e.min}


# --- a component whose newest release states no range: unverified ----------------------------------

COMPONENT = """
name: widget
title: Widget
data_checked: "{today}"
one_minor_at_a_time: false
one_minor_at_a_time_source: https://example.org/widget/upgrade
detect:
  charts:
    - {name: widget, repositories: ["https://charts.example.org"]}
  chart_versions: same
  chart_versions_source: https://example.org/widget/chart
releases:
  - version: "3.1"
    released: "2025-01"
    kubernetes: {min: "1.30", max: "1.33"}
    source: https://example.org/widget/3.1
    source_kind: primary
  - version: "3.2"
    released: "2025-08"
    kubernetes: {min: null, max: null}
    source: https://example.org/widget/3.2
    source_kind: primary
"""


@pytest.fixture
def widget_data(tmp_path) -> dict:
    """A data root with kubehop's rules and a single component, Widget, whose newest release has no range."""
    root = tmp_path / "data"
    (root / "compat-matrix").mkdir(parents=True)
    os.symlink(REPO / "rules", root / "rules")
    os.symlink(REPO / "compat-matrix" / "schema", root / "compat-matrix" / "schema")
    (root / "compat-matrix" / "widget.yaml").write_text(COMPONENT.lstrip().replace("{today}", str(date.today())))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "widget.yaml").write_text(textwrap.dedent("""
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: widget, namespace: widget}
        spec:
          chart:
            spec:
              chart: widget
              version: 3.2.4
              sourceRef: {kind: HelmRepository, name: widget}
        """).lstrip())
    return {"env": {"KUBEHOP_DATA_DIR": str(root)}, "tree": str(tree)}


def test_a_newest_release_without_a_range_is_unverified_a_warning_by_default(widget_data):
    code, report = run_json("scan", "--from", "1.33", "--target", "1.34", widget_data["tree"], env=widget_data["env"])
    assert code == 0
    [finding] = report["findings"]
    assert (finding["rule"], finding["severity"], finding["support"]) == (
        "component/widget/unverified", "warning", "unverified")
    assert (finding["line"], finding["hop"]) == (8, "hop to 1.34")
    # the evidence that exists: the newest stated range and the newest release's date
    assert "the newest release kubehop knows is 3.2, released 2025-08, no stated range" in finding["message"]
    assert "the newest stated range is 3.1's, 1.30–1.33" in finding["message"]


@pytest.mark.parametrize("command", ["scan", "plan"])
def test_unknown_block_makes_an_unverified_hop_exit_1_and_ignore_drops_it(widget_data, command):
    args = (command, "--from", "1.33", "--target", "1.34", widget_data["tree"])
    code, _ = run_json(*args, "--unknown", "block", env=widget_data["env"])
    assert code == 1
    code, document = run_json(*args, "--unknown", "ignore", env=widget_data["env"])
    assert code == 0
    if command == "scan":
        assert document["findings"] == []


def test_unknown_policy_from_the_configuration(widget_data):
    Path(widget_data["tree"], ".kubehop.yaml").write_text("unknown: block\n")
    code, _ = run_json("scan", "--from", "1.33", "--target", "1.34", widget_data["tree"], env=widget_data["env"])
    assert code == 1
    code, _ = run_json("scan", "--unknown", "warn", "--from", "1.33", "--target", "1.34", widget_data["tree"],
                       env=widget_data["env"])
    assert code == 0


def test_a_stated_maximum_below_the_hop_blocks_at_the_pin_with_the_move(widget_data):
    Path(widget_data["tree"], "widget.yaml").write_text(
        Path(widget_data["tree"], "widget.yaml").read_text().replace("3.2.4", "3.1.0"))
    code, report = run_json("scan", "--from", "1.33", "--target", "1.34", widget_data["tree"], env=widget_data["env"])
    assert code == 1
    blocker, unverified = report["findings"]
    assert (blocker["rule"], blocker["severity"], blocker["line"]) == ("component/widget/unsupported", "error", 8)
    assert blocker["message"] == ("Widget 3.1 supports Kubernetes 1.30–1.33, not 1.34; move it to 3.2 before the hop "
                                  "to 1.34 (it states no range for 1.34: unverified)")
    assert blocker["remediation"] == ["before the hop to 1.34: widget 3.1 → 3.2"]
    assert unverified["rule"] == "component/widget/unverified"


# --- component versions read from image tags; versions kubehop cannot tell ---------------------------

CERTIFICATE = """
apiVersion: cert-manager.io/v1alpha2
kind: Certificate
metadata: {name: web, namespace: shop}
spec: {secretName: web-tls}
"""


def test_a_component_pinned_only_by_its_image_tag_is_detected_and_its_removed_apis_reported(tmp_path):
    (tmp_path / "cert-manager.yaml").write_text(textwrap.dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: cert-manager, namespace: cert-manager}
        spec:
          selector: {matchLabels: {app: cert-manager}}
          template:
            metadata: {labels: {app: cert-manager}}
            spec:
              containers:
                - name: cert-manager
                  image: quay.io/jetstack/cert-manager-controller:v0.11.0
        """).lstrip())
    (tmp_path / "certificate.yaml").write_text(CERTIFICATE.lstrip())
    code, report = run_json("scan", "--from", "1.20", "--target", "1.21", str(tmp_path))
    assert code == 1
    findings = {f["rule"]: f for f in report["findings"]}
    pin = findings["component/cert-manager/unknown-support"]
    assert (pin["file"].endswith("cert-manager.yaml"), pin["line"]) == (True, 11)
    # 0.11 is older than every release the data lists: its range is unknown, not "no support" (issue 23.3).
    assert ("cert-manager 0.11 is a release kubehop has no data on (its range is unknown); 1.7 is the oldest "
            "release stated to support Kubernetes 1.21 (1.18–1.23)") in pin["message"]
    moved = findings["cert-manager/cert-manager.io/v1alpha2/Certificate"]
    assert (moved["severity"], moved["hop"]) == ("error", "hop to 1.21")
    assert "no longer served from cert-manager 1.6, which the hop to 1.21 needs" in moved["message"]


def test_a_move_out_of_a_release_older_than_the_data_says_the_minors_between_come_in_turn(tmp_path):
    """scout S9: Rook moves one minor at a time and the data starts at 1.10; from an image at 1.2 the fix
    read "rook-ceph 1.2 → 1.10" as if that were one allowed move."""
    (tmp_path / "tools.yaml").write_text(textwrap.dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: tools, namespace: rook-ceph}
        spec:
          selector: {matchLabels: {app: t}}
          template:
            metadata: {labels: {app: t}}
            spec:
              containers: [{name: t, image: "rook/ceph:v1.2.3"}]
        """).lstrip())
    code, report = run_json("scan", "--from", "1.17", "--target", "1.36", str(tmp_path))
    (finding,) = [f for f in report["findings"] if f["rule"] == "component/rook-ceph/unknown-support"]
    first, second = finding["remediation"][:2]
    assert first == ("before the hop to 1.23: rook-ceph 1.2 → 1.10 (one minor at a time: the minors between 1.2 "
                     "and 1.10 are not in kubehop's data; take each in turn)")
    assert second == "before the hop to 1.23: rook-ceph 1.10 → 1.11"


@pytest.mark.parametrize("unknown, severity", [("warn", "warning"), ("block", "error"), ("ignore", None)])
def test_a_removed_api_of_a_component_whose_release_is_unknown_is_a_warning_naming_the_release(
        tmp_path, unknown, severity):
    (tmp_path / "certificate.yaml").write_text(CERTIFICATE.lstrip())
    code, report = run_json("scan", "--unknown", unknown, "--target", "1.30", str(tmp_path))
    found = [f for f in report["findings"] if f["rule"] == "cert-manager/cert-manager.io/v1alpha2/Certificate"]
    if severity is None:
        assert found == [] and code == 0
        return
    [finding] = found
    assert (finding["severity"], finding["support"], finding["line"]) == (severity, "unknown", 1)
    assert finding["message"].startswith("cert-manager.io/v1alpha2 Certificate is not served from cert-manager 1.6 "
                                         "on, and kubehop cannot tell which cert-manager release runs")
    assert code == (1 if severity == "error" else 0)


# --- the next minor, before its release -----------------------------------------------------------

def test_the_next_minor_is_accepted_with_a_notice_that_it_is_projected(tmp_path):
    from scanner.rulebook import load_rulebook

    book = load_rulebook()
    nxt = str(book.projected)
    (tmp_path / "policy.yaml").write_text(textwrap.dedent("""
        apiVersion: admissionregistration.k8s.io/v1alpha1
        kind: MutatingAdmissionPolicy
        metadata: {name: defaults}
        spec: {}
        """).lstrip())
    removed = [r for r in book.rules() if r.removed_in == book.projected]
    code, report = run_json("scan", "--from", str(book.newest), "--target", nxt, str(tmp_path))
    assert any(n.startswith(f"Kubernetes {nxt} is not released: the APIs it serves are projected")
               for n in report["notices"])
    if any(r.api_version == "admissionregistration.k8s.io/v1alpha1" for r in removed):
        [finding] = report["findings"]
        assert (finding["severity"], finding["breaks_in"]) == ("error", nxt) and code == 1
    beyond = run_kubehop("scan", "--target", str(book.projected.next()), str(tmp_path))
    assert beyond.returncode == 2 and "projected before its release" in beyond.stderr.decode()


def test_the_projected_minor_is_unverified_for_every_component_never_blocked_by_missing_data():
    from scanner.rulebook import load_rulebook

    book = load_rulebook()
    code, plan = run_json("plan", "--from", str(book.newest), "--target", str(book.projected), HOMELAB)
    [window] = plan["windows"]
    assert window["before"] == []  # nothing can be moved for a minor no release states yet
    kinds = {(p["component"], p["kind"]) for p in window["problems"]}
    assert ("flux", "unverified") in kinds
    assert all("is not released yet" in p["message"] for p in window["problems"] if p["kind"] == "unverified")
    assert not any(p["kind"] in ("blocked", "unsupported") for p in window["problems"])


def test_a_chart_that_ships_an_app_is_named_by_the_chart_version_pinned_and_the_apps_release(tmp_path):
    """kube-prometheus-stack's releases are the prometheus-operator's it ships (scout S7): the user
    wrote chart 56.2.0, so the finding names it, beside the operator release it ships."""
    (tmp_path / "helmrelease.yaml").write_text(textwrap.dedent("""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: kube-prometheus-stack, namespace: monitoring}
        spec:
          chart:
            spec:
              chart: kube-prometheus-stack
              version: 56.2.0
              sourceRef: {kind: HelmRepository, name: prometheus-community}
        """))
    _, report = run_json("scan", "--from", "1.35", "--target", "1.36", str(tmp_path))
    [finding] = [f for f in report["findings"] if f["rule"] == "component/kube-prometheus-stack/unverified"]
    assert finding["message"].startswith("kube-prometheus-stack chart 56.2.0 (prometheus-operator 0.71): ")
    # The newest release is named with the chart lines that ship it.
    assert re.search(r"the newest release kubehop knows is 0\.\d+ \(chart \d+", finding["message"])
