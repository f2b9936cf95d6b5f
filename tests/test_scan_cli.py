"""`kubehop scan` and `kubehop rules` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, run_kubehop

INGRESS = """\
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
  namespace: shop
spec: {}
"""


def report(proc) -> dict:
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return json.loads(proc.stdout)


def test_example_tree_text(snapshot):
    proc = run_kubehop("scan", "--from", "1.31", "--target", "1.36", "examples/")
    assert proc.returncode == 1
    assert proc.stdout.decode() == snapshot


def test_example_tree_json(snapshot):
    proc = run_kubehop("scan", "--from", "1.31", "--target", "1.36", "--format", "json", "examples/")
    assert proc.returncode == 1
    assert report(proc) == snapshot


def test_output_is_deterministic():
    first = run_kubehop("scan", "--format", "json", "examples/").stdout
    assert first == run_kubehop("scan", "--format", "json", "examples/").stdout


@pytest.mark.parametrize("spelling", ["1.36", "v1.36", "v1.36.2", "1.36.0+k3s1"])
def test_target_spellings_mean_the_minor(spelling, tmp_path):
    (tmp_path / "a.yaml").write_text(INGRESS)
    assert report(run_kubehop("scan", "--format", "json", "--target", spelling, str(tmp_path)))["target"] == "1.36"


@pytest.mark.parametrize("bad", ["1.99", "banana", "2", ""])
def test_unknown_target_is_a_usage_error_naming_the_range(bad, tmp_path):
    proc = run_kubehop("scan", "--target", bad, str(tmp_path))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "Traceback" not in err and "1.16 to 1.37" in err


def test_from_newer_than_target(tmp_path):
    proc = run_kubehop("scan", "--from", "1.35", "--target", "1.33", str(tmp_path))
    assert proc.returncode == 2 and "newer than --target" in proc.stderr.decode()


def test_target_defaults_to_newest_known(tmp_path):
    (tmp_path / "a.yaml").write_text(INGRESS)
    assert report(run_kubehop("scan", "--format", "json", str(tmp_path)))["target"] == "1.37"


def test_version_names_data_date():
    proc = run_kubehop("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("kubehop ") and "data checked 20" in proc.stdout.decode()


def test_stdin(tmp_path):
    proc = run_kubehop("scan", "--format", "json", "-", stdin=INGRESS.encode())
    [finding] = report(proc)["findings"]
    assert finding["file"] == "<stdin>" and finding["line"] == 1
    assert proc.returncode == 1


def test_stdin_problems_read_like_a_file_s():
    """Empty standard input is a notice, as an empty file is; a non-UTF-8 byte keeps its line."""
    empty = run_kubehop("scan", "--format", "json", "-", stdin=b"\n")
    assert empty.returncode == 0
    assert report(empty)["diagnostics"] == [{"file": "<stdin>", "line": None, "level": "notice",
                                             "message": "empty file"}]
    [problem] = report(run_kubehop("scan", "--format", "json", "-", stdin=b"a: b\nc: \xff\n"))["diagnostics"]
    assert (problem["file"], problem["line"], problem["level"]) == ("<stdin>", 2, "error")


def test_overlapping_paths_are_read_once(tmp_path):
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "ing.yaml").write_text(INGRESS)
    proc = run_kubehop("scan", "--format", "json", str(tmp_path / "apps"), str(tmp_path),
                       str(tmp_path / "apps" / "ing.yaml"), f"{tmp_path}/", str(tmp_path / "apps" / "nope.yaml"))
    result = report(proc)
    assert [f["file"] for f in result["findings"]] == [str(tmp_path / "apps" / "ing.yaml")]
    assert result["summary"]["files"] == 1
    assert [d["message"] for d in result["diagnostics"]] == ["does not exist"]


def test_finding_carries_everything_a_person_needs(tmp_path):
    (tmp_path / "ing.yaml").write_text("# leading comment\n---\n" + INGRESS)
    [f] = report(run_kubehop("scan", "--from", "1.21", "--target", "1.36", "--format", "json", str(tmp_path)))["findings"]
    assert (f["line"], f["column"]) == (3, 1)
    assert f["object"] == {"apiVersion": "extensions/v1beta1", "kind": "Ingress", "namespace": "shop", "name": "web"}
    assert f["severity"] == "error" and f["breaks_in"] == "1.22" and f["hop"] == "hop to 1.22"
    assert f["replacement"] == "networking.k8s.io/v1" and "pathType" in f["note"]
    assert f["migrate"] == "now" and f["source"].startswith("https://")


def test_already_broken_at_from_is_grouped_apart(tmp_path):
    (tmp_path / "ing.yaml").write_text(INGRESS)
    [f] = report(run_kubehop("scan", "--from", "1.31", "--target", "1.36", "--format", "json", str(tmp_path)))["findings"]
    assert f["hop"] == "already broken at 1.31"


def test_deprecated_but_served_at_target_is_a_warning(tmp_path):
    (tmp_path / "ing.yaml").write_text(INGRESS)
    proc = run_kubehop("scan", "--target", "1.20", "--format", "json", str(tmp_path))
    [f] = report(proc)["findings"]
    assert f["severity"] == "warning" and f["breaks_in"] == "1.22"
    assert proc.returncode == 0


def test_nothing_before_deprecation(tmp_path):
    # flowcontrol v1beta3 was deprecated in 1.29 (and removed in 1.32).
    (tmp_path / "fs.yaml").write_text("apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\n"
                                      "metadata: {name: x}\n")
    proc = run_kubehop("scan", "--target", "1.28", "--format", "json", str(tmp_path))
    assert report(proc)["findings"] == [] and proc.returncode == 0


def test_lists_json_and_non_objects(tmp_path):
    (tmp_path / "list.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- " + INGRESS.replace("\n", "\n  ").rstrip() + "\n")
    (tmp_path / "ing.json").write_text(json.dumps({"apiVersion": "extensions/v1beta1", "kind": "Ingress",
                                                   "metadata": {"name": "j"}}, indent=1))
    (tmp_path / "values.yaml").write_text("replicas: 3\nimage: {tag: x}\n")
    (tmp_path / ".gitlab-ci.yml").write_text("stages: [test]\n")
    result = report(run_kubehop("scan", "--format", "json", str(tmp_path)))
    assert sorted((Path(f["file"]).name, f["line"], f["object"]["name"]) for f in result["findings"]) == [
        ("ing.json", 2, "j"), ("list.yaml", 4, "web")]
    assert result["diagnostics"] == []
    assert result["summary"]["objects"] == 2


def test_vcs_and_vendor_folders_are_skipped(tmp_path):
    for folder in (".git", "node_modules", "vendor"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ing.yaml").write_text(INGRESS)
    result = report(run_kubehop("scan", "--format", "json", str(tmp_path)))
    assert result["findings"] == [] and result["summary"]["files"] == 0


def test_template_syntax_outside_a_chart_is_listed_not_an_error(tmp_path):
    (tmp_path / "loose.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n")
    proc = run_kubehop("scan", "--format", "json", str(tmp_path))
    result = report(proc)
    assert result["diagnostics"] == [] and proc.returncode == 0
    assert [u["file"] for u in result["unrendered"]] == [str(tmp_path / "loose.yaml")]


def test_valid_yaml_with_braces_is_scanned(tmp_path):
    (tmp_path / "rule.yaml").write_text(INGRESS.replace(
        "spec: {}", "spec:\n  x: '{{ $labels.instance }}'\n  y: |\n    {{ $value }} is down\n"))
    result = report(run_kubehop("scan", "--format", "json", str(tmp_path)))
    assert len(result["findings"]) == 1 and result["unrendered"] == []


def test_no_color_when_piped():
    out = run_kubehop("scan", "examples/", env={"NO_COLOR": ""}).stdout.decode()
    assert "\033[" not in out


def test_text_report_colours_only_on_request():
    from scanner.report import render
    from scanner.scan import scan
    from scanner.versions import Minor

    result = scan([str(REPO / "examples")], target=Minor(1, 36))
    assert "\033[31m" in render(result, "text", color=True)
    assert "\033[" not in render(result, "text", color=False)


def test_rules_command_filters_by_removal_minor():
    proc = run_kubehop("rules", "--removed-in", "1.22", "--format", "json")
    rules = json.loads(proc.stdout)
    assert rules and all(r["removed_in"] == "1.22" for r in rules)
    assert any(r["id"] == "extensions/v1beta1/Ingress" for r in rules)


@pytest.mark.parametrize("command", [[], ["scan"], ["rules"]])
def test_help_has_an_example(command):
    proc = run_kubehop(*command, "--help")
    assert proc.returncode == 0 and "Example" in proc.stdout.decode()


def test_the_fix_names_the_successor_kind_when_it_is_another_kind():
    """theepicsaxguy/homelab: Cilium 1.19 removed CiliumBGPPeeringPolicy; 'use cilium.io/v2' named a
    CiliumBGPPeeringPolicy that does not exist (the data's replacement_kind, CiliumBGPClusterConfig,
    was dropped on the way)."""
    proc = run_kubehop("scan", "--target", "1.36", "--no-render", "--format", "json",
                       str(REPO / "tests/fixtures/crd-successor-kind"))
    [finding] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"].startswith("cilium/")]
    assert (finding["line"], finding["fix"]) == (18, "use cilium.io/v2 CiliumBGPClusterConfig")
