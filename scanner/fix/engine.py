"""Apply a migration's operations to one object loaded by ruamel.yaml (round-trip types), or to
plain data (what the edits of text_edits.py must read back as).

Keys keep their place and their comments: a moved key's value lands where the key was.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator

from ruamel.yaml.comments import CommentedMap, CommentedOrderedMap, CommentedSet, TaggedScalar, merge_attrib
from ruamel.yaml.scalarstring import ScalarString

from scanner.fix.migrations import Migration


class NotSafe(Exception):
    """The object cannot be migrated mechanically; the message says why."""


STR_TAG = "tag:yaml.org,2002:str"


def migrate(obj: dict, migration: Migration) -> None:
    """Rewrite `obj` in place; NotSafe may leave it half done (the caller starts again without it)."""
    if isinstance(obj, CommentedMap):  # plain data holds nothing unusual
        _refuse_unusual(obj)
    for unsafe in migration.unsafe:
        if any(_plain(value) == unsafe.equals for value in _values_at(obj, unsafe.path)):
            raise NotSafe(f"{unsafe.path}: {unsafe.reason}")
    old = obj["apiVersion"]
    if isinstance(old, TaggedScalar):  # `!!str extensions/v1beta1`: the tag and the style stay
        obj["apiVersion"] = TaggedScalar(migration.new, style=old.style, tag=old.tag)
    else:
        obj["apiVersion"] = type(old)(migration.new) if isinstance(old, ScalarString) else migration.new
    for operation in migration.operations:
        kind, spec = next(iter(operation.items()))
        for mapping in mappings_at(obj, spec["at"]):
            (_move if kind == "move" else _default)(mapping, spec)


def text_of(value: Any) -> str | None:
    """A string as ruamel.yaml read it, `!!str` tagged or not; None for anything else."""
    if isinstance(value, TaggedScalar):
        return value.value if value.tag.value == STR_TAG and isinstance(value.value, str) else None
    return value if isinstance(value, str) else None


def _refuse_unusual(obj: dict) -> None:
    """Merge keys hide where a key comes from, and sets, ordered maps and tagged values have no
    place a migration can move them to: an object holding any is left to a person. A `!!str` on
    the apiVersion or the kind says what they are anyway."""
    stack, seen = [obj], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (CommentedSet, CommentedOrderedMap, TaggedScalar)):
            tag = node.tag.value if isinstance(node, TaggedScalar) else "!!set" if isinstance(node, CommentedSet) \
                else "!!omap"
            raise NotSafe(f"it holds a {tag} value, which cannot be rewritten mechanically; edit it by hand")
        if isinstance(node, CommentedMap):
            if getattr(node, merge_attrib, None):
                raise NotSafe("a mapping in it uses a YAML merge key (<<), which hides where its keys come from; "
                              "edit it by hand")
            stack.extend(value for key, value in node.items()
                         if node is not obj or key not in ("apiVersion", "kind") or text_of(value) is None)
        elif isinstance(node, list):
            stack.extend(node)


@functools.cache  # a few paths, looked up for every object
def _segments(path: str) -> tuple[tuple[str, bool], ...]:
    return tuple((part.removesuffix("[]"), part.endswith("[]")) for part in path.split("."))


def _values_at(node: Any, path: str) -> Iterator[Any]:
    """Every value at a dotted path; `key[]` steps into each item of a list."""
    current = [node]
    for key, each in _segments(path):
        following = []
        for item in current:
            if not (isinstance(item, dict) and key in item):
                continue
            if not each:
                following.append(item[key])
            elif isinstance(item[key], list):
                following.extend(item[key])
        current = following
    yield from current


def mappings_at(node: Any, path: str) -> list[dict]:
    seen: set[int] = set()  # an aliased mapping is edited once
    found = []
    for value in _values_at(node, path):
        if isinstance(value, dict) and id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    return found


def move_target(mapping: dict, spec: dict) -> str | None:
    """Where `from` goes for this value; raises NotSafe when it cannot be told or the key is merged in."""
    if spec["from"] not in mapping:
        return None
    to = spec["to"]
    if isinstance(to, str):
        return to
    kind = _type_name(mapping[spec["from"]])
    if kind not in to:
        raise NotSafe(f"{spec['from']}: a {kind} value has no place in the new version")
    return to[kind]


def _move(mapping: dict, spec: dict) -> None:
    target = move_target(mapping, spec)
    if target is None:
        return
    position = list(mapping).index(spec["from"])
    comment = mapping.ca.items.pop(spec["from"], None) if isinstance(mapping, CommentedMap) else None
    value = mapping.pop(spec["from"])
    *parents, leaf = target.split(".")
    if next(_values_at(mapping, target), None) is not None:
        raise NotSafe(f"both {spec['from']} and {target} are set; keep one by hand")
    holder = mapping
    for key in parents:
        if key not in holder:
            child = type(mapping)()
            _insert(holder, position if holder is mapping else len(holder), key, child)
            holder = child
        elif isinstance(holder[key], dict):
            holder = holder[key]
        else:
            raise NotSafe(f"{key} is not a mapping; cannot put {spec['from']} under it")
    _insert(holder, position if holder is mapping else len(holder), leaf, value)
    if comment is not None:
        holder.ca.items[leaf] = comment


def _insert(mapping: dict, position: int, key: str, value: Any) -> None:
    if not isinstance(mapping, CommentedMap):  # plain data: only what it holds matters
        mapping[key] = value
        return
    if mapping.fa.flow_style() and isinstance(value, CommentedMap):
        value.fa.set_flow_style()  # block content cannot sit inside a flow mapping
    mapping.insert(position, key, value)


def _default(mapping: dict, spec: dict) -> None:
    if spec["key"] in mapping:
        return
    keys = list(mapping)
    after = spec.get("after")
    _insert(mapping, keys.index(after) + 1 if after in keys else len(keys), spec["key"], spec["value"])


def _type_name(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                       (dict, "mapping"), (list, "list")):
        if isinstance(value, kind):
            return name
    return "null"


def _plain(value: Any) -> Any:
    """ruamel's round-trip types compared as plain data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
