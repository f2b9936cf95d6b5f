"""Check a custom resource against its CRD version's openAPIV3Schema, as the API server reads it.

OpenAPI 3.0 schemas follow JSON Schema draft 4; on top of it the API server applies the
structural-schema rules of apiextensions.k8s.io/v1, which this module reproduces:

- a field that no `properties` names is unknown (pruned, or refused under strict field
  validation) unless `x-kubernetes-preserve-unknown-fields` or `additionalProperties` allows it;
- `apiVersion`, `kind` and `metadata` are always known at the root and in an
  `x-kubernetes-embedded-resource`, which must also name its apiVersion and kind;
- metadata is ObjectMeta, whatever the schema says below it;
- `default` values are filled in before anything is checked;
- `nullable: true` admits null; a null in a non-nullable field is pruned (or defaulted), not refused;
- `x-kubernetes-int-or-string` (and format int-or-string) admit an integer or a string;
  format quantity admits a number or a quantity string;
- `x-kubernetes-list-type` set and map lists hold no duplicate (map: by their list-map-keys);
- with the status subresource, status in a manifest is dropped on create, so not checked.

CEL rules (`x-kubernetes-validations`) are not evaluated.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

import jsonschema
from jsonschema import Draft4Validator, ValidationError
from jsonschema.exceptions import SchemaError

_OBJECT_META_FIELDS = ("apiVersion", "kind", "metadata")
# The keyword this module adds to a closed object: the names it knows.
_KNOWN = "x-kubehop-known-fields"
# resource.Quantity: a signed decimal, then a binary or decimal SI suffix or an exponent.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


class UnusableSchema(Exception):
    """The openAPIV3Schema is not a schema jsonschema can apply."""


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[str | int, ...]  # down to the offending key or item
    message: str
    unknown_field: bool = False
    value: Any = None  # the value found wrong (None for a missing or unknown field)
    # It only says something is missing (a required field, too few items): a partial object, such as
    # a kustomize patch, may lack it rightly.
    incomplete: bool = False


class CrdSchema:
    """The validator of one CRD version, built once and applied to each of its custom resources."""

    def __init__(self, schema: dict, status_subresource: bool = False):
        structural = _structural(schema, root=True, status_subresource=status_subresource)
        try:
            _Validator.check_schema(structural)
        except SchemaError as err:
            where = "/".join(map(str, err.path)) or "(top)"
            value = repr(err.instance)
            raise UnusableSchema(f"{where}: {value if len(value) < 60 else value[:57] + '...'} "
                                 f"is not a valid schema value") from None
        self._validator = _Validator(structural)

    def problems(self, body: Any) -> list[SchemaProblem]:
        defaulted = _with_defaults(copy.deepcopy(body), self._validator.schema)
        problems = [_problem(error) for error in self._validator.iter_errors(defaulted)]
        return sorted(problems, key=lambda p: [str(s) for s in p.path])


def _problem(error: ValidationError) -> SchemaProblem:
    path = tuple(error.absolute_path)
    if error.validator == _KNOWN:
        return SchemaProblem(path, "unknown field", unknown_field=True)
    return SchemaProblem(path, error.message, value=None if error.validator == "required" else error.instance,
                         incomplete=_incomplete(error))


_COMPLETENESS = frozenset({"required", "minProperties", "minItems", "dependencies"})


def _incomplete(error: ValidationError) -> bool:
    """Is the error only about what is missing? For anyOf/oneOf: some branch fails only so."""
    if error.validator in _COMPLETENESS:
        return True
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return False
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else None, []).append(sub)
    return any(all(_incomplete(sub) for sub in errors) for errors in branches.values())


def _with_defaults(value: Any, schema: Any) -> Any:
    """`value` with the schema's defaults filled in, as the API server does before it validates."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name, sub in properties.items():
            missing = name not in value or _pruned_null(value[name], sub)
            if missing and isinstance(sub, dict) and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                _with_defaults(value[name], sub)
        if isinstance(schema.get("additionalProperties"), dict):
            for name in value.keys() - properties.keys():
                _with_defaults(value[name], schema["additionalProperties"])
    elif isinstance(value, list):
        for item in value:
            _with_defaults(item, schema.get("items"))
    return value


# --- the schema as the API server reads it ---------------------------------------------------------

def _structural(schema: Any, root: bool = False, status_subresource: bool = False) -> Any:
    """A copy of `schema` with the structural rules made explicit for jsonschema."""
    if not isinstance(schema, dict):
        return schema
    result = dict(schema)
    if not _compiles(schema.get("pattern")):
        del result["pattern"]  # RE2 syntax Python lacks (e.g. a (?i) mid-pattern): not checked
    if schema.get("x-kubernetes-int-or-string") and "type" not in schema:
        result["type"] = ["integer", "string"]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        result["properties"] = {name: _structural(sub) for name, sub in properties.items()}
    if isinstance(schema.get("items"), dict):
        result["items"] = _structural(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        result["additionalProperties"] = _structural(schema["additionalProperties"])
    if root or schema.get("x-kubernetes-embedded-resource"):
        _allow_object_meta(result, properties)
        if not root:
            required = result.get("required", [])
            if isinstance(required, list) and all(isinstance(name, str) for name in required):
                result["required"] = sorted({*required, "apiVersion", "kind"})  # else check_schema refuses it
    if root and status_subresource:
        result.setdefault("properties", {})["status"] = {}
    if _is_closed(schema) and isinstance(result.get("properties", {}), dict):  # else check_schema refuses it
        result[_KNOWN] = sorted(map(str, result.get("properties", {})))
    return result


def _compiles(pattern: Any) -> bool:
    if not isinstance(pattern, str):
        return pattern is None
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _allow_object_meta(result: dict, properties: Any) -> None:
    given = properties if isinstance(properties, dict) else {}
    known = result.setdefault("properties", {})
    if not isinstance(known, dict):
        return  # no schema the API server takes: check_schema refuses it
    for name in _OBJECT_META_FIELDS:
        # metadata is ObjectMeta: the schema may narrow name/generateName, never close it.
        known[name] = given.get(name, {}) if name == "metadata" else known.get(name, {"type": "string"})


def _is_closed(schema: dict) -> bool:
    """Does the API server prune fields this object schema does not name?"""
    is_object = schema.get("type") == "object" or "properties" in schema
    return (is_object and not schema.get("x-kubernetes-preserve-unknown-fields")
            and schema.get("additionalProperties") in (None, False))


# --- the keywords whose meaning Kubernetes changes ---------------------------------------------------

def _known_fields(validator, known: list[str], instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for name in instance:
        if str(name) not in known:
            yield ValidationError(f"unknown field {name!r}", path=[name])


def _type(validator, types: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if instance is None and schema.get("nullable"):
        return
    if _int_or_string(schema) and isinstance(instance, (int, str)) and not isinstance(instance, bool):
        return
    yield from Draft4Validator.VALIDATORS["type"](validator, types, instance, schema)


def _properties(validator, properties: dict, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for name, sub in properties.items():
        if name in instance and not _pruned_null(instance[name], sub):
            yield from validator.descend(instance[name], sub, path=name, schema_path=name)


def _additional_properties(validator, extra: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, dict) or not isinstance(extra, dict):
        return
    for name, value in instance.items():
        if name not in schema.get("properties", {}) and not _pruned_null(value, extra):
            yield from validator.descend(value, extra, path=name)


def _required(validator, required: list, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties", {})
    for name in required:
        if name not in instance or _pruned_null(instance[name], properties.get(name, {})):
            yield ValidationError(f"{name!r} is a required property")


def _format(validator, fmt: str, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if fmt == "quantity" and isinstance(instance, str) and not _QUANTITY.match(instance):
        yield ValidationError(f"{instance!r} is not a quantity (e.g. 500m, 1.5Gi, 2)")


def _list_type(validator, list_type: str, instance: Any, schema: dict) -> Iterator[ValidationError]:
    """set: no value twice; map: no two items with the same x-kubernetes-list-map-keys (defaults applied)."""
    if not isinstance(instance, list) or list_type not in ("set", "map"):
        return
    keys = schema.get("x-kubernetes-list-map-keys")
    if list_type == "map" and not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        return  # a map list without a list of key names: the API server refuses the CRD itself
    seen: set[str] = set()
    for index, item in enumerate(instance):
        key = _identity(item if list_type == "set" else _map_key(item, schema))
        if key in seen:
            yield ValidationError(f"duplicate {'value' if list_type == 'set' else 'entry'} {key} "
                                  f"in a list of type {list_type}", path=[index])
        seen.add(key)


def _map_key(item: Any, schema: dict) -> list:
    items = schema.get("items")
    properties = items.get("properties", {}) if isinstance(items, dict) else {}
    if not isinstance(item, dict):
        return [item]
    return [item.get(name, properties.get(name, {}).get("default"))
            for name in schema["x-kubernetes-list-map-keys"]]


def _identity(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:  # keys of mixed types cannot be sorted: their text still tells them apart
        return repr(value)


def _int_or_string(schema: dict) -> bool:
    return bool(schema.get("x-kubernetes-int-or-string")) or schema.get("format") in ("int-or-string", "quantity")


def _pruned_null(value: Any, schema: Any) -> bool:
    return value is None and not (isinstance(schema, dict) and schema.get("nullable"))


_Validator = jsonschema.validators.extend(Draft4Validator, {
    _KNOWN: _known_fields,
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional_properties,
    "required": _required,
    "format": _format,
    "x-kubernetes-list-type": _list_type,
})
