"""Property-based: whatever bytes arrive, the reader answers with manifests and diagnostics, never a traceback."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.checks import ScanContext, run_checks
from scanner.rulebook import load_rulebook
from scanner.sources.files.source import read_manifest_file
from scanner.sources.files.walk import ManifestFile
from scanner.versions import Minor

# Fragments that steer generated text towards YAML's tricky corners.
YAML_BITS = st.sampled_from([
    "apiVersion: ", "kind: ", "extensions/v1beta1", "Ingress", "metadata:", "  name: ", "---\n", "...\n",
    "- ", ": ", "{", "}", "[", "]", "&a ", "*a", "!Ref ", "!!binary ", "!!int ", "? ", "|\n", ">-\n", "'", '"',
    "#", "\n", "  ", "\t", "<<: *a\n", "{{ .Values.x }}", "${VAR}", "%YAML 1.1\n", "\\", "\x00", "\ufeff", "é",
    "0x1F", "1e3", "~", "null", "yes", "2001-12-14t21:59:43.10-05:00", "kind: List\nitems:\n",
])

CONTEXT = ScanContext(target=Minor(1, 36), rulebook=load_rulebook(), current=Minor(1, 20))


def exercise(data: bytes) -> None:
    result = read_manifest_file(ManifestFile("-"), stdin_bytes=data)
    for manifest in result.manifests:
        manifest.body  # building Python objects must not fail either
    run_checks(result.manifests, CONTEXT)
    for diagnostic in result.diagnostics:
        assert "\n" not in str(diagnostic)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(YAML_BITS | st.text(max_size=8), max_size=60).map("".join))
def test_yaml_like_text_never_raises(text):
    exercise(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data):
    exercise(data)
