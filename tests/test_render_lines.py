"""Every finding's line lies inside its file, in its own object, whatever produced the object:
a chart render (real helm), a kustomize build (real kustomize), a release Secret."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import kustomize_or_skip, run_kubehop, tool_or_skip
from scanner.sources.yaml.line_map import aligned

DAEMONSET = """\
{{- if .Values.enabled }}
{{- range $i, $e := until 3 }}
# a comment helm keeps in its output
{{- end }}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .Release.Name }}-agent
  labels:
{{ include "agent.labels" . | indent 4 }}
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
      annotations:
        scheduler.alpha.kubernetes.io/critical-pod: ''
    spec:
      containers:
        - name: agent
          image: "agent:{{ .Values.tag }}"
      tolerations:
{{ toYaml .Values.tolerations | indent 8 }}
{{- end }}
"""
HELPERS = """\
{{- define "agent.labels" -}}
app.kubernetes.io/name: agent
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: agent-1.0.0
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
"""
VALUES = """\
enabled: true
tag: "1.0"
tolerations:
  - key: node-role.kubernetes.io/master
    effect: NoSchedule
"""


def scan_json(*args: str, env: dict | None = None) -> tuple[int, dict]:
    proc = run_kubehop("scan", "--format", "json", *args, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


def line_of(path: str, line: int) -> str:
    return Path(path).read_text().split("\n")[line - 1]


def write_chart(root: Path) -> Path:
    chart = root / "agent"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: agent\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text(VALUES)
    (chart / "templates" / "daemonset.yaml").write_text(DAEMONSET)
    (chart / "templates" / "_helpers.tpl").write_text(HELPERS)
    return chart


def test_field_findings_of_a_render_point_at_the_template_lines(tmp_path):
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "cache")}
    chart = write_chart(tmp_path)
    template = str(chart / "templates" / "daemonset.yaml")
    code, report = scan_json("--target", "1.36", str(chart), env=env)
    found = {f["rule"]: (f["file"], f["line"], f["column"]) for f in report["findings"]}
    # The literal annotation at its own line; the toleration, which `toYaml .Values.tolerations` prints,
    # at the line of values.yaml that sets it: the line a person edits.
    assert found["field/annotation/critical-pod"] == (template, 20, 9)
    values = str(chart / "values.yaml")
    assert found["field/node-label/master-role"] == (values, 4, 5)
    assert line_of(values, 4).strip() == "- key: node-role.kubernetes.io/master"


def test_a_finding_never_points_outside_its_object():
    """An output line without counterpart before any aligned line stays at the object's apiVersion."""
    output = ["apiVersion: v1", "kind: ConfigMap", "data:", "  made: by-a-helper"]
    where = aligned(output, 1, 4, __file__, 1)
    assert where(4, 3)[0] >= 1


def test_lines_of_an_output_with_sorted_keys_follow_their_key_paths(tmp_path):
    """kustomize writes keys sorted: a nodeSelector written above the containers comes out below them,
    and text alignment alone sent it to the containers' last line."""
    source = tmp_path / "deployment.yaml"
    source.write_text(textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          template:
            spec:
              nodeSelector:
                beta.kubernetes.io/os: linux
              containers:
                - name: web
                  image: web:1
                  ports:
                    - containerPort: 80
                  resources:
                    limits: {cpu: 1}
        """))
    output = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          template:
            spec:
              containers:
              - image: web:1
                name: web
                ports:
                - containerPort: 80
                resources:
                  limits:
                    cpu: 1
              nodeSelector:
                beta.kubernetes.io/os: linux
        """).split("\n")
    where = aligned(output, 1, 17, str(source), 1)
    lines = source.read_text().split("\n")
    assert lines[where(17, 9)[0] - 1].strip() == "beta.kubernetes.io/os: linux"
    assert lines[where(9, 9)[0] - 1].strip() == "image: web:1"
    assert lines[where(15, 13)[0] - 1].strip() == "limits: {cpu: 1}"  # no line of its own in the source


KUSTOMIZE_BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector:
        beta.kubernetes.io/os: linux
      containers:
        - name: web
          image: web:1
"""


def test_field_findings_of_a_kustomize_build_point_at_the_base_file(tmp_path):
    command = kustomize_or_skip()
    env = {"KUBEHOP_KUSTOMIZE": command[0]} if command[1:] == ["build"] else {"KUBEHOP_KUBECTL": command[0]}
    base = tmp_path / "base"
    overlay = tmp_path / "overlay"
    base.mkdir()
    overlay.mkdir()
    (tmp_path / ".git").mkdir()  # one repository: the overlay may read its base beside it
    (base / "deployment.yaml").write_text("---\n# the web front end\n" + KUSTOMIZE_BASE)
    (base / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (overlay / "kustomization.yaml").write_text(textwrap.dedent("""\
        resources: [../base]
        commonLabels: {team: shop, tier: front, owner: someone}
        commonAnnotations: {a: "1", b: "2", c: "3", d: "4"}
        """))
    code, report = scan_json("--target", "1.36", str(overlay), env=env)
    (finding,) = [f for f in report["findings"] if f["rule"] == "field/node-label/beta-os"]
    assert finding["file"] == "base/deployment.yaml"  # from the repository root
    assert line_of(str(tmp_path / finding["file"]), finding["line"]).strip() == "beta.kubernetes.io/os: linux"


def test_field_findings_of_a_release_secret_point_at_the_secret(tmp_path):
    from test_helm_releases import dump, release_item

    manifest = "---\n# Source: shop/templates/deployment.yaml\n" + KUSTOMIZE_BASE * 1
    path = dump(tmp_path, release_item("shop", "apps", 1, "deployed", manifest))
    code, report = scan_json("--target", "1.36", "--helm-releases", path, str(tmp_path / "empty"))
    (finding,) = [f for f in report["findings"] if f["rule"] == "field/node-label/beta-os"]
    lines = Path(path).read_text().split("\n")
    assert finding["file"] == path and 1 <= finding["line"] <= len(lines)
    assert "kind: Secret" in lines[finding["line"] - 1] or "apiVersion: v1" in lines[finding["line"] - 1]


@pytest.fixture(autouse=True)
def _empty(tmp_path):
    (tmp_path / "empty").mkdir()


STORAGE_CLASS_TEMPLATE = """\
{{- if .Values.gp2.enabled }}
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp2
  annotations:
    {{- with .Values.gp2.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
parameters:
  {{- .Values.gp2.parameters | toYaml | nindent 2 }}
  fsType: {{ .Values.fsType }}
{{ .Values.gp2.spec | toYaml }}
{{- end }}
"""
STORAGE_CLASS_VALUES = """\
fsType: ext4
gp2:
  enabled: true
  annotations:
    storageclass.kubernetes.io/is-default-class: "false"
  parameters:
    type: gp2
  spec:
    provisioner: kubernetes.io/aws-ebs
    reclaimPolicy: Delete
"""
STORAGE_CLASS_OUTPUT = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp2
  annotations:
    storageclass.kubernetes.io/is-default-class: "false"
parameters:
  type: gp2
  fsType: ext4
provisioner: kubernetes.io/aws-ebs
reclaimPolicy: Delete
---
""".split("\n")


def storage_class_chart(root: Path, template: str = STORAGE_CLASS_TEMPLATE, folder: str = "templates") -> tuple:
    chart = root / "ebs"
    (chart / folder).mkdir(parents=True)
    (chart / "values.yaml").write_text(STORAGE_CLASS_VALUES)
    (chart / folder / "gp2.yaml").write_text(template)
    return chart, str(chart / folder / "gp2.yaml")


def values_line(chart: Path, line: int) -> str:
    return (chart / "values.yaml").read_text().split("\n")[line - 1].strip()


def test_what_to_yaml_prints_from_values_points_at_the_values_line(tmp_path):
    from scanner.sources.helm.values_lines import ValuesLines

    chart, template = storage_class_chart(tmp_path)
    where = aligned(STORAGE_CLASS_OUTPUT, 1, 12, template, 2, ValuesLines(str(chart), template))
    line, column, path = where(10, 1)  # provisioner, from `{{ .Values.gp2.spec | toYaml }}`
    assert path == str(chart / "values.yaml") and values_line(chart, line) == "provisioner: kubernetes.io/aws-ebs"
    assert column == 5
    assert values_line(chart, where(11, 16)[0]) == "reclaimPolicy: Delete"
    assert values_line(chart, where(8, 3)[0]) == "type: gp2"  # under parameters, the template's own key
    # `with .Values.gp2.annotations` then `toYaml .`: the annotation, at its values line
    assert values_line(chart, where(6, 5)[0]) == 'storageclass.kubernetes.io/is-default-class: "false"'
    # `fsType: {{ .Values.fsType }}`: the key is the template's, the value values.yaml's
    assert where(9, 3) == (12, 3)
    assert where(9, 11)[2] == str(chart / "values.yaml") and values_line(chart, where(9, 11)[0]) == "fsType: ext4"
    # What the template writes itself stays at its template line
    assert where(3, 1) == (4, 1) and where(7, 1) == (10, 1)


def test_a_value_the_values_files_do_not_hold_stays_at_the_template(tmp_path):
    """Inline values of a release (a Flux HelmRelease's) have no file here; a subchart's values nest
    under its parent's; a value that is not what values.yaml says came from elsewhere."""
    from scanner.sources.helm.values_lines import ValuesLines

    chart, template = storage_class_chart(tmp_path)
    inline = "gp2:\n  spec:\n    provisioner: kubernetes.io/aws-ebs\n"
    where = aligned(STORAGE_CLASS_OUTPUT, 1, 12, template, 2, ValuesLines(str(chart), template, inline=[inline]))
    assert len(where(10, 1)) == 2 and where(8, 3)[2] == str(chart / "values.yaml")  # only what inline sets stays
    other = [text.replace("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd") for text in STORAGE_CLASS_OUTPUT]
    where = aligned(other, 1, 12, template, 2, ValuesLines(str(chart), template))
    assert len(where(10, 1)) == 2
    sub, sub_template = storage_class_chart(tmp_path / "parent", folder="charts/ebs/templates")
    where = aligned(STORAGE_CLASS_OUTPUT, 1, 12, sub_template, 2, ValuesLines(str(sub), sub_template))
    assert len(where(10, 1)) == 2


def test_a_later_values_file_that_sets_the_value_is_the_line_to_edit(tmp_path):
    from scanner.sources.helm.values_lines import ValuesLines

    chart, template = storage_class_chart(tmp_path)
    prod = tmp_path / "prod.yaml"
    prod.write_text("gp2:\n  spec:\n    reclaimPolicy: Delete\n")
    where = aligned(STORAGE_CLASS_OUTPUT, 1, 12, template, 2, ValuesLines(str(chart), template, [str(prod)]))
    assert where(11, 1) == (3, 5, str(prod))
    assert where(10, 1)[2] == str(chart / "values.yaml")
