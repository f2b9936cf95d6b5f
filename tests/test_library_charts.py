"""A library chart deploys nothing (issue 23): a Chart.yaml dependency on bjw-s's `common`, or any chart
whose own Chart.yaml says `type: library`, is no component: neither "no data" nor judged by its
kubeVersion. Its templates render as the umbrella chart's own objects, which are checked there."""

from __future__ import annotations

import json

from conftest import invoke, write_tree as write

TALCONFIG = "kubernetesVersion: v1.33.2\n"


def umbrella(dependency: str, repository: str, version: str = "5.1.0") -> str:
    return f"""
        apiVersion: v2
        name: game-server
        type: application
        version: 1.0.0
        dependencies:
          - name: {dependency}
            version: {version}
            repository: {repository}
        """


def listed(root, env=None) -> dict[str, str]:
    done = invoke("components", "--format", "json", ".", cwd=root, env=env)
    return {c["component"]: c["data"] for c in json.loads(done.stdout)["components"]}


def component_rules(root, env=None) -> set[str]:
    done = invoke("scan", "--target", "1.36", "--no-render", "--format", "json", ".", cwd=root, env=env)
    return {f["rule"] for f in json.loads(done.stdout)["findings"] if f["rule"].startswith("component/")}


def test_bjw_s_common_library_under_a_local_chart_is_no_component(tmp_path):
    root = write(tmp_path, {"apps/game/Chart.yaml": umbrella("common", "https://bjw-s-labs.github.io/helm-charts"),
                            "talconfig.yaml": TALCONFIG})
    assert "common" not in listed(root)
    assert not any(rule.startswith("component/common/") for rule in component_rules(root))


def test_a_common_chart_from_another_repository_is_still_a_component_with_no_data(tmp_path):
    root = write(tmp_path, {"apps/game/Chart.yaml": umbrella("common", "https://charts.example.invalid/apps"),
                            "talconfig.yaml": TALCONFIG})
    assert listed(root).get("common") == "none"
    assert "component/common/no-data" in component_rules(root)


def test_a_dependency_whose_vendored_copy_says_library_is_no_component(tmp_path):
    files = {"apps/game/Chart.yaml": umbrella("toolkit", "https://charts.example.invalid/lib", "0.4.0"),
             "talconfig.yaml": TALCONFIG}
    assert listed(write(tmp_path / "plain", files)).get("toolkit") == "none"  # nothing says it is a library
    files["apps/game/charts/toolkit/Chart.yaml"] = """
        apiVersion: v2
        name: toolkit
        type: library
        version: 0.4.0
        kubeVersion: ">=1.20.0-0 <1.30.0-0"
        """
    root = write(tmp_path / "vendored", files)
    assert not {name for name in listed(root) if "toolkit" in name}
    assert not {rule for rule in component_rules(root) if "toolkit" in rule}


def test_a_library_chart_kept_in_the_tree_is_not_judged_by_its_kubeversion(tmp_path):
    chart = """
        apiVersion: v2
        name: helpers
        type: {kind}
        version: 0.1.0
        kubeVersion: ">=1.20.0-0 <1.30.0-0"
        """
    application = write(tmp_path / "app", {"charts/helpers/Chart.yaml": chart.replace("{kind}", "application"),
                                            "talconfig.yaml": TALCONFIG})
    assert listed(application) == {"chart/helpers": "chart-kubeVersion"}  # the control: an application chart is
    library = write(tmp_path / "lib", {"charts/helpers/Chart.yaml": chart.replace("{kind}", "library"),
                                       "talconfig.yaml": TALCONFIG})
    assert "chart/helpers" not in listed(library)
    assert not any("helpers" in rule for rule in component_rules(library))


def test_a_chart_helm_s_cache_says_is_a_library_is_no_component(tmp_path):
    cache, config = tmp_path / "helm-cache", tmp_path / "helm-config"
    write(cache, {"lib-index.yaml": """
        apiVersion: v1
        entries:
          toolkit:
            - {name: toolkit, version: 0.4.0, type: library, kubeVersion: ">=1.20.0-0 <1.30.0-0"}
        """})
    write(config, {"repositories.yaml": "repositories:\n  - {name: lib, url: https://charts.example.invalid/lib}\n"})
    root = write(tmp_path / "tree", {"apps/game/Chart.yaml": umbrella("toolkit", "https://charts.example.invalid/lib",
                                                                      "0.4.0"), "talconfig.yaml": TALCONFIG})
    env = {"HELM_REPOSITORY_CACHE": str(cache), "HELM_REPOSITORY_CONFIG": str(config / "repositories.yaml")}
    assert not {name for name in listed(root, env) if "toolkit" in name}
    assert not {rule for rule in component_rules(root, env) if "toolkit" in rule}
