"""API versions named inside objects (rules/references.yaml): one fixture per reference field.

A fixture marks every line where a finding must point with `# <- finding` (the reference's
apiVersion key); the test checks that the field's references are found at exactly those lines.
The Flux fixtures are scanned with flux-pin.yaml (Flux 2.5), from 1.31 to 1.36.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, kustomize_or_skip, tool_or_skip
from scanner import data
from scanner.references import REFERENCES_FILE, load_reference_fields
from scanner.scan import ScanOptions, scan
from scanner.versions import Minor, parse_minor

REFERENCE_FIXTURES = FIXTURES / "references"
FLUX_PIN = REFERENCE_FIXTURES / "flux-pin.yaml"
MARK = "# <- finding"
FIELDS = {field.id: field for field in load_reference_fields().fields}


def fixture_for(reference_id: str) -> Path:
    return REFERENCE_FIXTURES / (reference_id.removeprefix("reference/").replace("/", ".") + ".yaml")


def marked_lines(path: Path) -> list[int]:
    return [n for n, line in enumerate(path.read_text().splitlines(), 1) if line.rstrip().endswith(MARK)]


def reference_findings(paths: list[str], target: str = "1.36", current: str | None = "1.31", **options):
    result = scan(paths, target=parse_minor(target), current=parse_minor(current) if current else None,
                  options=ScanOptions(**options))
    assert not result.input_errors, result.input_errors
    return [f for f in result.findings if f.rule_id.startswith("reference/")]


def write(tmp_path: Path, text: str, name: str = "tree.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


def test_the_data_obeys_its_schema_and_every_field_has_a_fixture():
    data.validate(data.read_yaml(REPO / REFERENCES_FILE), data.schema_for(REFERENCES_FILE), REFERENCES_FILE)
    fixtures = {p.name for p in REFERENCE_FIXTURES.glob("*.yaml")} - {FLUX_PIN.name}
    assert fixtures == {fixture_for(reference_id).name for reference_id in FIELDS}


@pytest.mark.parametrize("reference_id", sorted(FIELDS))
def test_each_field_finds_exactly_the_marked_references(reference_id):
    path = fixture_for(reference_id)
    findings = reference_findings([str(path), str(FLUX_PIN)])
    assert {f.rule_id for f in findings} == {reference_id}
    assert sorted(f.origin.line for f in findings) == marked_lines(path)
    lines = path.read_text().splitlines()
    for finding in findings:
        line = lines[finding.origin.line - 1]
        assert line[finding.origin.column - 1:].startswith("apiVersion:")  # the reference's own key
        assert finding.origin.path == str(path)
        assert FIELDS[reference_id].breaks in finding.message or "deprecated" in finding.message


def test_a_removed_core_version_is_an_error_at_its_rule_minor_with_the_fix():
    path = fixture_for("reference/admissionregistration.k8s.io/ValidatingAdmissionPolicy/paramKind")
    removed, deprecated = reference_findings([str(path)])
    assert (removed.severity, removed.breaks_in, removed.kind, removed.name) == \
        ("error", Minor(1, 25), "ValidatingAdmissionPolicy", "budget-limits")
    assert removed.message.startswith("spec.paramKind names policy/v1beta1 PodDisruptionBudget, which is no longer "
                                      "served from Kubernetes 1.25: the policy cannot be configured")
    assert removed.fix == "use policy/v1" and removed.text.endswith("; use policy/v1")
    assert removed.remediation == ("set spec.paramKind.apiVersion to policy/v1",)
    assert removed.api_version == "admissionregistration.k8s.io/v1"  # the object holding the reference
    # v1 Endpoints is deprecated (1.33), not removed: a warning, naming what replaces it.
    assert deprecated.severity == "warning" and "which is deprecated since 1.33" in deprecated.message
    assert deprecated.fix == "use discovery.k8s.io/v1 EndpointSlice"
    assert deprecated.remediation == ("set spec.paramKind.apiVersion to discovery.k8s.io/v1 and spec.paramKind.kind "
                                      "to EndpointSlice",)


def test_a_group_level_reference_breaks_when_its_group_stops_serving_the_kind():
    path = fixture_for("reference/autoscaling/HorizontalPodAutoscaler/scaleTargetRef")
    web, batch = reference_findings([str(path)])
    assert (web.severity, web.breaks_in, web.name) == ("error", Minor(1, 16), "shop-web")
    assert web.message.startswith("spec.scaleTargetRef names extensions/v1beta1 Deployment; from Kubernetes 1.16 "
                                  "no version of extensions serves Deployment: the autoscaler")
    assert web.replacement == "apps/v1" and batch.replacement == "apps/v1"


def test_nothing_before_the_named_version_is_deprecated(tmp_path):
    tree = write(tmp_path, """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: endpoint-limits}
        spec:
          paramKind: {apiVersion: v1, kind: Endpoints}
          validations: [{expression: "true"}]
        """)
    assert reference_findings([tree], target="1.32", current=None) == []
    [finding] = reference_findings([tree], target="1.33", current=None)
    assert finding.severity == "warning"


def test_a_third_party_version_breaks_at_the_hop_that_moves_past_its_release():
    path = fixture_for("reference/notification.toolkit.fluxcd.io/Receiver/resources")
    [finding] = reference_findings([str(path), str(FLUX_PIN)])
    assert (finding.severity, finding.breaks_in) == ("error", Minor(1, 35))
    assert finding.message.startswith("spec.resources[0] names source.toolkit.fluxcd.io/v1beta2 GitRepository, "
                                      "which flux 2.8 no longer serves, and the hop to 1.35 needs that release: "
                                      "webhook calls no longer request its reconciliation")
    assert finding.remediation == ("set spec.resources[0].apiVersion to source.toolkit.fluxcd.io/v1",)
    # Reaching 1.34 needs Flux 2.7 only, which still serves v1beta2.
    assert reference_findings([str(path), str(FLUX_PIN)], target="1.34") == []


def test_a_version_the_pinned_release_already_dropped_is_an_error_today(tmp_path):
    pin = write(tmp_path, FLUX_PIN.read_text().replace("v2.5.1", "v2.8.0"), "pin.yaml")
    path = fixture_for("reference/notification.toolkit.fluxcd.io/Receiver/resources")
    [finding] = reference_findings([str(path), pin], target="1.35", current="1.34")
    assert (finding.severity, finding.breaks_in) == ("error", Minor(1, 34))
    assert "which the flux release the tree pins no longer serves (flux 2.8 removed it)" in finding.message


@pytest.mark.parametrize("policy, severity", [("warn", "warning"), ("block", "error"), ("ignore", None)])
def test_an_unknown_release_follows_the_unknown_policy(policy, severity):
    path = fixture_for("reference/notification.toolkit.fluxcd.io/Receiver/resources")
    found = reference_findings([str(path)], unknown=policy)  # no Flux pin
    assert [f.severity for f in found] == ([severity] if severity else [])
    if found:
        assert "kubehop cannot tell which flux release runs" in found[0].message
        assert found[0].breaks_in is None and found[0].support == "unknown"


def test_a_health_check_on_a_dropped_version_of_a_served_kind_is_fine():
    path = fixture_for("reference/kustomize.toolkit.fluxcd.io/Kustomization/healthChecks")
    found = reference_findings([str(path), str(FLUX_PIN)])
    named = {f.message.split(" names ")[1].split(",")[0].split(";")[0] for f in found}
    assert named == {"traefik.containo.us/v1alpha1 IngressRoute", "extensions/v1beta1 Deployment"}
    traefik = next(f for f in found if "traefik" in f.message)
    assert traefik.severity == "warning"  # no Traefik pin: which release runs is unknown


def test_the_same_reference_through_a_render_points_at_its_template_line(tmp_path):
    tool_or_skip("helm")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text("target: extensions/v1beta1\n")
    (chart / "templates" / "hpa.yaml").write_text(textwrap.dedent("""\
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata:
          name: {{ .Release.Name }}
        spec:
          maxReplicas: 3
          scaleTargetRef:
            name: web
            kind: Deployment
            apiVersion: {{ .Values.target }}
        """))
    [finding] = reference_findings([str(chart)], current=None)
    assert finding.origin.path.endswith("hpa.yaml") and finding.origin.line == 10
    assert finding.origin.via  # the release it was rendered for


def test_a_reference_behind_a_kustomization_is_reported_once_at_its_line(tmp_path):
    # The shape of the Flux homelabs (webhooks/github/receiver.yaml behind a kustomization that sets
    # the namespace): the file and its build are one object, one finding, at the file's line.
    kustomize_or_skip()
    app = tmp_path / "webhooks"
    app.mkdir()
    (app / "kustomization.yaml").write_text("namespace: flux-system\nresources: [receiver.yaml]\n")
    (app / "receiver.yaml").write_text(textwrap.dedent("""\
        apiVersion: notification.toolkit.fluxcd.io/v1
        kind: Receiver
        metadata:
          name: home
        spec:
          type: github
          secretRef: {name: token}
          resources:
            - kind: GitRepository
              name: defaulted
            - apiVersion: source.toolkit.fluxcd.io/v1beta2
              kind: GitRepository
              name: home
        """))
    [finding] = reference_findings([str(app), str(FLUX_PIN)])
    assert (Path(finding.origin.path).name, finding.origin.line) == ("receiver.yaml", 11)
    assert finding.breaks_in is not None
    assert finding.remediation == ("set spec.resources[1].apiVersion to source.toolkit.fluxcd.io/v1",)


def test_values_that_are_not_a_reference_are_left_alone(tmp_path):
    tree = write(tmp_path, """
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: odd}
        spec:
          scaleTargetRef: [extensions/v1beta1, Deployment]
        ---
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: odd, namespace: flux-system}
        spec:
          healthChecks:
            - {apiVersion: {nested: extensions/v1beta1}, kind: Deployment, name: a}
            - {apiVersion: extensions/v1beta1, kind: null, name: b}
            - extensions/v1beta1
        """)
    assert reference_findings([tree]) == []
