"""The CRD schema validator on the Kubernetes structural-schema extensions, one rule at a time."""

from __future__ import annotations

import pytest

from scanner.openapi import CrdSchema, UnusableSchema


def _root(spec: dict, **extra) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": spec, **extra}}}


def _problems(schema: dict, spec, status_subresource: bool = False, **top) -> list[tuple]:
    body = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": spec, **top}
    return [(p.path, p.unknown_field) for p in CrdSchema(schema, status_subresource).problems(body)]


def test_a_field_the_schema_does_not_name_is_unknown_at_its_own_path():
    schema = _root({"kubernetesNodeName": {"type": "string"}})
    assert _problems(schema, {"kubernetesNodeName": "w1", "powerState": "on"}) == [(("spec", "powerState"), True)]


def test_apiversion_kind_and_any_metadata_are_always_known_at_the_root():
    schema = _root({})
    body = {"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "a", "labels": {"x": "y"}, "annotations": {"a": "b"}}, "spec": {}}
    assert CrdSchema(schema).problems(body) == []


def test_preserve_unknown_fields_keeps_a_subtree_open_but_still_checks_what_it_names():
    schema = _root({"config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                               "properties": {"replicas": {"type": "integer"}}}})
    assert _problems(schema, {"config": {"anything": {"deep": 1}}}) == []
    assert _problems(schema, {"config": {"replicas": "two"}}) == [(("spec", "config", "replicas"), False)]


def test_additional_properties_is_a_map_whose_values_are_checked():
    schema = _root({"selector": {"type": "object", "additionalProperties": {"type": "string"}}})
    assert _problems(schema, {"selector": {"tier": "edge"}}) == []
    assert _problems(schema, {"selector": {"tier": 3}}) == [(("spec", "selector", "tier"), False)]


def test_int_or_string_admits_both_and_nothing_else():
    schema = _root({"port": {"x-kubernetes-int-or-string": True}})
    assert _problems(schema, {"port": 8080}) == []
    assert _problems(schema, {"port": "http"}) == []
    assert _problems(schema, {"port": True}) == [(("spec", "port"), False)]
    assert _problems(schema, {"port": {"name": "http"}}) == [(("spec", "port"), False)]


def test_format_int_or_string_relaxes_the_declared_type():
    schema = _root({"port": {"type": "string", "format": "int-or-string"}})
    assert _problems(schema, {"port": 8080}) == []
    assert _problems(schema, {"port": [1]}) == [(("spec", "port"), False)]


def test_format_quantity_admits_numbers_and_quantity_strings_only():
    schema = _root({"memory": {"type": "string", "format": "quantity"}})
    for good in ("1.5Gi", "500m", "2", "1e3", 2):
        assert _problems(schema, {"memory": good}) == [], good
    assert _problems(schema, {"memory": "lots"}) == [(("spec", "memory"), False)]


def test_nullable_admits_null_and_a_non_nullable_null_is_pruned_not_refused():
    schema = _root({"owner": {"type": "string", "nullable": True}, "region": {"type": "string"}})
    assert _problems(schema, {"owner": None, "region": None}) == []


def test_a_pruned_null_leaves_a_required_field_missing():
    schema = _root({"region": {"type": "string"}}, required=["region"])
    assert _problems(schema, {"region": None}) == [(("spec",), False)]
    nullable = _root({"region": {"type": "string", "nullable": True}}, required=["region"])
    assert _problems(nullable, {"region": None}) == []


def test_embedded_resource_knows_type_meta_and_requires_apiversion_and_kind():
    schema = _root({"template": {"type": "object", "x-kubernetes-embedded-resource": True,
                                 "properties": {"data": {"type": "object",
                                                         "additionalProperties": {"type": "string"}}}}})
    good = {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}},
                         "data": {"a": "b"}}}
    assert _problems(schema, good) == []
    assert _problems(schema, {"template": {"data": {}}}) == [(("spec", "template"), False)] * 2
    assert _problems(schema, {"template": {"apiVersion": "v1", "kind": "ConfigMap", "extra": 1}}) == [
        (("spec", "template", "extra"), True)]


def test_status_is_not_checked_when_the_status_subresource_drops_it():
    schema = {"type": "object", "properties": {"spec": {"type": "object"},
                                               "status": {"type": "object", "properties": {}}}}
    assert _problems(schema, {}, status_subresource=True, status={"progress": "half"}) == []
    assert _problems(schema, {}, status={"progress": "half"}) == [(("status", "progress"), True)]


def test_unknown_fields_in_list_items_carry_the_item_index():
    schema = _root({"ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}}})
    assert _problems(schema, {"ports": [{"port": 1}, {"port": 2, "name": "x"}]}) == [(("spec", "ports", 1, "name"), True)]


def test_an_invalid_schema_is_reported_as_unusable_not_raised():
    with pytest.raises(UnusableSchema):
        CrdSchema({"type": "object", "properties": {"spec": {"type": "strin"}}})


@pytest.mark.parametrize("spec", [
    {"template": {"type": "object", "x-kubernetes-embedded-resource": True, "required": [{"a": 1}, "b"]}},
    {"template": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": [{"a": 1}, "b"]}},
    {"volumes": {"type": "object", "properties": ["awsElasticBlockStore", {"type": "object"}]}},
])
def test_a_schema_of_wrong_shapes_is_unusable_not_a_crash(spec):
    """Found by the fuzzer (seed 2026, case 107718): a `required` list holding a map could not be sorted."""
    with pytest.raises(UnusableSchema):
        CrdSchema(_root(spec))


def test_property_names_yaml_reads_as_numbers_are_known_fields():
    schema = _root({"8080": {"type": "string"}})
    schema["properties"]["spec"]["properties"] = {8080: {"type": "string"}, "name": {"type": "string"}}
    assert _problems(schema, {"8080": "x", "name": "y"}) == []


def test_a_pattern_python_cannot_compile_is_skipped_not_fatal():
    # RE2 accepts a (?i) flag mid-pattern; Python's re does not.
    schema = _root({"day": {"type": "string", "pattern": "^((?i)mon|tue)day$"}, "n": {"type": "integer"}})
    assert _problems(schema, {"day": "Friday", "n": "x"}) == [(("spec", "n"), False)]


def test_list_type_set_and_map_refuse_duplicates():
    schema = _root({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "properties": {"port": {"type": "integer"},
                                                             "protocol": {"type": "string", "default": "TCP"}}}},
        "free": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
    })
    assert _problems(schema, {"tags": ["a", "b"], "free": ["a", "a"],
                              "ports": [{"port": 80}, {"port": 80, "protocol": "UDP"}]}) == []
    assert _problems(schema, {"tags": ["a", "b", "a"], "ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}) == [
        (("spec", "ports", 1), False), (("spec", "tags", 2), False)]


def test_defaults_are_applied_before_validation():
    # Valid only once `type` takes its default: each oneOf branch alone would match an absent type.
    address = {"type": "object", "properties": {"type": {"type": "string", "default": "IP"}, "value": {"type": "string"}},
               "oneOf": [{"properties": {"type": {"not": {"enum": ["IP"]}}}},
                         {"properties": {"type": {"enum": ["IP"]}}}]}
    schema = _root({"address": address, "mode": {"type": "string", "default": "a", "nullable": True}},
                   required=["mode"])
    assert _problems(schema, {"address": {"value": "1.2.3.4"}}) == []
    assert _problems(schema, {"address": {"value": "1.2.3.4", "type": None}}) == []


@pytest.mark.parametrize("keys", ["name", None, [1]])
def test_a_map_list_without_a_list_of_key_names_reports_no_duplicates(keys):
    """The characters of `name` are not keys: every item would look the same."""
    ports = {"type": "array", "x-kubernetes-list-type": "map",
             "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    if keys is not None:
        ports["x-kubernetes-list-map-keys"] = keys
    assert _problems(_root({"ports": ports}), {"ports": [{"name": "a"}, {"name": "b"}]}) == []
