"""The report's JSON text is json.dumps's, byte for byte (scanner.report.json_text)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.report import json_text

_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text()
_KEYS = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
_DOCUMENTS = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(document=_DOCUMENTS, indent=st.sampled_from([None, 0, 2, 4]), ensure_ascii=st.booleans())
def test_the_text_is_json_dumps_text(document, indent, ensure_ascii):
    assert json_text.dumps(document, indent=indent, ensure_ascii=ensure_ascii) == \
        json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)


@pytest.mark.parametrize("document", [
    {"a": [1, {"b": []}, {}], "c": "\u00e9\ud800\x00", 3: math.inf, None: -math.inf, 1.5: math.nan},
    [[], [[]], [{}], "", 0, -0.0, 10**30, True, False, None],
    "just a string",
])
def test_edge_documents(document):
    for ensure_ascii in (True, False):
        assert json_text.dumps(document, indent=2, ensure_ascii=ensure_ascii) == \
            json.dumps(document, indent=2, ensure_ascii=ensure_ascii)


@pytest.mark.parametrize("document", [{"a": {1, 2}}, {(1, 2): "tuple key"}, [object()]])
def test_what_json_cannot_write_fails_as_json_dumps_fails(document):
    with pytest.raises(TypeError) as ours:
        json_text.dumps(document)
    with pytest.raises(TypeError) as theirs:
        json.dumps(document, indent=2, ensure_ascii=True)
    assert str(ours.value) == str(theirs.value)
