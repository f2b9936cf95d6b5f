"""Reading composed YAML nodes: the value under a key, the node a person looks at, plain data.

Nodes come from libyaml's composer (sources/yaml/yamldoc.py) and keep their line and column; what is
here needs nothing else of kubehop, so the model can build an object's body on demand without
importing the readers.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

STD_TAG = "tag:yaml.org,2002:"
_scalar_constructor = yaml.constructor.SafeConstructor()


def mapping_get(node: Any, key: str) -> Any:
    """The value node under `key` in a mapping node (the last one, as Kubernetes reads it), or None."""
    found = None
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if k.value == key and k.__class__ is ScalarNode:  # the value first: most keys differ
                found = v
    return found


def value_at(node: Any, *keys: str) -> Any:
    """The value node under nested keys (`value_at(node, "spec", "chart")`), or None."""
    for key in keys:
        node = mapping_get(node, key)
    return node


def image_values(root: Any) -> list[ScalarNode]:
    """The non-empty scalar values under an `image` key anywhere in `root` (containers, init containers,
    a chart's values), in the order of one walk. The component pins and the client tools both read an
    object's images in turn: the last root's are remembered, while it is alive."""
    if _images_of[0] is not None and _images_of[0]() is root:
        return _images_of[1]
    found: list[ScalarNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not isinstance(value, ScalarNode):
                    stack.append(value)
                elif value.value and isinstance(key, ScalarNode) and key.value == "image":
                    found.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    _images_of[:] = [weakref.ref(root), found] if root is not None else [None, found]
    return found


_images_of: list[Any] = [None, []]


def sequence_items(node: Any) -> list[Any]:
    """A sequence node's items; none for any other node."""
    return list(node.value) if isinstance(node, SequenceNode) else []


def key_node(node: Any, key: str) -> Any:
    """The key node itself (its mark is the line a person looks at)."""
    if isinstance(node, MappingNode):
        for k, _ in reversed(node.value):
            if isinstance(k, ScalarNode) and k.value == key:
                return k
    return None


def locate(node: Any, path: Iterable[str | int]) -> Any:
    """The node a person looks at for `path`: the key of a mapping entry, or a sequence item.

    Stops at the deepest node found when the path leaves the tree (a merged or aliased key).
    """
    found = node
    for step in path:
        if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            node = found = node.value[step]
        elif isinstance(node, MappingNode) and key_node(node, str(step)) is not None:
            found, node = key_node(node, str(step)), mapping_get(node, str(step))
        else:
            break
    return found


def scalar(node: Any) -> str | None:
    return node.value if isinstance(node, ScalarNode) and node.tag != STD_TAG + "null" else None


# --- Python objects, on demand ---

_SCALARS = {
    STD_TAG + "str": lambda n: n.value,
    STD_TAG + "null": lambda n: None,
    STD_TAG + "bool": _scalar_constructor.construct_yaml_bool,
    STD_TAG + "int": _scalar_constructor.construct_yaml_int,
    STD_TAG + "float": _scalar_constructor.construct_yaml_float,
    # Kubernetes reads timestamps and binary as strings (JSON has neither).
    STD_TAG + "timestamp": lambda n: n.value,
    STD_TAG + "binary": lambda n: n.value,
}


def construct(node: Any, _memo: dict | None = None) -> Any:
    """Plain Python data (dict, list, str, int...) for a composed node.

    Aliased nodes become the same object, so a document is never expanded;
    depth was bounded by `_inspect` before any node gets here.
    """
    memo = {} if _memo is None else _memo
    if id(node) in memo:
        return memo[id(node)]
    if isinstance(node, ScalarNode):
        convert = _SCALARS.get(node.tag)
        try:
            value = convert(node) if convert else node.value
        except (ValueError, KeyError, IndexError, yaml.YAMLError):  # !!int abc, !!bool maybe, !!int '': as written
            value = node.value
        return value
    if isinstance(node, SequenceNode):
        result: Any = []
        memo[id(node)] = result
        result.extend(construct(item, memo) for item in node.value)
        return result
    result = {}
    memo[id(node)] = result
    merged: dict = {}
    for key_node_, value_node in node.value:
        if key_node_.tag == STD_TAG + "merge":
            for source in (value_node.value if isinstance(value_node, SequenceNode) else [value_node]):
                if isinstance(source, MappingNode):
                    merged = {**construct(source, memo), **merged}
            continue
        key = construct(key_node_, memo)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            key = str(key)
        result[key] = construct(value_node, memo)
    for key, value in merged.items():
        result.setdefault(key, value)
    return result
