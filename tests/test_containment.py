"""Nothing outside the repository is read (issue 21): a hostile tree per class of path a tree names --
a Flux HelmRelease chart path, a Flux Kustomization path, a `.kubehop.yaml` (its `rules`, `baseline`,
`paths`, and the file itself as a symbolic link), a `file://` kustomize resource with --allow-network.

Beside each repository lies an `outside/` folder holding what a hostile pull request would like
kubehop to read: a secret, a chart, rules, a baseline, a configuration, a git repository. Each test
checks that none of it reaches the report, that an outside file that would change the result does
not, and that the input problem names the key (and its line where known)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import cli_runner, kustomize_or_skip, tool_or_skip
from scanner.cli import cli
from scanner.containment import leaves

SECRET = "s3cr3t-outside-the-repository"
BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: in-the-tree\nspec: {}\n"
OUTSIDE_BLOCKER = BLOCKER.replace("in-the-tree", f"outside-{SECRET}")
WIDGET_RULE = f"""\
rules:
  - id: example.com/v1beta1/Widget
    apiVersion: example.com/v1beta1
    kind: Widget
    deprecated_in: "1.30"
    removed_in: "1.33"
    replacement: example.com/v1
    note: "{SECRET}"
    source: https://example.com/widgets/upgrade
"""
WIDGET = "apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {name: w}\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """tmp/repo (a git checkout holding one blocker) and tmp/outside (what must never be read)."""
    write(tmp_path / "outside" / "secret.txt", SECRET + "\n")
    write(tmp_path / "outside" / "blocker.yaml", OUTSIDE_BLOCKER)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "apps" / "ingress.yaml", BLOCKER)
    monkeypatch.chdir(root)
    return root


def scan(*args: str) -> tuple[int, dict, str]:
    """`kubehop scan --format json ARGS` in-process: exit code, report, and everything printed."""
    result = cli_runner().invoke(cli, ["scan", "--format", "json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    printed = result.stdout + result.stderr
    assert "Traceback" not in printed and "please report it" not in printed, printed
    return result.exit_code, json.loads(result.stdout), printed


def problems(report: dict) -> list[tuple[str, int | None, str]]:
    return [(d["file"], d["line"], d["message"]) for d in report["diagnostics"] if d["level"] == "error"]


def names(report: dict) -> list[str]:
    return [f["object"]["name"] for f in report["findings"]]


# --- the one check ---------------------------------------------------------------------------------

def test_leaves_says_why(tmp_path):
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    real = os.path.realpath(root)
    assert leaves("sub/../sub", str(root), real) is None
    assert leaves("../x", str(root / "sub"), real) is None  # still inside, from sub/
    assert leaves("../../x", str(root / "sub"), real) == f"leaves the repository ({real}) with `..`"
    assert leaves("/etc", str(root), real) == f"leaves the repository ({real}) as an absolute path"
    assert leaves("link/file", str(root), real) == f"leaves the repository ({real}) through a symbolic link"
    assert leaves("link/../sub", str(root), real) == f"leaves the repository ({real}) through a symbolic link"
    assert leaves("a\0b", str(root), real) == "names no file (it holds a NUL character)"


# --- Flux HelmRelease chart paths ------------------------------------------------------------------

def helm_release(chart: str, name: str = "web") -> str:
    return (f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n"
            f"  namespace: shop\nspec:\n  chart:\n    spec:\n      chart: {chart}\n"
            "      sourceRef: {kind: GitRepository, name: flux-system}\n")


def chart(folder: Path, name: str, template: str) -> None:
    write(folder / "Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
    write(folder / "templates" / "ingress.yaml", template)


@pytest.fixture
def outside_chart(repo: Path, helm_env) -> Path:
    """A chart outside the repository whose only object is a blocker named after the secret, and
    which reads the secret file too, should helm get to render it."""
    folder = repo.parent / "outside" / "chart"
    chart(folder, "outside", OUTSIDE_BLOCKER + "  annotations:\n    leak: {{ .Files.Get \"../secret.txt\" | quote }}\n")
    return folder


@pytest.mark.parametrize("path, line, why", [
    ("../outside/chart", 9, "with `..`"),
    ("./apps/../../outside/chart", 9, "with `..`"),
])
def test_a_helmrelease_chart_path_out_of_the_repository_is_not_rendered(repo, outside_chart, path, line, why):
    write(repo / "apps" / "release.yaml", helm_release(path))
    code, report, printed = scan("--target", "1.36", "apps")
    assert SECRET not in printed
    assert names(report) == ["in-the-tree"]  # the outside chart's blocker is not reported
    assert code == 3
    assert problems(report) == [("apps/release.yaml", line, (
        f"Flux HelmRelease shop/web: spec.chart.spec.chart {path} leaves the repository ({os.path.realpath(repo)}) "
        f"{why}; not read (kubehop reads nothing outside the repository)"))]


def test_a_helmrelease_chart_linked_out_of_the_repository_is_not_rendered(repo, outside_chart):
    (repo / "charts").mkdir()
    (repo / "charts" / "web").symlink_to(outside_chart)
    write(repo / "apps" / "release.yaml", helm_release("./charts/web"))
    code, report, printed = scan("--target", "1.36", "apps")
    assert SECRET not in printed and names(report) == ["in-the-tree"] and code == 3
    [(_, line, message)] = problems(report)
    assert line == 9 and "spec.chart.spec.chart ./charts/web leaves the repository" in message
    assert "through a symbolic link" in message


def test_an_absolute_helmrelease_chart_path_starts_at_the_repository_top(repo, outside_chart):
    """Flux reads `/x` from the top of the GitRepository's tree: the host's /…/outside/chart is not
    it. The repository's own /charts/web is."""
    chart(repo / "charts" / "web", "web", "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\n")
    write(repo / "apps" / "release.yaml", helm_release(str(outside_chart)) + "---\n"
          + helm_release("/charts/web", name="own"))
    code, report, printed = scan("--target", "1.36", "apps")
    assert SECRET not in printed
    assert sorted(names(report)) == ["in-the-tree", "nightly"] and code == 1
    [unrendered] = [u["reason"] for u in report["unrendered"]]
    assert unrendered.startswith(f"Flux HelmRelease shop/web: chart path {outside_chart} (spec.chart.spec.chart, "
                                 "from the repository's top as Flux reads it) is neither among the scanned charts")


# --- Flux Kustomization paths ----------------------------------------------------------------------

def test_a_flux_kustomization_path_out_of_the_repository_is_an_input_problem(repo):
    kustomize_or_skip()
    write(repo.parent / "outside" / "kustomization.yaml", "resources: [blocker.yaml]\n")
    write(repo / "clusters" / "kustomization.yaml", "resources: [flux.yaml]\n")
    write(repo / "clusters" / "flux.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
          "metadata: {name: apps, namespace: flux-system}\nspec:\n  path: ../outside\n"
          "  sourceRef: {kind: GitRepository, name: flux-system}\n")
    code, report, printed = scan("--target", "1.36", ".")
    assert SECRET not in printed and names(report) == ["in-the-tree"] and code == 3
    assert problems(report) == [("clusters/flux.yaml", 5, (
        f"Kustomization flux-system/apps: spec.path ../outside leaves the repository ({os.path.realpath(repo)}) "
        "with `..`; not read (kubehop reads nothing outside the repository)"))]


# --- the configuration found in the tree -----------------------------------------------------------

def test_configuration_rules_out_of_the_repository_are_not_read(repo):
    outside = repo.parent / "outside"
    write(outside / "rules" / "core" / "widgets.yaml", WIDGET_RULE)
    write(outside / "broken" / "core" / "broken.yaml", f"rules: [{{id: {SECRET}}}]\n")  # echoed, if read
    write(repo / "apps" / "widget.yaml", WIDGET)
    write(repo / ".kubehop.yaml", f"target: '1.33'\nrules:\n  - ../outside/rules\n  - {outside / 'broken'}\n")
    code, report, printed = scan("apps")
    assert SECRET not in printed
    assert names(report) == ["in-the-tree"]  # no Widget finding: the outside rule was not loaded
    assert code == 3
    root = os.path.realpath(repo)
    why = "; not read (a configuration in the repository names nothing outside it; --config FILE may)"
    assert problems(report) == [
        (".kubehop.yaml", 3, f"rules[0]: ../outside/rules leaves the repository ({root}) with `..`{why}"),
        (".kubehop.yaml", 4, f"rules[1]: {outside / 'broken'} leaves the repository ({root}) as an absolute path{why}"),
    ]


def test_a_rules_folder_in_the_repository_may_not_link_out_of_it(repo):
    write(repo.parent / "outside" / "widgets.yaml", WIDGET_RULE)
    (repo / "policy" / "core").mkdir(parents=True)
    (repo / "policy" / "core" / "widgets.yaml").symlink_to(repo.parent / "outside" / "widgets.yaml")
    write(repo / "apps" / "widget.yaml", WIDGET)
    write(repo / ".kubehop.yaml", "target: '1.33'\nrules: [policy]\n")
    code, report, printed = scan("apps")
    assert SECRET not in printed and names(report) == ["in-the-tree"] and code == 3
    [(_, line, message)] = problems(report)
    assert line == 2 and message.startswith("rules[0]: policy holds core/widgets.yaml, a symbolic link out of the "
                                            "repository")


def test_a_configuration_given_on_the_command_line_may_name_rules_outside(repo):
    """--config FILE is the user's own choice (cluster-api keeps its configuration beside the checkout)."""
    write(repo.parent / "outside" / "rules" / "core" / "widgets.yaml", WIDGET_RULE)
    config = write(repo.parent / "outside" / "kubehop.yaml", "target: '1.33'\nrules: [rules]\n")
    write(repo / "apps" / "widget.yaml", WIDGET)
    code, report, _ = scan("--config", str(config), "apps")
    assert sorted(names(report)) == ["in-the-tree", "w"] and code == 1 and problems(report) == []


def test_a_configuration_baseline_out_of_the_repository_is_not_read(repo):
    """The outside baseline records the tree's blocker: read, it would hide it."""
    baseline = repo.parent / "outside" / "baseline.json"
    code, _, _ = scan("--target", "1.36", "--write-baseline", str(baseline), "apps")
    assert code == 0 and json.loads(baseline.read_text())["findings"]
    for written in ("../outside/baseline.json", str(baseline)):
        write(repo / ".kubehop.yaml", f"baseline: {written}\n")
        code, report, printed = scan("--target", "1.36", "apps")
        assert names(report) == ["in-the-tree"] and report["summary"]["silenced"]["baseline"] == 0
        assert code == 3
        [(file, line, message)] = problems(report)
        assert (file, line) == (".kubehop.yaml", 1) and message.startswith(f"baseline: {written} leaves the repository")


def test_a_configuration_baseline_that_echoes_a_file_outside_is_not_read(repo):
    write(repo / ".kubehop.yaml", "baseline: ../outside/secret.txt\n")
    code, report, printed = scan("--target", "1.36", "apps")
    assert SECRET not in printed and code == 3 and names(report) == ["in-the-tree"]


def test_configuration_paths_out_of_the_repository_are_not_scanned(repo):
    write(repo / ".kubehop.yaml", f"paths: [apps, ../outside, {repo.parent / 'outside'}]\n")
    code, report, printed = scan("--target", "1.36")
    assert SECRET not in printed and names(report) == ["in-the-tree"] and code == 3
    assert [(line, message.split(" leaves")[0]) for _, line, message in problems(report)] == [
        (1, "paths[1]: ../outside"), (1, f"paths[2]: {repo.parent / 'outside'}")]


def test_a_configuration_linked_from_outside_the_repository_is_not_applied(repo):
    """The outside configuration would hide everything (and lower the target): it is not read."""
    write(repo.parent / "outside" / "kubehop.yaml", f"target: '1.21'\nignore: ['*']\nexclude: ['*']\n# {SECRET}\n")
    (repo / ".kubehop.yaml").symlink_to(repo.parent / "outside" / "kubehop.yaml")
    code, report, printed = scan("apps")
    assert SECRET not in printed
    assert names(report) == ["in-the-tree"] and report["target"] != "1.21" and code == 3
    assert problems(report) == [(".kubehop.yaml", None, (
        f"the configuration file leaves the repository ({os.path.realpath(repo)}) through a symbolic link; not read, "
        "no configuration applied (kubehop reads nothing outside the repository)"))]


def test_fix_reports_what_the_configuration_names_outside(repo):
    write(repo / ".kubehop.yaml", "rules: [../outside]\n")
    result = cli_runner().invoke(cli, ["fix", "--target", "1.36", "apps"])
    assert result.exit_code == 3 and "rules[0]: ../outside leaves the repository" in result.stderr


# --- kustomize: file:// repositories with --allow-network ------------------------------------------

@pytest.fixture
def outside_repository(repo: Path) -> Path:
    """A git repository outside the checkout, whose kustomization builds the outside blocker."""
    git = tool_or_skip("git")
    folder = repo.parent / "outside"
    write(folder / "kustomization.yaml", "resources: [blocker.yaml]\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run([git, *command], cwd=folder, check=True, capture_output=True)
    return folder


@pytest.mark.parametrize("scheme", ["file://", "git::file://", "FILE://"])
def test_a_file_url_out_of_the_repository_is_not_cloned(repo, outside_repository, scheme):
    kustomize_or_skip()
    write(repo / "overlay" / "kustomization.yaml", f"resources:\n  - {scheme}{outside_repository}//?ref=HEAD\n")
    code, report, printed = scan("--target", "1.36", "--allow-network", ".")
    assert SECRET not in printed and names(report) == ["in-the-tree"] and code == 3
    [(file, _, message)] = problems(report)
    assert file == "overlay" and message == (
        f"kustomize build failed: refers to resources {scheme}{outside_repository}//?ref=HEAD (in "
        f"overlay/kustomization.yaml) leaves the repository ({os.path.realpath(repo)}) as an absolute path; not "
        "built (kubehop reads nothing outside the repository)")


def test_a_file_url_inside_the_repository_is_built_with_allow_network(repo):
    """A local repository inside the checkout is the tree's own: with --allow-network it is cloned."""
    git = tool_or_skip("git")
    kustomize_or_skip()
    vendored = repo / "vendored"
    write(vendored / "kustomization.yaml", "resources: [cronjob.yaml]\n")
    write(vendored / "cronjob.yaml", "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: cloned\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run([git, *command], cwd=vendored, check=True, capture_output=True)
    write(repo / "overlay" / "kustomization.yaml", f"resources:\n  - file://{vendored}\n")
    code, report, _ = scan("--target", "1.36", "--allow-network", "overlay")
    assert "cloned" in names(report) and code == 1
    code, report, _ = scan("--target", "1.36", "overlay")  # no network: a remote reference, not built
    assert names(report) == [] and report["unrendered"][0]["reason"].startswith("uses remote resources file://")
