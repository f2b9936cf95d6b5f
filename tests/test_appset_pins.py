"""Charts an Argo CD ApplicationSet names by its generators' parameters: each chart and version the
tree writes (a `clusters` generator's values, `list` elements, a `merge` or `matrix` of them) is a pin
at the line that sets the version; a parameter nothing in the tree sets names no chart (a notice says
so). Modelled on aws-samples/eks-blueprints-add-ons (argocd/bootstrap/control-plane/addons/*: a merge
of clusters generators whose `values` set addonChart / addonChartVersion, overridden for staging and
prod), with Go-template and fasttemplate forms."""

from __future__ import annotations

import json

from conftest import invoke, write_tree as tree
from scanner.model import Manifest, Origin
from scanner.sources.reach.appsets import application_specs, fill_text, parameter_sets

CERT_MANAGER = """
    apiVersion: argoproj.io/v1alpha1
    kind: ApplicationSet
    metadata:
      name: addons-cert-manager
      namespace: argocd
    spec:
      generators:
        - merge:
            mergeKeys: [server]
            generators:
              - clusters:
                  values:
                    addonChart: cert-manager
                    addonChartVersion: v1.12.4
                    addonChartRepository: https://charts.jetstack.io
                  selector:
                    matchExpressions:
                      - {key: enable_cert_manager, operator: In, values: ['true']}
              - clusters:
                  selector:
                    matchLabels: {environment: staging}
                  values:
                    addonChartVersion: v1.13.1
              - clusters:
                  selector:
                    matchLabels: {environment: prod}
                  values:
                    addonChartVersion: v1.12.4
      template:
        metadata:
          name: addon-{{name}}-{{values.addonChart}}
        spec:
          project: default
          sources:
            - repoURL: '{{metadata.annotations.addons_repo_url}}'
              targetRevision: '{{metadata.annotations.addons_repo_revision}}'
              ref: values
            - chart: '{{values.addonChart}}'
              repoURL: '{{values.addonChartRepository}}'
              targetRevision: '{{values.addonChartVersion}}'
              helm:
                releaseName: '{{values.addonChart}}'
                values: |
                  installCRDs: true
          destination:
            namespace: cert-manager
            name: '{{name}}'
    """


def components(root) -> list[dict]:
    done = invoke("components", "--no-config", "-o", "json", str(root))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["components"]


def scan(root) -> tuple[int, dict]:
    done = invoke("scan", "--no-config", "--target", "1.36", "-o", "json", str(root))
    return done.returncode, json.loads(done.stdout)


def rows(root, name: str) -> list[tuple]:
    return [(c["pin"], c["file"].rpartition("/")[2], c["line"], c["releases"][:1])
            for c in components(root) if c["component"] == name]


def test_a_merge_of_cluster_generators_pins_each_version_at_the_value_that_sets_it(tmp_path):
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": CERT_MANAGER})
    found = components(root)
    assert [(c["pin"], c["line"], c["column"], c["releases"]) for c in found if c["component"] == "cert-manager"] == [
        ("v1.12.4", 14, 36, ["1.12"]), ("v1.13.1", 23, 36, ["1.13"]), ("v1.12.4", 28, 36, ["1.12"])]
    staging = next(c for c in found if c["pin"] == "v1.13.1")
    assert staging["how"] == "chart"
    assert staging["what"] == "ApplicationSet argocd/addons-cert-manager (chart cert-manager)"
    assert not [c for c in found if "{{" in c["component"] or "values" in c["component"]]


def test_the_scan_judges_the_version_at_the_generators_line_and_names_the_template_line(tmp_path):
    """Real data: cert-manager 1.12.4 supports Kubernetes up to 1.27 (1.12.7: 1.28)."""
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": CERT_MANAGER})
    code, report = scan(root)
    assert code == 1
    first = [f for f in report["findings"] if f["rule"] == "component/cert-manager/unsupported"][0]
    assert (first["file"].rpartition("/")[2], first["line"], first["hop"]) == ("cert-manager-appset.yaml", 14, "hop to 1.28")
    assert first["via"].startswith("ApplicationSet argocd/addons-cert-manager (chart cert-manager); "
                                   "targetRevision: {{values.addonChartVersion}} at ")
    assert first["via"].endswith("cert-manager-appset.yaml:40, filled in by the clusters generator "
                                 "spec.generators[0].merge.generators[0] of ApplicationSet argocd/addons-cert-manager")
    assert not report["diagnostics"]


def test_go_template_list_elements_are_one_pin_each(tmp_path):
    root = tree(tmp_path, {"ingress-appset.yaml": """
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: ingress, namespace: argocd}
        spec:
          goTemplate: true
          goTemplateOptions: ["missingkey=error"]
          generators:
            - list:
                elements:
                  - cluster: edge
                    chart: {name: ingress-nginx, version: 4.7.1}
                  - cluster: core
                    chart: {name: ingress-nginx, version: 4.11.3}
          template:
            metadata: {name: 'ingress-{{ .cluster }}'}
            spec:
              project: default
              source:
                repoURL: https://kubernetes.github.io/ingress-nginx
                chart: '{{ .chart.name }}'
                targetRevision: '{{ .chart.version }}'
              destination: {name: '{{ .cluster }}', namespace: ingress-nginx}
        """})
    assert rows(root, "ingress-nginx") == [("4.7.1", "ingress-appset.yaml", 11, ["1.8"]),
                                           ("4.11.3", "ingress-appset.yaml", 13, ["1.11"])]


def test_a_matrix_of_cluster_values_and_list_elements_fills_chart_repository_and_version(tmp_path):
    root = tree(tmp_path, {"platform-appset.yaml": """
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: platform, namespace: argocd}
        spec:
          goTemplate: true
          generators:
            - matrix:
                generators:
                  - clusters:
                      selector:
                        matchExpressions:
                          - {key: tier, operator: In, values: [platform]}
                      values:
                        repository: https://charts.jetstack.io
                  - list:
                      elements:
                        - {chart: cert-manager, version: v1.15.3}
          template:
            metadata: {name: '{{.name}}-{{.chart}}'}
            spec:
              project: default
              source:
                repoURL: '{{.values.repository}}'
                chart: '{{.chart}}'
                targetRevision: '{{.version}}'
              destination: {name: '{{.name}}', namespace: '{{.chart}}'}
        """})
    assert rows(root, "cert-manager") == [("v1.15.3", "platform-appset.yaml", 17, ["1.15"])]


def test_a_chart_no_generator_of_the_tree_names_is_a_notice_never_a_made_up_component(tmp_path):
    """eks-blueprints' cluster Secrets are made by Terraform, outside the tree: what their annotations
    say is not known."""
    appset = CERT_MANAGER.replace("chart: '{{values.addonChart}}'", "chart: '{{metadata.annotations.chart}}'")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset})
    assert [c for c in components(root) if c["file"].endswith("appset.yaml")] == []
    code, report = scan(root)
    assert code == 0 and not [f for f in report["findings"] if "appset" in f["file"]]
    assert [(d["level"], d["line"], d["message"]) for d in report["diagnostics"]] == [
        ("notice", 38, "ApplicationSet argocd/addons-cert-manager: chart '{{metadata.annotations.chart}}' takes "
                       "metadata.annotations.chart, which nothing in the tree sets (a cluster Secret's label or "
                       "annotation, or a generator kubehop does not read): a chart it deploys is not named")]


def test_a_version_the_tree_does_not_set_is_unknown_and_told(tmp_path):
    appset = CERT_MANAGER.replace("targetRevision: '{{values.addonChartVersion}}'",
                                  "targetRevision: '{{metadata.annotations.cert_manager_version}}'")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset})
    assert rows(root, "cert-manager") == [("{{metadata.annotations.cert_manager_version}}",
                                           "cert-manager-appset.yaml", 40, [])]
    code, report = scan(root)
    assert code == 0  # unknown is a warning, never fine, never blocked
    assert [f["rule"] for f in report["findings"]] == ["component/cert-manager/unknown-release"]
    assert [d["message"].partition(":")[2].partition(",")[0] for d in report["diagnostics"]] == [
        " targetRevision '{{metadata.annotations.cert_manager_version}}' takes "
        "metadata.annotations.cert_manager_version"]


def test_a_pull_request_generators_parameter_names_no_chart(tmp_path):
    root = tree(tmp_path, {"previews.yaml": """
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: previews, namespace: argocd}
        spec:
          generators:
            - pullRequest:
                github: {owner: example, repo: shop}
          template:
            metadata: {name: 'shop-{{branch}}'}
            spec:
              project: default
              source:
                repoURL: oci://ghcr.io/example/charts
                chart: 'shop-{{branch_slug}}'
                targetRevision: '0.1.0-{{head_short_sha}}'
              destination: {server: https://kubernetes.default.svc, namespace: 'shop-{{number}}'}
        """})
    assert components(root) == []
    _, report = scan(root)
    assert ["takes branch_slug," in d["message"] for d in report["diagnostics"]] == [True]


def test_a_chart_path_under_an_oci_registry_is_the_chart_of_that_repository(tmp_path):
    appset = CERT_MANAGER.replace("chart: '{{values.addonChart}}'", "chart: 'jetstack/charts/{{values.addonChart}}'") \
        .replace("https://charts.jetstack.io", "quay.io")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset})
    assert [pin for pin, *_ in rows(root, "cert-manager")] == ["v1.12.4", "v1.13.1", "v1.12.4"]


def test_an_element_without_the_parameter_is_told_and_the_others_pinned(tmp_path):
    root = tree(tmp_path, {"appset.yaml": """
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata: {name: addons}
        spec:
          generators:
            - list:
                elements:
                  - {chart: cert-manager, version: v1.14.5}
                  - {version: v1.15.0}
          template:
            metadata: {name: '{{chart}}'}
            spec:
              project: default
              source: {repoURL: https://charts.jetstack.io, chart: '{{chart}}', targetRevision: '{{version}}'}
              destination: {server: https://kubernetes.default.svc, namespace: '{{chart}}'}
        """})
    assert rows(root, "cert-manager") == [("v1.14.5", "appset.yaml", 8, ["1.14"])]
    _, report = scan(root)
    assert [d["message"].partition(": ")[2][:40] for d in report["diagnostics"]] == [
        "chart '{{chart}}' takes chart, which not"]


def appset(spec: dict) -> Manifest:
    made = Manifest("argoproj.io/v1alpha1", "ApplicationSet", "a", "argocd", Origin("a.yaml"))
    made._body = {"spec": spec}
    return made


LISTS = {"merge": {"mergeKeys": ["cluster"], "generators": [
    {"list": {"elements": [{"cluster": "edge", "version": "1.0.0"}, {"cluster": "core", "version": "1.0.0"}]}},
    {"list": {"elements": [{"cluster": "core", "version": "2.0.0"}, {"cluster": "lab", "version": "3.0.0"}]}}]}}


def test_a_merge_overrides_the_base_sets_whose_merge_keys_match_and_drops_the_others():
    found = application_specs(appset({"generators": [LISTS], "template": {"spec": {
        "source": {"path": "apps/{{cluster}}-{{version}}"}}}}), [], "/nowhere")
    assert [s["source"]["path"] for s in found.specs] == ["apps/edge-1.0.0", "apps/core-2.0.0"]
    assert found.complete


def test_read_loosely_a_merge_whose_keys_are_unknown_keeps_each_override_that_may_match():
    sets = parameter_sets(appset({"generators": [{"merge": {"mergeKeys": ["server"], "generators": [
        {"clusters": {"values": {"v": "1.0.0"}, "selector": {"matchExpressions": []}}},
        {"clusters": {"values": {"v": "2.0.0"}, "selector": {"matchLabels": {"env": "prod"}}}}]}}]}), [])
    filled = [fill_text("{{values.v}}", s) for s in sets]
    assert [(f.text, f.at.path) for f in filled] == [
        ("1.0.0", ("spec", "generators", 0, "merge", "generators", 0, "clusters", "values", "v")),
        ("2.0.0", ("spec", "generators", 0, "merge", "generators", 1, "clusters", "values", "v"))]
    assert fill_text("{{ default \"1\" .values.v }}", sets[0]).unfilled == '{{ default "1" .values.v }}'


def test_a_template_function_is_not_evaluated_and_says_so(tmp_path):
    appset = CERT_MANAGER.replace("chart: '{{values.addonChart}}'", "chart: '{{ .values.addonChart | lower }}'")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset})
    assert [c for c in components(root) if c["file"].endswith("appset.yaml")] == []
    _, report = scan(root)
    assert [d["message"].partition(": ")[2] for d in report["diagnostics"]] == [
        "chart '{{ .values.addonChart | lower }}' uses {{ .values.addonChart | lower }}, which kubehop does not "
        "evaluate: a chart it deploys is not named"]


def test_the_change_set_moves_every_line_that_sets_the_version(tmp_path):
    """A staging or prod override left at the old version would still deploy it: each is edited."""
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": CERT_MANAGER})
    done = invoke("plan", "--no-config", "--from", "1.27", "--target", "1.28", "--window", "1", "--diff", str(root))
    edits = [line for line in done.stdout.splitlines() if line.startswith(("-  ", "+  "))]
    assert edits == ["-                addonChartVersion: v1.12.4", "+                addonChartVersion: v1.12.7",
                     "-                addonChartVersion: v1.13.1", "+                addonChartVersion: v1.14.0",
                     "-                addonChartVersion: v1.12.4", "+                addonChartVersion: v1.12.7"]


def cluster_secret(name: str, environment: str, version: str) -> str:
    return f"""
        apiVersion: v1
        kind: Secret
        metadata:
          name: {name}
          namespace: argocd
          labels:
            argocd.argoproj.io/secret-type: cluster
            environment: {environment}
          annotations:
            cert_manager_version: {version}
        stringData:
          name: {name}
          server: https://{name}.example.org
        """


def test_a_version_a_cluster_secret_of_the_tree_annotates_is_pinned_at_that_annotation(tmp_path):
    appset = CERT_MANAGER.replace("targetRevision: '{{values.addonChartVersion}}'",
                                  "targetRevision: '{{metadata.annotations.cert_manager_version}}'") \
        .replace("matchExpressions:\n                      - {key: enable_cert_manager, operator: In, values: ['true']}",
                 "matchLabels: {environment: staging}")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset,
                           "clusters/staging.yaml": cluster_secret("staging", "staging", "v1.14.4"),
                           "clusters/prod.yaml": cluster_secret("prod", "prod", "v1.15.1")})
    assert rows(root, "cert-manager") == [("v1.14.4", "staging.yaml", 10, ["1.14"])]
    _, report = scan(root)
    first = [f for f in report["findings"] if f["rule"].startswith("component/cert-manager/")][0]
    assert first["via"].endswith("filled in by a clusters generator of ApplicationSet argocd/addons-cert-manager "
                                 "from Secret argocd/staging")


def test_many_overrides_each_apply_alone_and_only_those_setting_the_version_pin(tmp_path):
    """eks-blueprints' cluster-autoscaler: staging and prod overrides set the chart version, nine more
    (one per kubernetes_version label) set only the image tag; every override may match any cluster."""
    per_minor = "".join(f"""
              - clusters:
                  selector:
                    matchLabels: {{kubernetes_version: '1.{minor}'}}
                  values:
                    addonImageTag: v1.{minor}.0""" for minor in range(20, 29))
    appset = CERT_MANAGER.replace("""
              - clusters:
                  selector:
                    matchLabels: {environment: prod}""", per_minor + """
              - clusters:
                  selector:
                    matchLabels: {environment: prod}""")
    root = tree(tmp_path, {"addons/cert-manager-appset.yaml": appset})
    assert [(pin, line) for pin, _, line, _ in rows(root, "cert-manager")] == [
        ("v1.12.4", 14), ("v1.13.1", 23), ("v1.12.4", 73)]
