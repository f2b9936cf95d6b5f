"""What of a chart is read as text when helm does not render it (real helm): a chart helm fails on,
the templates its values switch off (--all-templates), and keys helm's output writes twice."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_kubehop

LEGACY_INGRESS = """\
{{- if .Values.ingress.enabled }}
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: {{ .Release.Name }}
spec:
  backend:
    serviceName: web
    servicePort: 80
{{- end }}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {{ required "a name is required" .Values.name }}
spec:
  ports:
    - port: 80
"""
PDB = """\
{{- if .Values.pdb }}
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
{{- end }}
"""


def chart(root: Path, name: str, values: str, **templates: str) -> Path:
    folder = root / name
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
    (folder / "values.yaml").write_text(values)
    for file, text in templates.items():
        (folder / "templates" / f"{file}.yaml").write_text(text)
    return folder


def scan_json(*args: str, env: dict) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", *args, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def test_a_chart_helm_cannot_render_is_read_as_text_with_helms_reason(helm_env, tmp_path):
    """A required value the chart does not default: helm refuses; the removed API is still reported."""
    web = chart(tmp_path, "web", "ingress:\n  enabled: false\n", ingress=LEGACY_INGRESS, service=SERVICE)
    code, report = scan_json("--target", "1.25", str(web), env=helm_env)
    assert code == 1 and report["summary"]["input_errors"] == 0
    (finding,) = report["findings"]
    assert (finding["file"], finding["line"]) == (str(web / "templates" / "ingress.yaml"), 2)
    assert finding["via"] == "helm release web of chart web 1.0.0, template read as text (helm could not render it)"
    (entry,) = report["unrendered"]
    assert entry["file"] == str(web) and "a name is required" in entry["reason"]


def test_a_chart_whose_metadata_cannot_be_read_is_still_an_input_problem(helm_env, tmp_path):
    web = chart(tmp_path, "web", "", ingress=LEGACY_INGRESS)
    (web / "Chart.yaml").write_text("apiVersion: v2\nversion: 1.0.0\n")  # no name: helm refuses it
    code, report = scan_json("--target", "1.25", str(web), env=helm_env)
    assert code == 3
    (problem,) = [d for d in report["diagnostics"] if d["level"] == "error"]
    assert problem["file"] == str(web) and "helm could not render it" in problem["message"]


def test_templates_the_values_switch_off_are_latent_warnings_with_all_templates(helm_env, tmp_path):
    web = chart(tmp_path, "web", "name: web\ningress:\n  enabled: false\npdb: false\n",
                ingress=LEGACY_INGRESS, service=SERVICE, pdb=PDB)
    code, report = scan_json("--target", "1.25", str(web), env=helm_env)
    assert (code, report["findings"]) == (0, [])

    code, report = scan_json("--target", "1.25", "--all-templates", str(web), env=helm_env)
    assert code == 0  # warnings only
    found = {(Path(f["file"]).name, f["line"], f["severity"]) for f in report["findings"]}
    assert found == {("ingress.yaml", 2, "warning"), ("pdb.yaml", 2, "warning")}
    assert all("latent" in f["via"] for f in report["findings"])
    assert any("--all-templates: 2 templates" in n for n in report["notices"])

    # Switched on by the values, the same template is rendered: an error, not a latent warning.
    (web / "values.yaml").write_text("name: web\ningress:\n  enabled: true\npdb: false\n")
    code, report = scan_json("--target", "1.25", "--all-templates", str(web), env=helm_env)
    assert code == 1
    found = {(Path(f["file"]).name, f["severity"], "latent" in f["via"]) for f in report["findings"]}
    assert found == {("ingress.yaml", "error", False), ("pdb.yaml", "warning", True)}


DUPLICATED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
{{ include "web.labels" . | indent 4 }}
    app.kubernetes.io/name: web-frontend
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
"""
HELPERS = """\
{{- define "web.labels" -}}
app.kubernetes.io/name: web
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
"""


def test_a_key_helms_output_writes_twice_is_a_warning_at_the_template_line(helm_env, tmp_path):
    web = chart(tmp_path, "web", "replicas: 1\n", deployment=DUPLICATED)
    (web / "templates" / "_helpers.tpl").write_text(HELPERS)
    code, report = scan_json("--target", "1.25", str(web), env=helm_env)
    assert code == 0 and report["diagnostics"] == []
    (finding,) = report["findings"]
    assert finding["rule"] == "helm/duplicate-key" and finding["severity"] == "warning"
    assert (finding["file"], finding["line"]) == (str(web / "templates" / "deployment.yaml"), 7)
    assert "the API server keeps the last value ('web-frontend') and drops 'web'" in finding["message"]
    assert finding["message"].startswith("metadata.labels.app.kubernetes.io/name: ")


def test_a_duplicate_key_in_a_file_a_person_wrote_stays_an_input_problem(helm_env, tmp_path):
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                                      "data:\n  a: '1'\n  a: '2'\n")
    code, report = scan_json("--target", "1.25", str(tmp_path / "cm.yaml"), env=helm_env)
    assert code == 3 and report["findings"] == []


CHOSEN_TOGETHER = """\
{{- if .Values.agentMode }}
apiVersion: monitoring.example.com/v1alpha1
kind: PrometheusAgent
{{- else }}
apiVersion: monitoring.example.com/v1
kind: Prometheus
{{- end }}
metadata:
  name: main
---
apiVersion: rbac.authorization.k8s.io/v1
{{- if .Values.namespaced }}
kind: RoleBinding
{{- else }}
kind: ClusterRoleBinding
{{- end }}
roleRef:
  kind: ClusterRole
  name: x
"""


def test_text_reading_pairs_each_apiversion_with_the_kinds_of_its_own_branch(tmp_path):
    from scanner.sources.helm.chart_templates import possible_objects

    web = chart(tmp_path, "web", "", main=CHOSEN_TOGETHER)
    found = {(o.api_version, o.kind) for o in possible_objects(str(web))}
    assert found == {("monitoring.example.com/v1alpha1", "PrometheusAgent"), ("monitoring.example.com/v1", "Prometheus"),
                     ("rbac.authorization.k8s.io/v1", "RoleBinding"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")}


def test_a_custom_resource_read_as_text_is_not_checked_against_its_crd_schema(tmp_path):
    """Read as text, only apiVersion and kind are known: a schema requiring spec must not call it invalid."""
    crd = tmp_path / "crd.yaml"
    crd.write_text("""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            spec: {type: object}
""")
    chart(tmp_path, "web", "", widget="apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
    proc = run_kubehop("scan", "--format", "json", "--no-render", "--target", "1.30", str(tmp_path))
    assert json.loads(proc.stdout)["findings"] == []


def test_a_render_stopped_at_a_bound_stays_an_input_problem(tmp_path):
    """A chart over an output, memory or time bound is the user's to look at (exit 3), not read as text."""
    from scanner.sources.helm.chart_fallback import unrenderable
    from scanner.sources.helm.render import RenderOutcome, releases_for

    web = chart(tmp_path, "web", "", ingress=LEGACY_INGRESS)
    (release,) = releases_for([str(web)])
    found, problems, not_rendered, _ = unrenderable(
        RenderOutcome(release, error="helm printed more than 64 MiB", over_limit=True))
    assert found == [] and [p.level for p in problems] == ["error"]
    found, problems, not_rendered, _ = unrenderable(RenderOutcome(release, error="template: x: nil pointer"))
    assert {m.kind for m in found} == {"Ingress"} and problems == []
