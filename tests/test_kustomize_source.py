"""Kustomize folders built for real, each object traced to the file that defines it."""

from __future__ import annotations

import json

import pytest

from conftest import kustomize_or_skip, run_kubehop
from scanner.scan import ScanOptions
from scanner.sources import collect
from scanner.sources.kustomize.refs import closure

TREE = "tests/fixtures/kustomize"


@pytest.fixture
def kustomize_env() -> dict[str, str]:
    command = kustomize_or_skip()
    name = "KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL"
    return {name: command[0]}


def scan_json(*args: str, env: dict[str, str]) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", *args, env=env)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def api_findings(report: dict) -> list[dict]:
    """The findings of the tree's objects; the component layer also names what the tree deploys."""
    return [f for f in report["findings"] if not f["rule"].startswith("component/")]


def test_each_object_is_reported_once_at_the_file_that_defines_it(kustomize_env):
    """The base's Ingress reaches the scan three ways (its file, the base build, the overlay build)."""
    code, report = scan_json("--target", "1.22", TREE, env=kustomize_env)
    assert code == 1
    assert sorted((f["file"], f["line"], f["column"]) for f in api_findings(report)) == [
        (f"{TREE}/base/ingress.yaml", 1, 1),
        (f"{TREE}/overlays/prod/legacy-ingress.yaml", 3, 1),
    ]


def test_an_overlay_alone_points_back_into_its_base(kustomize_env, monkeypatch):
    for key, value in kustomize_env.items():
        monkeypatch.setenv(key, value)
    found = collect([f"{TREE}/overlays/prod"], options=ScanOptions())
    built = {(m.kind, m.namespace, m.name): m.origin for m in found.manifests if m.origin.via}
    ingress = built[("Ingress", "prod", "prod-shop")]
    assert (ingress.path, ingress.line, ingress.column) == (f"{TREE}/base/ingress.yaml", 1, 1)
    assert ingress.via == f"kustomize build {TREE}/overlays/prod"
    assert built[("Service", "prod", "prod-shop")].path == f"{TREE}/base/service.yaml"
    assert ("Ingress", "prod", "prod-admin") not in built  # read from its own file already


def test_remote_bases_are_listed_not_fetched(kustomize_env):
    code, report = scan_json("--target", "1.22", f"{TREE}/overlays/remote", env=kustomize_env)
    (entry,) = report["unrendered"]
    assert entry["file"] == f"{TREE}/overlays/remote"
    assert "https://github.com/example/platform//deploy/monitoring?ref=v1.2.0" in entry["reason"]
    assert "--allow-network" in entry["reason"]
    assert code == 0


def test_remote_references_are_found_through_local_bases(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text("resources:\n  - github.com/org/repo//app?ref=v1\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n  - ../base\n  - missing.yaml\n")
    found = closure(str(tmp_path / "app"), str(tmp_path.resolve()))
    assert found.remote == ["resources github.com/org/repo//app?ref=v1"]


def test_a_broken_kustomization_is_an_input_problem(kustomize_env, tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources:\n  - nowhere.yaml\n")
    code, report = scan_json("--target", "1.22", str(tmp_path), env=kustomize_env)
    assert code == 3
    (problem,) = report["diagnostics"]
    assert problem["file"] == f"{tmp_path}/kustomization.yaml" and problem["line"] == 2
    assert problem["message"] == "resource nowhere.yaml does not exist (listed in kustomization.yaml)"


def test_without_kustomize_files_are_scanned_as_they_are():
    env = {"KUBEHOP_KUSTOMIZE": "", "KUBEHOP_KUBECTL": ""}
    code, report = scan_json("--target", "1.22", TREE, env=env)
    assert code == 1 and len(api_findings(report)) == 2
    assert len(report["unrendered"]) == 3  # base, overlays/prod, overlays/remote
    assert "neither kustomize nor kubectl found" in report["notices"][0]


def test_a_kustomization_whose_lists_are_not_lists_is_not_a_crash(tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources: 5\nhelmCharts: {name: x}\n")
    assert closure(str(tmp_path), str(tmp_path.resolve())).remote == []


def test_kubectl_log_prefix_is_left_out_of_the_message():
    from scanner.sources.kustomize.errors import error_text as _message

    stderr = ('E1130 21:02:52.400840    5713 run.go:72] "command failed" '
              'err="accumulating resources: \\"x\\" must resolve to a file"\n')
    assert _message(stderr) == 'accumulating resources: "x" must resolve to a file'
    assert _message("Error: accumulating resources: nope\n") == "accumulating resources: nope"


def test_an_object_renamed_by_vars_is_reported_once_at_its_own_line(kustomize_env):
    """`web-$(NAMESPACE)` is built as `web-shop`: the built object is the one at line 10, not the other
    Ingress at line 1 of the same file."""
    tree = "tests/fixtures/kustomize-vars"
    code, report = scan_json("--target", "1.22", tree, env=kustomize_env)
    assert code == 1
    assert sorted((f["line"], f["object"]["name"]) for f in report["findings"]) == [
        (1, "other"), (10, "web-$(NAMESPACE)")]


def test_a_failure_shows_kustomizes_error_not_its_warnings(kustomize_env, tmp_path):
    (tmp_path / "kustomization.yaml").write_text("commonLabels:\n  app: x\nresources:\n  - nowhere.yaml\n")
    code, report = scan_json("--target", "1.22", str(tmp_path), env=kustomize_env)
    (problem,) = report["diagnostics"]
    assert code == 3 and "nowhere.yaml" in problem["message"] and "arning" not in problem["message"]


def test_warnings_and_klog_lines_are_left_out_of_the_message():
    from scanner.sources.kustomize.errors import error_text as _message

    stderr = ("# Warning: 'commonLabels' is deprecated. Please use 'labels' instead.\n"
              'W1130 21:02:52.400840    5713 warnings.go:70] "something" \n'
              'E1130 21:02:52.400840    5713 run.go:72] "command failed" err=<\n'
              "\taccumulating resources: accumulation err='x'\n\t: must build at directory\n >\n")
    assert _message(stderr) == "accumulating resources: accumulation err='x' : must build at directory"


def _flux_tree(top) -> None:
    (top / ".git").mkdir()
    for path, text in {
        "clusters/prod/apps.yaml": ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
                                    "metadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n"
                                    "  path: ./apps/prod\n  sourceRef:\n    kind: GitRepository\n"
                                    "    name: flux-system\n"),
        "apps/shared/ingress.json": ('{"apiVersion": "extensions/v1beta1", "kind": "Ingress", '
                                     '"metadata": {"name": "shared"}}\n'),
        "apps/prod/kustomization.yaml": "resources:\n  - ../shared/ingress.json\n",
        "apps/dev/kustomization.yaml": "resources:\n  - ../shared/ingress.json\n",
    }.items():
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_text(text)


def test_a_path_a_flux_kustomization_points_at_is_built_as_flux_builds_it(kustomize_env, tmp_path):
    """Flux builds with no load restrictor: a file beside the kustomization's folder is fine there. The
    same kustomization that Flux does not build is refused, as kustomize's default restrictor does."""
    _flux_tree(tmp_path)
    code, report = scan_json("--target", "1.22", str(tmp_path), env=kustomize_env)
    (problem,) = report["diagnostics"]
    assert (problem["file"], problem["line"]) == ("apps/dev/kustomization.yaml", 2)  # from the repository root
    assert problem["message"] == ("resource ../shared/ingress.json lies outside the kustomization's folder: kustomize "
                                  "refuses it unless built with --load-restrictor LoadRestrictionsNone (if the "
                                  "repository builds it so, say kustomize_load_restrictor: LoadRestrictionsNone in "
                                  ".kubehop.yaml) (listed in apps/dev/kustomization.yaml)")
    assert [f["file"] for f in report["findings"]] == ["apps/shared/ingress.json"]


def test_a_repository_built_with_no_load_restrictor_says_so_in_its_configuration(kustomize_env, tmp_path):
    """cluster-api's Makefile builds with --load-restrictor LoadRestrictionsNone: with the configuration
    saying so, every kustomization is built that way, and nothing outside the repository is read still."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _flux_tree(repo)
    (repo / ".kubehop.yaml").write_text("kustomize_load_restrictor: LoadRestrictionsNone\n")
    code, report = scan_json("--target", "1.22", str(repo / "apps"), env=kustomize_env)
    assert report["diagnostics"] == [] and code == 1  # apps/dev is no Flux path, and is built all the same
    assert [f["file"] for f in report["findings"]] == ["apps/shared/ingress.json"]

    (tmp_path / "outside.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leaked\n")
    (repo / "apps" / "dev" / "kustomization.yaml").write_text("resources:\n  - ../../../outside.yaml\n")
    code, report = scan_json("--target", "1.22", str(repo / "apps"), env=kustomize_env)
    (problem,) = report["diagnostics"]
    assert "outside the repository" in problem["message"] and code == 3
    assert "leaked" not in json.dumps(report)


def test_what_a_flux_path_without_a_kustomization_reaches_is_built_as_flux_builds_it(kustomize_env, tmp_path):
    """Flux generates a kustomization listing the nearest kustomization folders below the path, and builds
    everything from there with no load restrictor: a patch or resource beside a folder is fine."""
    (tmp_path / ".git").mkdir()
    for path, text in {
        "clusters/prod/sync.yaml": ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
                                    "metadata:\n  name: prod\n  namespace: flux-system\nspec:\n"
                                    "  path: ./clusters/prod\n  sourceRef:\n    kind: GitRepository\n"
                                    "    name: flux-system\n"),
        "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - ../../../apps/base\n",
        "apps/base/kustomization.yaml": "resources:\n  - ../shared/cm.yaml\n",
        "apps/shared/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
        "apps/other/kustomization.yaml": "resources:\n  - ../shared/cm.yaml\n",  # Flux never builds it
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    code, report = scan_json("--target", "1.36", str(tmp_path), env=kustomize_env)
    assert [(p["file"], p["line"]) for p in report["diagnostics"]] == [("apps/other/kustomization.yaml", 2)]
    assert "lies outside the kustomization's folder" in report["diagnostics"][0]["message"]


def test_a_flux_path_from_an_oci_artifact_of_a_subfolder_is_found_there(kustomize_env, tmp_path):
    """xUnholy/k8s-gitops pushes kubernetes/ as an OCI artifact (`flux push artifact --path`): its
    Kustomizations' paths start there, not at the repository's top."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "kubernetes").mkdir()
    _flux_tree(tmp_path / "kubernetes")
    (tmp_path / "kubernetes" / ".git").rmdir()  # one repository, its top above the artifact's
    code, report = scan_json("--target", "1.22", str(tmp_path), env=kustomize_env)
    assert [p["file"] for p in report["diagnostics"]] == ["kubernetes/apps/dev/kustomization.yaml"]  # no Flux path
    assert [f["file"] for f in report["findings"]] == ["kubernetes/apps/shared/ingress.json"]


def test_a_flux_path_holding_a_nul_is_no_folder_and_the_rest_is_built(kustomize_env, tmp_path):
    """Found by the fuzzer: realpath refused the NUL and the whole kustomize source was lost."""
    _flux_tree(tmp_path)
    sync = tmp_path / "clusters" / "prod" / "apps.yaml"
    sync.write_text(sync.read_text().replace("./apps/prod", "\"./apps/\\0prod\""))
    code, report = scan_json("--target", "1.22", str(tmp_path), env=kustomize_env)
    assert "please report it" not in json.dumps(report)
    assert {f["file"] for f in report["findings"]} == {"apps/shared/ingress.json"}


def test_nothing_outside_the_repository_is_read_even_for_flux(kustomize_env, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    _flux_tree(repo)
    (repo / "apps" / "prod" / "kustomization.yaml").write_text("resources:\n  - ../../../outside/secret.yaml\n")
    (repo / "apps" / "dev" / "link.yaml").symlink_to(outside / "secret.yaml")
    (repo / "apps" / "dev" / "kustomization.yaml").write_text("resources:\n  - link.yaml\n")
    code, report = scan_json("--target", "1.22", str(repo), env=kustomize_env)
    assert code == 3
    problems = {p["file"]: p["message"] for p in report["diagnostics"] if "outside the repository" in p["message"]}
    assert set(problems) == {"apps/prod", "apps/dev"}  # named from the repository root
    assert "leaked" not in json.dumps(report)


def test_objects_read_from_their_own_files_are_left_out_of_a_build_before_it_is_parsed(tmp_path):
    """The whole scan finds the same either way (the repeat would be dropped); leaving it out first spares
    parsing a large CRD once per overlay."""
    from scanner.sources.kustomize.helm import HelmCharts
    from scanner.sources.kustomize.origins import Origins

    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n")
    read = collect([str(tmp_path / "base" / "cm.yaml")], options=ScanOptions()).manifests
    wrapper = str(tmp_path / "wrapper")
    places = Origins(read, HelmCharts(None)).for_build(str(tmp_path / "base"), str(tmp_path), wrapper, None)
    known = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n"
             "      path: ../base/cm.yaml\n  name: prod-web\n  namespace: prod\n")
    generated = known.replace("path: ../base/cm.yaml", "configuredIn: ../base/kustomization.yaml")
    renamed = known.replace("prod-web", "prod-$(X)")
    assert places.new_documents(f"{known}---\n{generated}---\n{renamed}") == f"\n{generated}---\n{renamed}"
