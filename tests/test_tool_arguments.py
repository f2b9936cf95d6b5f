"""No value from the tree is ever an option to a tool (issue 21.1).

A pull request writes the tree kubehop scans in CI. Release names, namespaces, chart names, versions and
repository URLs from it reach helm's command line; each is tried here with an option it could smuggle in
(`--set-file=leak=/proc/self/environ` printed the CI job's environment in kubehop's own report). Each is
refused as an input problem naming the object, or passed where helm can only read it as a value, and
nothing of the runner's environment ever reaches the report. Real helm, real kustomize.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import kustomize_or_skip, run_kubehop, tool_or_skip
from scanner.sources.helm.render import ChartRelease, HelmSettings, RemoteChart, _helm_command, release_problem
from scanner.model import Origin
from scanner.versions import Minor

SECRET = "kubehop-test-secret-6f1d"
LEAKY_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: leaky\nversion: 0.1.0\n",
    "values.yaml": "leak: nothing\n",
    # Whatever reaches .Values.leak is printed in the object's name, so a leak would show in the report.
    "templates/ingress.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n"
                              "  name: {{ .Values.leak | quote }}\nspec: {}\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache"),
            "KUBEHOP_TEST_SECRET": SECRET}


def scan(tree: Path, env: dict[str, str]) -> tuple[int, dict, str]:
    done = run_kubehop("scan", "--no-config", "--target", "1.36", "--format", "json", str(tree), env=env)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in stderr, stderr
    assert SECRET not in stdout + stderr, "the runner's environment reached the report"
    return done.returncode, json.loads(stdout), stderr


def helm_release(name: str, release_name: str | None = None, target_namespace: str | None = None) -> str:
    spec = {"chart": {"spec": {"chart": "./chart", "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}}}
    if release_name is not None:
        spec["releaseName"] = release_name
    if target_namespace is not None:
        spec["targetNamespace"] = target_namespace
    return json.dumps({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                       "metadata": {"name": name, "namespace": "apps"}, "spec": spec})


HOSTILE = ["--set-file=leak=/proc/self/environ", "--set=leak=injected", "--enable-dns", "-fvalues.yaml"]


@pytest.mark.parametrize("field", ["releaseName", "metadata.name", "targetNamespace"])
def test_a_flux_release_name_or_namespace_that_is_an_option_is_refused(tmp_path, env, field):
    hostile = HOSTILE[0]
    release = {"releaseName": helm_release("web", release_name=hostile),
               "metadata.name": helm_release(hostile),
               "targetNamespace": helm_release("web", target_namespace=hostile)}[field]
    tree = write(tmp_path / "tree", {**{f"chart/{k}": v for k, v in LEAKY_CHART.items()}, "release.json": release})
    code, report, _ = scan(tree, env)
    assert code == 3  # the user's to fix, as Flux would refuse it too
    (problem,) = [d for d in report["diagnostics"] if d["file"].endswith("release.json")]
    assert "is not one helm accepts" in problem["message"] or "is not a Kubernetes namespace" in problem["message"]
    assert problem["line"] == 1
    # The chart is still read on its own (as the chart it is), never with the hostile name as a helm option.
    names = {f["object"]["name"] for f in report["findings"]}
    assert names == {"nothing"}


@pytest.mark.parametrize("hostile", HOSTILE)
def test_release_names_helm_would_refuse_are_refused_before_helm_runs(hostile):
    assert release_problem(hostile, "default") is not None
    assert release_problem("web", hostile) is not None
    assert release_problem("web-1.example", "apps") is None
    assert release_problem("a" * 53, "b" * 63) is None
    assert release_problem("a" * 54, "apps") is not None and release_problem("web", "b" * 64) is not None


def test_every_value_from_the_tree_follows_the_end_of_options_or_is_joined_to_its_option(tmp_path):
    """The argv kubehop builds: tree values (folder, release, repository, version) either come after `--`
    or inside one `--name=value` word, so none can be an option of its own whatever it holds."""
    settings = HelmSettings(helm="helm", target=Minor(1, 36), served=frozenset(), values_files=("-f.yaml",))
    remote = RemoteChart("--set-file=a=/etc/passwd", "--repo=http://evil", "--devel", Origin("x.yaml", 1))
    release = ChartRelease("", "web", "apps", values=("a: 1\n",), remote=remote)
    command = _helm_command(release, settings, "kubeconfig", str(tmp_path), ["--dry-run=server"])
    end = command.index("--")
    assert command[end + 1:] == ["web", "--set-file=a=/etc/passwd"]
    options = command[2:end]
    assert all(word.startswith("--") and "=" in word or word == "--disable-openapi-validation" for word in options)
    assert "--repo=--repo=http://evil" in options and "--version=--devel" in options
    assert "--values=-f.yaml" in options

    local = ChartRelease("-chart", "web", "apps")
    command = _helm_command(local, settings, "kubeconfig", str(tmp_path), [])
    assert command[-3:] == ["--", "web", "-chart"]


def test_a_chart_folder_named_like_an_option_renders_as_a_folder(tmp_path, env):
    tree = write(tmp_path / "tree", {f"--set=leak=injected/{k}": v for k, v in LEAKY_CHART.items()})
    code, report, _ = scan(tree, env)
    assert code == 1
    (finding,) = report["findings"]
    assert finding["object"]["name"] == "nothing" and report["unrendered"] == []


KUSTOMIZATION = """\
helmCharts:
- name: {name}
  releaseName: {release}
  namespace: {namespace}
"""


@pytest.mark.parametrize("name,release,namespace,says", [
    ("leaky", HOSTILE[0], "apps", "is not one helm accepts"),
    ("leaky", "web", HOSTILE[1], "is not a Kubernetes namespace"),
    ("../../../../../../tmp", "web", "apps", "is not a chart name"),
    ("--set-file=leak=/proc/self/environ", "web", "apps", "is not a chart name"),
])
def test_a_kustomize_helm_charts_entry_that_names_an_option_or_a_path_is_refused(tmp_path, env, name, release,
                                                                                 namespace, says):
    command = kustomize_or_skip()
    env = {**env, ("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL"): command[0],
           "HELM_REPOSITORY_CACHE": str(tmp_path / "helm-cache")}
    files = {f"app/charts/leaky/{k}": v for k, v in LEAKY_CHART.items()}
    files["app/kustomization.yaml"] = KUSTOMIZATION.format(name=json.dumps(name), release=json.dumps(release),
                                                           namespace=json.dumps(namespace))
    tree = write(tmp_path / "tree", files)
    code, report, _ = scan(tree / "app", env)
    assert code == 3
    (problem,) = [d for d in report["diagnostics"] if d["file"].endswith("kustomization.yaml")]
    assert says in problem["message"] and problem["line"] == 2
    assert not [f for f in report["findings"] if "injected" in f["object"]["name"]]


@pytest.mark.parametrize("name,target_namespace,release", [
    ("web", None, "web"),
    ("web", "web-system", "web-system-web"),
    ("long-" + "x" * 60, None, "long-" + "x" * 35 + "-19251b8e81f7"),
])
def test_a_flux_release_is_named_as_helm_controller_names_it(tmp_path, env, name, target_namespace, release):
    """[targetNamespace-]name, shortened past 53 characters to 40 and a hash: what the chart's templates see
    as .Release.Name, so a long metadata.name is no reason to refuse the release."""
    chart = {**LEAKY_CHART, "templates/ingress.yaml": LEAKY_CHART["templates/ingress.yaml"].replace(
        "{{ .Values.leak | quote }}", "{{ .Release.Name | quote }}")}
    tree = write(tmp_path / "tree", {**{f"chart/{k}": v for k, v in chart.items()},
                                     "release.json": helm_release(name, target_namespace=target_namespace)})
    code, report, _ = scan(tree, env)
    assert code == 1, report["diagnostics"]
    names = {f["object"]["name"] for f in report["findings"] if f["file"].endswith("ingress.yaml")}
    assert release in names
