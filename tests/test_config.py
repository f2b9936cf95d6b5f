"""Configuration files: discovery, keys, validation, and command-line flags on top."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_kubehop_text as run_kubehop

INGRESS = """\
kind: Ingress
apiVersion: extensions/v1beta1
metadata: {name: storefront, namespace: retail}
spec:
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, backend: {serviceName: storefront, servicePort: 80}}]}
"""


CUSTOM_RULE = """\
rules:
  - id: example.com/v1beta1/Widget
    apiVersion: example.com/v1beta1
    kind: Widget
    deprecated_in: "1.30"
    removed_in: "1.33"
    replacement: example.com/v1
    note: "Widget v1 renames spec.size to spec.replicas."
    source: https://example.com/widgets/upgrade
"""
WIDGET = "apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {name: w}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git checkout (its .git ends the search for a configuration) with one removed API."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "ingress.yaml").write_text(INGRESS)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def scan_json(repo: Path, *args: str):
    done = run_kubehop("scan", "--format", "json", *args, cwd=repo)
    return done, json.loads(done.stdout) if done.stdout else None


def test_target_comes_from_the_config_and_the_flag_overrides_it(repo):
    write(repo / ".kubehop.yaml", 'target: "1.21"\n')
    done, report = scan_json(repo, "platform")
    assert report["target"] == "1.21"
    assert report["findings"][0]["severity"] == "warning"  # still served at 1.21
    assert done.returncode == 0
    done, report = scan_json(repo, "--target", "1.22", "platform")
    assert report["target"] == "1.22"
    assert done.returncode == 1


def test_pyproject_table_is_found_from_a_nested_path(repo):
    write(repo / "pyproject.toml", """\
        [project]
        name = "x"

        [tool.kubehop]
        target = "1.36"
        ignore = ["extensions/*"]
        """)
    done, report = scan_json(repo, "platform/ingress.yaml")
    assert report["target"] == "1.36"
    assert report["findings"] == []
    assert done.returncode == 0


def test_pyproject_without_a_kubehop_table_is_passed_over(repo):
    write(repo / "platform" / "pyproject.toml", '[project]\nname = "x"\n')
    write(repo / ".kubehop.yaml", 'target: "1.21"\n')
    _, report = scan_json(repo, "platform")
    assert report["target"] == "1.21"


def test_search_stops_at_the_repository_top(tmp_path):
    write(tmp_path / ".kubehop.yaml", 'target: "1.21"\n')  # outside the checkout: not ours
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    write(checkout / "ingress.yaml", INGRESS)
    _, report = scan_json(checkout, "ingress.yaml", "--target", "1.36")
    assert report["target"] == "1.36"
    _, report = scan_json(checkout, "ingress.yaml")
    assert report["target"] != "1.21"


def test_paths_and_excludes_are_relative_to_the_config(repo):
    write(repo / "platform" / "vendor" / "old.yaml", INGRESS)
    write(repo / "platform" / "generated-ingress.yaml", INGRESS)
    write(repo / "apps" / "ingress.yaml", INGRESS)
    write(repo / ".kubehop.yaml", """\
        paths: [platform, apps]
        exclude: [platform/vendor, "**/generated-*.yaml"]
        """)
    done, report = scan_json(repo / "apps")  # no PATHS: the config's, wherever we stand
    files = sorted(f["file"] for f in report["findings"])
    assert files == ["apps/ingress.yaml", "platform/ingress.yaml"]  # named from the repository root
    assert report["summary"]["files"] == 2


def test_exclude_flag_adds_to_the_config(repo):
    write(repo / "apps" / "ingress.yaml", INGRESS)
    write(repo / ".kubehop.yaml", "exclude: [platform]\n")
    _, report = scan_json(repo, ".", "--exclude", "apps/*.yaml")
    assert report["summary"]["files"] == 1  # only .kubehop.yaml itself is left
    assert report["findings"] == []


def test_components_and_inventory_read_the_tree_scan_reads(repo):
    """An excluded folder's pins and objects are no more the tree's for `components` and
    `inventory` than for `scan`; --no-config brings them back."""
    write(repo / "upstream" / "cilium.yaml", """\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: cilium, namespace: kube-system}
        spec:
          chart:
            spec: {chart: cilium, version: 1.16.5}
        """)
    write(repo / ".kubehop.yaml", "exclude: [upstream]\n")
    listed = json.loads(run_kubehop("components", "--format", "json", ".", cwd=repo).stdout)["components"]
    assert listed == []
    listed = json.loads(run_kubehop("components", "--format", "json", "--no-config", ".", cwd=repo).stdout)
    assert [c["component"] for c in listed["components"]] == ["cilium"]
    kinds = {use["kind"] for use in json.loads(run_kubehop("inventory", "--format", "json", ".", cwd=repo).stdout)}
    assert kinds == {"Ingress"}


def test_severity_overrides_last_match_wins(repo):
    write(repo / "policy" / "core" / "widgets.yaml", CUSTOM_RULE)
    write(repo / "apps" / "widget.yaml", WIDGET)
    write(repo / ".kubehop.yaml", """\
        target: "1.33"
        rules: [policy]
        severity:
          "*": warning
          example.com/*: error
        """)
    done, report = scan_json(repo, "platform", "apps")
    by_rule = {f["rule"]: f["severity"] for f in report["findings"]}
    assert by_rule == {"extensions/v1beta1/Ingress": "warning", "example.com/v1beta1/Widget": "error"}
    assert done.returncode == 1
    write(repo / ".kubehop.yaml", 'target: "1.33"\nrules: [policy]\nseverity: {"*": warning}\n')
    assert scan_json(repo, "platform", "apps")[0].returncode == 0


def test_severity_can_make_a_deprecation_block(repo):
    write(repo / ".kubehop.yaml", 'target: "1.20"\nseverity: {extensions/v1beta1/Ingress: error}\n')
    done, report = scan_json(repo, "platform")
    assert done.returncode == 1
    assert [(f["severity"], f["hop"]) for f in report["findings"]] == [("error", "hop to 1.22")]


@pytest.mark.parametrize("config, expected", [
    ("targt: '1.30'\n", "Additional properties are not allowed ('targt' was unexpected)"),
    ("target: 1.30\n", 'target: write the minor as a string'),
    ("severity: {x: fatal}\n", "severity/x: 'fatal' is not one of ['error', 'warning']"),
    ("target: '1.99'\n", "target: '1.99': kubehop knows Kubernetes"),
    ("exclude: vendor\n", "exclude: 'vendor' is not of type 'array'"),
    ("target: [\n", "cannot read"),
])
def test_bad_configuration_is_a_usage_error_naming_file_and_key(repo, config, expected):
    write(repo / ".kubehop.yaml", config)
    done = run_kubehop("scan", "platform", cwd=repo)
    assert done.returncode == 2
    assert str(repo / ".kubehop.yaml") in done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


def test_explicit_config_and_no_config(repo):
    write(repo / ".kubehop.yaml", 'target: "1.21"\n')
    other = write(repo / "ci" / "strict.yaml", 'target: "1.36"\n')
    _, report = scan_json(repo, "--config", str(other), "platform")
    assert report["target"] == "1.36"
    _, report = scan_json(repo, "--no-config", "platform")
    assert report["target"] != "1.21"


def test_extra_rule_folder_from_config(repo):
    write(repo / "policy" / "core" / "widgets.yaml", CUSTOM_RULE)
    write(repo / "apps" / "widget.yaml", WIDGET)
    write(repo / ".kubehop.yaml", "rules: [policy]\n")
    done, report = scan_json(repo, "apps", "--target", "1.33")
    assert [(f["rule"], f["severity"], f["line"]) for f in report["findings"]] == [
        ("example.com/v1beta1/Widget", "error", 1)]
    assert report["findings"][0]["source"] == "https://example.com/widgets/upgrade"


def test_extra_rules_are_validated_by_the_same_schema(repo):
    write(repo / "policy" / "core" / "widgets.yaml", CUSTOM_RULE.replace("https://", "http://"))
    done = run_kubehop("scan", "platform", "--rules", "policy", cwd=repo)
    assert done.returncode == 2
    assert str(repo / "policy" / "core" / "widgets.yaml") in done.stderr
    assert "rules/0/source" in done.stderr


def test_extra_rule_files_outside_known_folders_are_refused(repo):
    write(repo / "policy" / "widgets.yaml", CUSTOM_RULE)
    done = run_kubehop("scan", "platform", "--rules", "policy", cwd=repo)
    assert done.returncode == 2
    assert "only from these subfolders of a rules folder: core, fields" in done.stderr


def test_extra_rule_may_not_redefine_a_core_rule(repo):
    write(repo / "policy" / "core" / "ingress.yaml", CUSTOM_RULE.replace("example.com/v1beta1", "extensions/v1beta1")
          .replace("Widget", "Ingress"))
    done = run_kubehop("scan", "platform", "--rules", "policy", cwd=repo)
    assert done.returncode == 2
    assert "duplicates extensions/v1beta1/Ingress" in done.stderr


def test_no_paths_anywhere_is_a_usage_error(repo):
    done = run_kubehop("scan", cwd=repo)
    assert done.returncode == 2
    assert "give PATHS to scan" in done.stderr


def test_ignored_findings_are_counted_in_a_notice(repo):
    write(repo / ".kubehop.yaml", "ignore: [extensions/v1beta1/Ingress]\n")
    done, report = scan_json(repo, "platform")
    assert report["notices"] == ["findings of rules ignored by the configuration or --ignore: 1"]


@pytest.mark.parametrize("pattern, path, excluded", [
    ("vendor", "vendor/a/b.yaml", True),           # a folder leaves out everything under it
    ("./vendor/", "vendor/b.yaml", True),
    ("vendor", "apps/vendor/b.yaml", False),       # relative to the base, not anywhere
    ("**/vendor", "apps/vendor/b.yaml", True),
    ("**/generated-*.yaml", "generated-a.yaml", True),  # **/ also matches at the top
    ("*.json", "apps/x.json", True),               # * crosses folders
    ("apps/*.yaml", "apps/x.yml", False),
])
def test_exclusion_patterns(tmp_path, pattern, path, excluded):
    from scanner.exclusions import Exclusions

    assert Exclusions(str(tmp_path), (pattern,)).matches(str(tmp_path / path)) is excluded


HOUSE_FIELD_RULE = """\
rules:
  - id: field/house/hostNetwork
    title: "host networking"
    match:
      - {object: pod, path: "spec.hostNetwork"}
    deprecated_in: "1.30"
    removed_in: "1.33"
    replacement: "a Service"
    note: "The platform team stops allowing host networking on the new clusters."
    source: https://example.com/platform/policies/host-network
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: edge}
spec:
  selector: {matchLabels: {app: edge}}
  template:
    metadata: {labels: {app: edge}}
    spec:
      hostNetwork: true
      containers: [{name: edge, image: "nginx:1.27"}]
"""


def test_extra_field_rule_folder(repo):
    write(repo / "policy" / "fields" / "house.yaml", HOUSE_FIELD_RULE)
    write(repo / "apps" / "edge.yaml", DEPLOYMENT)
    done, report = scan_json(repo, "apps", "--rules", "policy", "--target", "1.33")
    assert [(f["rule"], f["severity"], f["line"]) for f in report["findings"]] == [
        ("field/house/hostNetwork", "error", 9)]


@pytest.mark.parametrize("content", [b"rules: [\n", b"\xff: 1\n"])
def test_malformed_extra_rule_file_is_one_line(repo, content):
    (repo / "policy" / "core").mkdir(parents=True)
    (repo / "policy" / "core" / "widgets.yaml").write_bytes(content)
    done = run_kubehop("scan", "platform", "--rules", "policy", cwd=repo)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(repo / "policy" / "core" / "widgets.yaml") in done.stderr
