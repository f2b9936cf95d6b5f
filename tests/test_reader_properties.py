"""Property-based: whatever bytes arrive, the reader answers with manifests and diagnostics, never a traceback."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.checks import ScanContext, run_checks
from scanner.rulebook import load_rulebook
from scanner.sources.files.source import read_manifest_file, read_manifest_file_streamed
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


def _read(found) -> tuple:
    return ([(m.api_version, m.kind, m.name, m.namespace, m.origin) for m in found.manifests],
            sorted(found.diagnostics, key=lambda d: (d.line or 0, d.message, d.level)), found.unrendered,
            [node.start_mark.line for _, node in found.documents], found.suppressions)


# Whole documents, good and bad, for the files a scan reads a document at a time.
DOCUMENTS = st.sampled_from([
    "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web, namespace: a}\nspec: {}\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  volumes:\n  - gitRepo: {repository: x}\n",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: &x 1, b: &x 2, c: *x}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, name: d}\n",  # a key twice
    "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: !custom {a: b}\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: [p]}\n",
    "apiVersion: ${API}\nkind: Pod\nmetadata: {name: p}\n",
    "k3s_version: v1.30.2+k3s1\n", "just: values\n", "",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p\n",  # broken
    "apiVersion: v1\nkind: Pod\nmetadata: {name: {{ .Values.name }}}\n",  # a template
    "image: '{{ .Values.image }}'\n",  # template braces in a quoted string: ordinary YAML
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}  # kubehop: ignore[v1/Pod]\n",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(DOCUMENTS | st.lists(YAML_BITS | st.text(max_size=8), max_size=12).map("".join), max_size=8)
       .map("---\n".join))
def test_a_document_at_a_time_reads_what_the_whole_text_does(text):
    """The scan reads a file a document at a time (its hook sees each document's objects before the next
    is composed): the objects, problems and documents are those of the whole text read at once."""
    data = text.encode("utf-8", "surrogatepass")
    whole = read_manifest_file(ManifestFile("-"), stdin_bytes=data)
    streamed, answers = read_manifest_file_streamed(ManifestFile("-"), data, lambda part: ([], len(part.manifests)))
    assert _read(streamed) == _read(whole)
    assert sum(seen for _, seen in answers) == len(whole.manifests)
