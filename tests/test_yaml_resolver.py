"""kubehop composes YAML with its own scalar resolver (sources/yaml/yamldoc.py: PyYAML's safe resolver
without its path-resolver bookkeeping, a fifth of composing): every node must get the tag PyYAML's own
safe loader gives it, so that what a check reads as a number, a bool or null is what it was."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, SequenceNode

from conftest import FIXTURES
from scanner.sources.yaml.yamldoc import _Loader

PYYAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _tags(text: str, loader) -> list[tuple[str, str]]:
    found = []
    for root in yaml.compose_all(text, Loader=loader):
        stack = [root]
        while stack:
            node = stack.pop()
            found.append((node.tag, node.value if isinstance(node.value, str) else type(node).__name__))
            if isinstance(node, MappingNode):
                stack.extend(n for pair in node.value for n in pair)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
    return found


EDGES = ["", "~", "null", "Null", "NULL", "nulls", "true", "True", "TRUE", "yes", "No", "off", "On", "y", "n",
         "0", "-0", "+1", "0o17", "017", "0x1F", "0b101", "1_000", "190:20:30", "1.5", "-.inf", ".NaN", ".nan",
         "1e3", "1.0e+3", "6.8523015e+5", "685.230_15e+03", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
         "2002-12-14 21:59:43", "<<", "=", "v1.31", "1.31", "-", "+", ".", "'quoted'", '"1"', "é", "[]", "{}"]


def test_every_node_of_the_fixtures_gets_pyyamls_tag():
    texts = [p.read_text(errors="replace") for p in sorted(FIXTURES.rglob("*.yaml"))][:400]
    compared = 0
    for text in texts:
        try:
            expected = _tags(text, PYYAML)
        except yaml.YAMLError:
            continue
        assert _tags(text, _Loader) == expected
        compared += 1
    assert compared > 100


def test_edge_scalars_plain_and_quoted_get_pyyamls_tag():
    compared = 0
    for value in EDGES:
        for text in (f"- {value}\n", f"k: {value}\n", f"- '{value}'\n", f"[{value}]\n"):
            try:
                expected = _tags(text, PYYAML)
            except yaml.YAMLError:
                continue
            assert _tags(text, _Loader) == expected, text
            compared += 1
    text = "- !!str 1\n- !!int '1'\n- &a x\n- *a\n- {<<: {a: 1}, b: 2}\n- !custom 3\n"
    assert _tags(text, _Loader) == _tags(text, PYYAML)
    assert compared > 150


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789+-._:eExXoObB yYnNtTfF~<=aA")), max_size=12))
def test_any_plain_scalar_gets_pyyamls_tag(value):
    text = f"- {value!r}\n- k: {value}\n"
    try:
        expected = _tags(text, PYYAML)
    except yaml.YAMLError:
        return
    assert _tags(text, _Loader) == expected
