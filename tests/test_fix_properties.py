"""Properties of `kubehop fix` on generated Ingresses: whatever their layout, the result is a
valid networking.k8s.io/v1 Ingress and the lines with nothing to change are kept."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.fix.document import rewrite_document
from scanner.yaml_layout import splice
from scanner.fix.migrations import load_migrations
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "fix"

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
ports = st.one_of(st.integers(1, 65535), st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True))
backends = st.fixed_dictionaries({"serviceName": names, "servicePort": ports})
paths = st.lists(st.fixed_dictionaries({"backend": backends}, optional={"path": st.just("/x")}),
                 min_size=1, max_size=3)
rules = st.lists(st.fixed_dictionaries({"http": st.fixed_dictionaries({"paths": paths})},
                                       optional={"host": st.just("a.example.com")}), max_size=3)
ingresses = st.builds(
    lambda name, spec: {"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": name},
                        "spec": spec},
    names, st.fixed_dictionaries({}, optional={"backend": backends, "rules": rules}))
styles = st.fixed_dictionaries({"indent": st.sampled_from([2, 4]), "default_flow_style": st.sampled_from([False, None]),
                                "sort_keys": st.booleans()})


def fixed(text: str) -> list[str] | None:
    lines = text.split("\n")[:-1]
    todo = {1 + lines.index("apiVersion: extensions/v1beta1"):
            ("Ingress", load_migrations()[("extensions/v1beta1", "Ingress")])}
    new, _, left = rewrite_document(lines, 1, "x.yaml", todo)
    assert left == []
    return new


@settings(max_examples=60, deadline=None)
@given(ingresses, styles)
def test_generated_ingresses_become_valid_v1(ingress, style):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    text = yaml.safe_dump(ingress, **style)
    new = fixed(text)
    result = yaml.safe_load("\n".join(new))
    kubernetes_validate.validate(result, "1.36", strict=True)
    untouched = [line for line in text.split("\n")[:-1]
                 if not any(word in line for word in ("apiVersion", "backend", "service", "path", "{", "- "))]
    assert all(line in new for line in untouched)


@given(st.lists(st.text(max_size=5), max_size=8), st.lists(st.text(max_size=5), max_size=8))
def test_splice_without_relayout_is_the_edit(before, after):
    assert splice(before, before, after) == after


# --- the text edits (scanner/fix/text_edits.py) against ruamel.yaml (scanner/fix/document.py) ------

def _decorated(text: str, comments: list[int], blanks: list[int], anywhere: bool) -> list[str]:
    """`text`'s lines with end-of-line comments (on lines that do not end with `:` unless
    `anywhere`: ruamel.yaml takes its indentation from those) and blank or comment lines after some."""
    out = []
    for index, line in enumerate(text.split("\n")[:-1]):
        if index in comments and (anywhere or not line.endswith(":")):
            line += " " * (1 + index % 5) + f"# note {index}"
        out.append(line)
        if index in blanks:
            out.append("" if index % 2 else " " * (index % 7) + "# a line of its own")
    return out


def _both(lines: list[str]):
    """(text edits' result or None where they decline, ruamel.yaml's result) for the document."""
    from scanner.fix.text_edits import Declined, rewrite_document_text
    from scanner.sources.yaml.yamldoc import read_text

    roots: list = []
    manifests, _ = read_text("\n".join(lines) + "\n", "x.yaml", roots)
    manifest, = manifests
    todo = {manifest.origin.line: ("Ingress", load_migrations()[(manifest.api_version, "Ingress")])}
    try:
        textual = rewrite_document_text(lines, 0, roots[0], todo, "x.yaml")[:3]
    except Declined:
        textual = None
    return textual, rewrite_document(lines, 1, "x.yaml", todo)


marks = st.lists(st.integers(0, 40), max_size=8)


@settings(max_examples=150, deadline=None)
@given(ingresses, styles, marks, marks)
def test_text_edits_write_what_ruamel_writes(ingress, style, comments, blanks):
    """Where both rewrite a document, the fast text edits and ruamel.yaml write the same lines."""
    lines = _decorated(yaml.safe_dump(ingress, **style), comments, blanks, anywhere=False)
    textual, ruamel = _both(lines)
    if textual is not None and ruamel[0] is not None:
        assert textual == ruamel


@settings(max_examples=150, deadline=None)
@given(ingresses, styles, marks, marks)
def test_text_edits_mean_the_migration_and_keep_the_other_lines(ingress, style, comments, blanks):
    """Comments anywhere: what the text edits write reads as the migrated object (read by PyYAML and
    migrated as plain data, apart from kubehop's reader), and every line without a key the migration
    moves is kept, in order."""
    from scanner.fix.engine import migrate

    lines = _decorated(yaml.safe_dump(ingress, **style), comments, blanks, anywhere=True)
    textual, _ = _both(lines)
    if textual is None:
        return
    new, migrated, left = textual
    expected = yaml.safe_load("\n".join(lines))
    migrate(expected, load_migrations()[("extensions/v1beta1", "Ingress")])
    assert yaml.safe_load("\n".join(new)) == expected and (migrated, left) == (1, [])
    moved = ("apiVersion", "backend", "serviceName", "servicePort", "{")
    kept = iter(new)
    assert all(any(line == other for other in kept) for line in lines if not any(key in line for key in moved))


def test_plain_ingresses_are_rewritten_by_the_text_edits(monkeypatch, tmp_path):
    """The layout most trees have (block style, comments, several documents) never needs ruamel.yaml:
    what makes fix take a large file in time linear in it, and at a scan's pace."""
    import scanner.fix
    from scanner.fix import fix
    from scanner.fix.plan import Planner
    from scanner.rulebook import load_rulebook
    from scanner.versions import Minor

    ingress = (GOLDEN / "comments" / "input" / "ingress.yaml").read_text()
    (tmp_path / "many.yaml").write_text("\n---\n".join(ingress.replace("name: shop ", f"name: shop-{i}")
                                                       for i in range(50)))

    def ruamel(*args):
        raise AssertionError("a document went to ruamel.yaml")

    monkeypatch.setattr(scanner.fix, "rewrite_document", ruamel)
    result = fix([str(tmp_path)], Planner(Minor(1, 36), None, load_rulebook()))
    assert [f.migrated for f in result.files] == [50] and result.left == []
    assert result.files[0].fixed == "\n---\n".join(
        (GOLDEN / "comments" / "expected" / "ingress.yaml").read_text().replace("name: shop ", f"name: shop-{i}")
        for i in range(50))
