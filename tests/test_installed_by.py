"""Components another project's objects install at the release a field names (components/installed_by.py):
the Flux Operator installs the Flux a FluxInstance names, and the flux-instance chart writes that
FluxInstance from its values. Found on public repos: onedr0p/home-ops, Heavybullets8/heavy-ops and
ricsanfre/pi-cluster run Flux this way, and kubehop saw no Flux in them (heavy-ops pins Flux 2.5.1,
which supports Kubernetes up to 1.32, and was told "nothing blocks 1.36")."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import write_tree
from scanner.scan import ScanOptions, scan
from scanner.versions import parse_minor

OCI_V1BETA2 = textwrap.dedent("""\
    apiVersion: source.toolkit.fluxcd.io/v1beta2
    kind: OCIRepository
    metadata: {name: podinfo, namespace: flux-system}
    spec: {url: oci://ghcr.io/stefanprodan/manifests/podinfo, ref: {tag: latest}}
    """)


def _release(values: str = "", values_from: str = "") -> str:
    text = textwrap.dedent("""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: flux-instance, namespace: flux-system}
        spec:
          chart:
            spec:
              chart: flux-instance
              version: 0.19.0
              sourceRef: {kind: HelmRepository, name: controlplane}
        """)
    if values_from:
        text += "  valuesFrom:\n" + textwrap.indent(values_from, "    ")
    if values:
        text += "  values:\n" + textwrap.indent(values, "    ")
    return text


def _flux_pins(root: Path, target: str = "1.36"):
    analysis = scan([str(root)], target=parse_minor(target), current=parse_minor("1.31"),
                    options=ScanOptions(render=False))
    return analysis, [d for d in analysis.tree.detections if d.component == "flux"]


def test_a_flux_instance_pins_the_flux_it_names_and_its_crd_versions_are_judged_against_it(tmp_path):
    instance = textwrap.dedent("""\
        apiVersion: fluxcd.controlplane.io/v1
        kind: FluxInstance
        metadata: {name: flux, namespace: flux-system}
        spec:
          distribution:
            version: "2.5.x"
            registry: ghcr.io/fluxcd
        """)
    analysis, [pin] = _flux_pins(write_tree(tmp_path, {"flux.yaml": instance + "---\n" + OCI_V1BETA2}))
    assert (pin.pin, pin.origin.line, pin.source) == ("2.5.x", 6, "field")
    assert "spec.distribution.version of FluxInstance flux-system/flux" in pin.what
    [unsupported] = [f for f in analysis.findings if f.rule_id == "component/flux/unsupported"]
    assert str(unsupported.breaks_in) == "1.33"  # Flux 2.5 supports 1.30-1.32
    [oci] = [f for f in analysis.findings if f.kind == "OCIRepository"]
    assert oci.severity == "error" and "flux 2.8" in oci.message  # the release is known: no longer "cannot tell"


def test_the_flux_instance_chart_pins_flux_at_the_value_line_of_its_release(tmp_path):
    values = "instance:\n  distribution:\n    version: 2.5.1\n"
    _, [pin] = _flux_pins(write_tree(tmp_path, {"hr.yaml": _release(values)}))
    assert (pin.pin, pin.origin.path.endswith("hr.yaml"), pin.origin.line) == ("2.5.1", True, 13)
    assert "(its values) of HelmRelease flux-system/flux-instance" in pin.what


def test_values_generated_from_a_file_pin_flux_at_that_file(tmp_path):
    root = write_tree(tmp_path, {
        "app/kustomization.yaml": "resources: [hr.yaml]\nconfigMapGenerator:\n  - name: flux-instance-values\n"
                                  "    files: [values.yaml=./helm-values.yaml]\n",
        "app/hr.yaml": _release(values_from="- {kind: ConfigMap, name: flux-instance-values}\n"),
        "app/helm-values.yaml": "---\ninstance:\n  distribution:\n    # renovate: depName=fluxcd/flux2\n"
                                "    version: 2.5.1\n",
    })
    _, [pin] = _flux_pins(root)
    assert (pin.pin, pin.origin.path.endswith("app/helm-values.yaml"), pin.origin.line) == ("2.5.1", True, 5)


def test_a_range_over_several_lines_pins_nothing_and_another_pin_stands(tmp_path):
    """The chart's default 2.x is whatever Flux 2 the operator's own release resolves it to (budimanjojo/
    home-cluster: an operator of 2025-12 with 2.x still runs Flux 2.7): no pin, and the tree's other pin of
    Flux (its bootstrap kustomization's flux2 ref) stands."""
    bootstrap = "resources:\n  - github.com/fluxcd/flux2/manifests/install?ref=v2.7.5\n"
    root = write_tree(tmp_path, {"hr.yaml": _release("instance:\n  cluster: {type: kubernetes}\n"),
                                 "bootstrap/kustomization.yaml": bootstrap})
    _, pins = _flux_pins(root)
    assert [(p.pin, p.source) for p in pins] == [("v2.7.5", "kustomize")]


def test_a_version_kubehop_cannot_read_pins_nothing(tmp_path):
    secret = ("apiVersion: v1\nkind: Secret\nmetadata: {name: flux-values, namespace: flux-system}\n"
              "stringData:\n  values.yaml: ENC[AES256_GCM,data:abc=]\nsops:\n  version: 3.8.1\n")
    substituted = write_tree(tmp_path / "a", {"hr.yaml": _release("instance:\n  distribution:\n    version: ${FLUX}\n")})
    encrypted = write_tree(tmp_path / "b", {"hr.yaml": _release(values_from="- {kind: Secret, name: flux-values}\n"),
                                        "secret.yaml": secret})
    assert _flux_pins(substituted)[1] == []
    assert _flux_pins(encrypted)[1] == []
