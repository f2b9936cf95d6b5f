"""yamlcheck.inspect walks a tree without anchors faster (scalars checked where their parent is): it
must find exactly what the general walk finds, at the same depth limit."""

from __future__ import annotations

import pytest
import yaml

from conftest import FIXTURES
from scanner.sources.yaml.yamlcheck import MAX_DEPTH, DocumentProblem, inspect
from scanner.sources.yaml.yamldoc import _Loader


def _documents(text: str) -> list:
    loader = _Loader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        return nodes
    finally:
        loader.dispose()


def _outcome(root, anchors: bool):
    found = []
    try:
        inspect(root, True, "x.yaml", found, anchors)
    except DocumentProblem as problem:
        return "refused", str(problem)
    return "read", sorted((d.line, d.message, d.level) for d in found)


def _unanchored_fixtures():
    for path in sorted(FIXTURES.rglob("*.y*ml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "&" in text:
            continue
        try:
            documents = _documents(text)
        except yaml.YAMLError:
            continue
        yield from documents


def test_both_walks_agree_on_every_fixture():
    roots = [root for root in _unanchored_fixtures() if root is not None]
    assert len(roots) > 100
    for root in roots:
        assert _outcome(root, anchors=False) == _outcome(root, anchors=True)


def test_duplicate_keys_and_tags_deep_inside_sequences():
    text = "a:\n- b: 1\n  b: 2\n- [x, !custom y, {c: !!str 3, c: 4}]\n"
    (root,) = _documents(text)
    kind, found = _outcome(root, anchors=False)
    assert kind == "read" and found == _outcome(root, anchors=True)[1]
    assert [line for line, message, _ in found if "duplicate key 'b'" in message] == [3]
    assert any("unknown YAML tag !custom" in message for _, message, _ in found)
    assert any("duplicate key 'c'" in message for _, message, _ in found)


@pytest.mark.parametrize("leaf, extra", [("x", 0), ("[x]", 1), ("{k: x}", 1)])
def test_the_depth_limit_is_the_same(leaf, extra):
    """A document of `levels` nested sequences around `leaf`: its deepest scalar is at levels + 1 + extra."""
    for levels in range(MAX_DEPTH - 3, MAX_DEPTH + 1):
        (root,) = _documents("[" * levels + leaf + "]" * levels)
        expected = "refused" if levels + 1 + extra > MAX_DEPTH else "read"
        assert [_outcome(root, anchors)[0] for anchors in (False, True)] == [expected, expected], levels


def test_a_document_is_inspected_for_tags_and_anchors_where_its_own_text_may_hold_them():
    """`!` and `&` in one document (a script's `#!/bin/sh`, `a && b`) do not make the others of the file
    take the slower inspection; a tag or an alias bomb in another document is found as before, also
    after a byte-order mark, where the marks do not count every character."""
    from scanner.sources.yaml.yamldoc import _documents, stream_text

    script = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n  run: |\n    #!/bin/sh\n    a && b\n"
    plain = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {a: b}\n"
    tagged = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\ndata: {a: !custom b}\n"
    bomb = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + \
        "".join(f"  {k}: &{k} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                for p, k in zip("abcdef", "bcdefg"))
    text = "---\n".join([script, plain, tagged, plain, bomb])
    assert [flags for _, *flags in _documents(text)] == [[True, True], [False, False], [True, False],
                                                        [False, False], [False, True]]
    for prefix in ("", "\ufeff"):
        problems: list = []
        names = [m.name for _, found in stream_text(prefix + text, "x.yaml", problems) for m in found]
        assert names == ["s", "p", "t", "p"]  # the bomb is refused
        assert [p.line for p in problems if "unknown YAML tag" in p.message] == [17]
        assert any("alias bomb" in p.message for p in problems)
