"""CRDs a chart renders as templates are learnt like any other: `helm template ... | kubehop scan -`.

helm is found as kubehop finds it (KUBEHOP_HELM, PATH, the tool cache); the test skips without it.
"""

from __future__ import annotations

import json
import subprocess

from tests.conftest import FIXTURES, run_kubehop, tool_or_skip


def _render(*values: str) -> bytes:
    helm = tool_or_skip("helm")
    return subprocess.run([helm, "template", "hub", str(FIXTURES / "cellcast-chart"), "-n", "cellcast-system",
                           *values], check=True, capture_output=True, timeout=120).stdout


def _findings(rendered: bytes) -> list[tuple]:
    report = json.loads(run_kubehop("scan", "--format", "json", "-", stdin=rendered).stdout)
    return [(f["rule"], f["severity"], f["message"].split(";")[0]) for f in report["findings"]]


def test_a_rendered_crd_gives_its_deprecation_and_schema():
    assert _findings(_render()) == [
        ("crd/deprecated-version", "warning", 'the CRD clusters.cellcast.io (<stdin>:3) deprecates this version: '
                                              '"cellcast.io/v1alpha1 is deprecated'),
        ("crd/unknown-field", "error", "spec.zone: unknown field"),
    ]


def test_without_the_crd_in_the_render_the_custom_resource_is_not_judged():
    assert _findings(_render("--set", "crds.install=false")) == []
