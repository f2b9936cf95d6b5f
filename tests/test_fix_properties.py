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
