"""A file given on the command line is checked where it belongs (scanner.in_context): the chart it is
part of (a vendored subchart's parent), the nearest kustomization that uses it (not a Component); of
the context, the findings in the files given, or all of them when a file given shapes the whole. And
a path given that gives nothing to check says so (scanner.given_paths). In-process, as `kubehop scan`;
charts read as text (--no-render) where rendering is not what is tested (tests/test_precommit_hook.py
renders them with the real helm, as the hook does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_runner
from scanner.cli import cli

INGRESS = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\nspec: {{}}\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def write(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)


def scan(*args: str) -> tuple[int, dict]:
    result = cli_runner().invoke(cli, ["scan", "--format", "json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


def found(report: dict) -> list[str]:
    return [f"{f['file']}:{f['line']}" + (f" {f['object']['name']}" if f['object']['name'] else "")
            for f in report["findings"]]


def test_a_subchart_template_is_checked_with_its_parent_chart(repo):
    write(repo, {"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
                 "web/templates/a.yaml": INGRESS.format(name="parent"),
                 "web/charts/db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 1.0.0\n",
                 "web/charts/db/templates/b.yaml": INGRESS.format(name="sub")})
    code, report = scan("--no-render", "web/charts/db/templates/b.yaml")
    assert code == 1 and found(report) == ["web/charts/db/templates/b.yaml:1"]
    assert report["notices"][0] == "web/charts/db/templates/b.yaml: checked as part of the Helm chart in web/"
    assert report["unrendered"] == [{"file": "web", "reason": "Helm chart read as text: every branch of its "
                                                              "templates, nothing rendered"}]


def test_a_chart_file_that_shapes_the_chart_keeps_all_its_findings(repo):
    write(repo, {"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
                 "web/values.yaml": "replicas: 1\n",
                 "web/templates/a.yaml": INGRESS.format(name="a"),
                 "web/templates/b.yaml": INGRESS.format(name="b")})
    assert found(scan("--no-render", "web/templates/b.yaml")[1]) == ["web/templates/b.yaml:1"]
    assert found(scan("--no-render", "web/values.yaml")[1]) == ["web/templates/a.yaml:1", "web/templates/b.yaml:1"]
    # the chart given whole, and a file of it: the whole chart
    assert len(scan("--no-render", "web", "web/templates/b.yaml")[1]["findings"]) == 2


def test_the_nearest_kustomization_that_uses_the_file(repo):
    write(repo, {"apps/kustomization.yaml": "resources: [base]\n",
                 "apps/base/kustomization.yaml": "resources: [a.yaml, b.yaml]\n",
                 "apps/base/a.yaml": INGRESS.format(name="a"),
                 "apps/base/b.yaml": INGRESS.format(name="b"),
                 "apps/base/notes/unused.yaml": INGRESS.format(name="loose")})
    code, report = scan("--no-render", "apps/base/a.yaml")
    assert code == 1 and found(report) == ["apps/base/a.yaml:1 a"]
    assert report["notices"][0] == "apps/base/a.yaml: checked as part of the kustomization in apps/base/"
    # a file no kustomization names is a plain file, as before
    _, report = scan("--no-render", "apps/base/notes/unused.yaml")
    assert found(report) == ["apps/base/notes/unused.yaml:1 loose"]
    assert not any("checked as part" in n for n in report["notices"])
    # the kustomization file itself shapes its build: every finding of it
    assert found(scan("--no-render", "apps/base/kustomization.yaml")[1]) == ["apps/base/a.yaml:1 a",
                                                                             "apps/base/b.yaml:1 b"]


def test_a_second_scan_in_the_process_reads_the_kustomization_as_it_is_now(repo):
    """What a scan read of the tree is forgotten by the next (scanner.per_scan): a kustomization edited
    between two scans, in one process (a pre-commit run after an edit, a library caller), no longer
    names the file, which is then a plain file."""
    write(repo, {"apps/kustomization.yaml": "resources: [a.yaml]\n", "apps/a.yaml": INGRESS.format(name="a")})
    assert scan("--no-render", "apps/a.yaml")[1]["notices"][0].endswith("checked as part of the kustomization in apps/")
    write(repo, {"apps/kustomization.yaml": "resources: []\n"})
    assert not any("checked as part" in n for n in scan("--no-render", "apps/a.yaml")[1]["notices"])


def test_a_component_is_not_built_alone(repo):
    write(repo, {"app/kustomization.yaml": "resources: [a.yaml]\ncomponents: [extra]\n",
                 "app/a.yaml": INGRESS.format(name="a"),
                 "app/extra/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                                 "resources: [c.yaml]\n",
                 "app/extra/c.yaml": INGRESS.format(name="c")})
    _, report = scan("--no-render", "app/extra/c.yaml")
    assert found(report) == ["app/extra/c.yaml:1 c"]
    assert report["notices"][0] == "app/extra/c.yaml: checked as part of the kustomization in app/"


def test_a_broken_sibling_is_not_the_changed_files_problem(repo):
    write(repo, {"app/kustomization.yaml": "resources: [a.yaml]\n",
                 "app/a.yaml": "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a}\n",
                 "app/other.yaml": "a: [\n"})
    code, report = scan("--no-render", "app/a.yaml")
    assert code == 0 and report["diagnostics"] == []


def test_a_folder_without_kubernetes_objects_says_so(repo):
    write(repo, {"docs/mkdocs.yaml": "site_name: x\n", "apps/a.yaml": INGRESS.format(name="a")})
    code, report = scan("docs")
    assert code == 0 and report["notices"] == ["no Kubernetes objects found in docs"]
    assert report["summary"]["empty_paths"] == ["docs"]
    text = cli_runner().invoke(cli, ["scan", "docs"]).stdout
    assert text.splitlines()[-1].startswith("nothing checked for ") and "no Kubernetes objects found in docs (" in text
    code, report = scan("docs", "apps")  # the wrong path beside a right one: said, the rest reported
    assert code == 1 and report["notices"] == ["no Kubernetes objects found in docs"]


def test_a_file_without_kubernetes_objects_is_quiet(repo):
    write(repo, {"ci.yaml": "jobs: {}\n"})
    code, report = scan("ci.yaml")
    assert code == 0 and report["notices"] == [] and report["summary"]["empty_paths"] == []


def test_a_folder_of_pins_and_configuration_was_checked(repo):
    """What kubehop checks without an object (a client tool's pin, a component's version variable, a
    kubelet flag) is something to check: the folder is no wrong path, and nothing-blocks is the verdict."""
    write(repo, {"ci/.tool-versions": "kubectl 1.33.1\n", "ansible/group_vars/all.yml": "cilium_version: 1.18.1\n",
                 "k3s/config.yaml": "kubelet-arg:\n  - max-pods=200\n", "docs/mkdocs.yaml": "site_name: x\n"})
    for folder in ("ci", "ansible", "k3s"):
        code, report = scan("--target", "1.33", folder)
        assert code == 0 and report["notices"] == [] and report["summary"]["empty_paths"] == [], folder
        text = cli_runner().invoke(cli, ["scan", "--target", "1.33", folder]).stdout
        assert text.splitlines()[-1].startswith("nothing blocks 1.33"), (folder, text)
    code, report = scan("--target", "1.33", "ci", "docs")
    assert report["summary"]["empty_paths"] == ["docs"]


@pytest.mark.parametrize("name, text", [
    ("Dockerfile", 'FROM alpine:3.20\nARG KUBECTL_VERSION=1.33.0\nRUN echo "a: b" && \\\n  true\n'),
    (".mise.toml", '[tools]\nkubectl = "1.33.0"\n'),
    ("ci/versions.env", "KUBECTL_VERSION=1.33.0\n- not: yaml: at all\n"),
    (".tool-versions", "kubectl 1.33.0\n"),
])
def test_a_tool_file_given_by_name_is_read_as_in_its_folder(repo, name, text):
    """A file pre-commit or a CI job passes by name that kubehop reads for its tool pins is read for
    them, not as YAML too (an 'invalid YAML' input problem, exit code 3, where its folder's scan is clean)."""
    write(repo, {name: text})
    by_name = scan("--from", "1.34", "--target", "1.35", name)
    folder = scan("--from", "1.34", "--target", "1.35", str(Path(name).parent))
    assert by_name[0] == folder[0] == 1 or by_name[0] == folder[0] == 0
    assert by_name[1]["diagnostics"] == [] and found(by_name[1]) == found(folder[1]) != []


def test_a_missing_path_says_it_does_not_exist(repo):
    result = cli_runner().invoke(cli, ["scan", "deploy"])
    assert result.exit_code == 3
    assert "deploy: does not exist" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("nothing checked for ")
    assert ": deploy does not exist (0 blockers, 0 warnings, 1 unreadable input)" in result.stdout


def test_a_context_may_name_what_the_repository_holds_above_it(tmp_path, monkeypatch):
    """With no Git work tree the repository is the working folder, not the context's own folder: a
    kustomization's `../../components/alerts` stays inside it, as when the whole tree is scanned."""
    from conftest import kustomize_or_skip

    kustomize_or_skip()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    write(tmp_path, {"apps/a/kustomization.yaml": "resources: [ing.yaml]\ncomponents: [../../components/alerts]\n",
                     "apps/a/ing.yaml": INGRESS.format(name="a"),
                     "components/alerts/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\n"
                                                             "kind: Component\nresources: []\n"})
    code, report = scan("apps/a/ing.yaml")
    assert report["diagnostics"] == [] and code == 1
    assert found(report) == ["apps/a/ing.yaml:1 a"]
