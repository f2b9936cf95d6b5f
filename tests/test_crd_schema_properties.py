"""Property: whatever a custom resource holds, the schema check never raises, and an unknown field
is reported at the line and column of its own key."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.checks import ScanContext
from scanner.checks.crd_schema import check
from scanner.crds import CrdIndex
from scanner.rulebook import load_rulebook
from scanner.sources.yaml.yamldoc import read_text
from scanner.versions import Minor
from tests.conftest import FIXTURES

CRD_FILE = FIXTURES / "homelab/tree/charts/homelab-autoscaler/crds/infra.homecluster.dev_nodes.yaml"
KEYS = st.sampled_from(["kubernetesNodeName", "pricing", "hourlyRate", "nodeCapacity", "cpu", "startupPodSpec",
                        "args", "powerState", "x"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="ab01.mGi -", max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20)


def _context() -> ScanContext:
    crds, _ = read_text(CRD_FILE.read_text(), str(CRD_FILE))
    return ScanContext(Minor(1, 36), load_rulebook(), crds=CrdIndex.from_manifests(crds))


CONTEXT = _context()


@settings(max_examples=300, deadline=None)
@given(spec=VALUES, version=st.sampled_from(["v1alpha1", "v2alpha1"]))
def test_schema_findings_point_at_their_key(spec, version):
    body = {"apiVersion": f"infra.homecluster.dev/{version}", "kind": "Node", "metadata": {"name": "n"},
            "spec": spec}
    text = json.dumps(body, indent=1, ensure_ascii=False)
    manifests, diagnostics = read_text(text, "cr.json")
    assert diagnostics == []
    lines = text.splitlines()
    for finding in check(manifests, CONTEXT):
        assert 1 <= finding.origin.line <= len(lines)
        if finding.rule_id == "crd/unknown-field":
            key = finding.message.split(":", 1)[0].rsplit(".", 1)[-1]
            assert lines[finding.origin.line - 1][finding.origin.column - 1:].startswith(json.dumps(key))
