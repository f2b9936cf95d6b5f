"""Reading templates as text: the branches the cluster's Capabilities decide are those Helm takes."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import run_kubehop
from scanner.rulebook import load_rulebook
from scanner.sources.helm.template_branches import Capabilities, decided_branches
from scanner.versions import Minor


def capabilities(minor: str) -> Capabilities:
    book = load_rulebook()
    at = Minor(*map(int, minor.split(".")))
    return Capabilities(at, frozenset(book.served_at(at)), book.served.group_versions())


CRONJOB = """\
{{- if .Capabilities.APIVersions.Has "batch/v1/CronJob" }}
apiVersion: batch/v1
{{- else }}
apiVersion: batch/v1beta1
{{- end }}
kind: CronJob
"""


def kept(text: str, minor: str) -> list[str]:
    result = decided_branches(text, capabilities(minor))
    assert result.count("\n") == text.count("\n")  # lines stay where they were
    return [line.strip() for line in result.splitlines() if line.strip().startswith("apiVersion")]


@pytest.mark.parametrize("minor, expected", [("1.36", ["apiVersion: batch/v1"]),
                                             ("1.20", ["apiVersion: batch/v1beta1"])])
def test_an_api_the_minor_serves_or_not_decides_the_branch(minor, expected):
    assert kept(CRONJOB, minor) == expected


@pytest.mark.parametrize("condition, expected", [
    ('semverCompare ">=1.21-0" .Capabilities.KubeVersion.GitVersion', ["apiVersion: new/v1"]),
    ('semverCompare "<1.21-0" $.Capabilities.KubeVersion.Version', ["apiVersion: old/v1beta1"]),
    ('not (.Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy")', ["apiVersion: new/v1"]),
    ('and (.Capabilities.APIVersions.Has "batch/v1") (semverCompare ">=1.30" .Capabilities.KubeVersion.Version)',
     ["apiVersion: new/v1"]),
    ('or .Values.legacy (.Capabilities.APIVersions.Has "policy/v1beta1")', None),  # a value: undecided
    ('semverCompare ">=1.36.3" .Capabilities.KubeVersion.Version', None),  # splits the minor
    ('.Capabilities.APIVersions.Has "monitoring.coreos.com/v1"', None),  # a CRD's API may be installed
    ('.Values.enabled', None),
    ('semverCompare ">=1.21" (include "kube.version" .)', None),
])
def test_conditions_decided_by_the_capabilities_alone(condition, expected):
    text = f"{{{{- if {condition} }}}}\napiVersion: new/v1\n{{{{- else }}}}\napiVersion: old/v1beta1\n{{{{- end }}}}\n"
    assert kept(text, "1.36") == (expected or ["apiVersion: new/v1", "apiVersion: old/v1beta1"])


def test_else_if_chains_nesting_and_helpers():
    text = textwrap.dedent("""\
        {{- define "cronjob.apiVersion" -}}
        {{- if semverCompare "<1.8-0" .Capabilities.KubeVersion.GitVersion -}}
        "batch/v2alpha1"
        {{- else if semverCompare "<1.21-0" .Capabilities.KubeVersion.GitVersion -}}
        "batch/v1beta1"
        {{- else -}}
        "batch/v1"
        {{- end -}}
        {{- end -}}
        {{- range .Values.jobs }}
        {{- if .enabled }}{{ if .Capabilities.APIVersions.Has "autoscaling/v2" }}v2{{ else }}v2beta2{{ end }}{{ end }}
        {{- end }}
        """)
    result = decided_branches(text, capabilities("1.36"))
    assert '"batch/v1"' in result and "v2alpha1" not in result and "v1beta1" not in result
    assert "v2beta2" not in result and "v2" in result


def test_broken_or_unbalanced_actions_keep_every_branch():
    for text in ('{{ if .Capabilities.APIVersions.Has "batch/v1" }}a{{ else }}b',  # no end
                 '{{ end }}{{ if (.Capabilities.APIVersions.Has "batch/v1" }}a{{ else }}b{{ end }}',
                 '{{ if .Capabilities.APIVersions.Has }}a{{ else }}b{{ end }}'):
        result = decided_branches(text, capabilities("1.36"))
        assert "a" in result and "b" in result


def test_the_dead_else_of_a_chart_helm_cannot_render_is_no_blocker(tmp_path):
    """scout S11 (k8s-at-home charts): helm stops at a required value, the templates are read as text,
    and batch/v1beta1 from the `else` of a Capabilities check was reported as a 1.25 blocker."""
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "cron.yaml").write_text(CRONJOB + textwrap.dedent("""\
        metadata: {name: {{ .Release.Name }}-job}
        spec: {schedule: "0 * * * *", jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure,
          containers: [{name: c, image: "{{ required "image is required" .Values.image }}"}]}}}}}
        """))
    (chart / "templates" / "psp.yaml").write_text(  # decided by nothing but a value: still read
        "{{- if .Values.psp }}\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\n{{- end }}\n")
    for render in ([], ["--no-render"]):
        proc = run_kubehop("scan", "--no-config", "--target", "1.36", "--format", "json", *render, str(tmp_path))
        report = json.loads(proc.stdout)
        assert [(f["object"]["apiVersion"], f["object"]["kind"]) for f in report["findings"]] == [
            ("policy/v1beta1", "PodSecurityPolicy")], render
