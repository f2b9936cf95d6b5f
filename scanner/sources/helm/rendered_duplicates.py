"""Duplicate keys in what helm rendered: facts for a check (checks/duplicate_keys.py), not an unreadable input.

A template that writes a key twice (a label a helper writes too, an `{{ if }}` that adds an
`affinity:` below another) still installs: helm turns each object into JSON, which keeps one value
per key, and the API server persists the last of a duplicated field (rules/helm.yaml says which and
where that is documented). The chart is readable; what its maintainer needs is which value wins.
A duplicate key in a file a person wrote stays an input problem (yamldoc): that file is theirs to fix.
This module finds the keys; the check words the warning.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import data
from scanner.model import Diagnostic, DuplicateKey, Manifest

_DUPLICATE = "duplicate key "  # how yamldoc words the problem


@functools.cache
def _facts() -> dict:
    return data.load("rules/helm.yaml")["duplicate_keys"]


def split_duplicate_keys(manifests: list[Manifest], problems: list[Diagnostic]) -> tuple[list[DuplicateKey],
                                                                                        list[Diagnostic]]:
    """For one rendered release: each key written twice in its objects, and its other problems."""
    others = [p for p in problems if not p.message.startswith(_DUPLICATE)]
    if len(others) == len(problems):
        return [], problems
    return [_fact(manifest, *found) for manifest in manifests for found in _duplicates(manifest.node)], others


def _duplicates(root: Any) -> Iterator[tuple[str, ScalarNode, Any, ScalarNode, Any]]:
    """(path of the mapping, dropped key, its value, kept key, its value) for every duplicated key."""
    stack: list[tuple[Any, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            by_key: dict[str, list[tuple[ScalarNode, Any]]] = {}
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value != "<<":
                    by_key.setdefault(key.value, []).append((key, value))
                stack.append((value, f"{path}.{getattr(key, 'value', '?')}".lstrip(".")))
            for pairs in by_key.values():
                kept = pairs[-1] if _facts()["kept"] == "last" else pairs[0]
                for pair in pairs:
                    if pair is not kept:
                        yield path, pair[0], pair[1], kept[0], kept[1]
        elif isinstance(node, SequenceNode):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(node.value))


def _fact(manifest: Manifest, path: str, dropped_key: ScalarNode, dropped: Any, kept_key: ScalarNode,
          kept: Any) -> DuplicateKey:
    return DuplicateKey(manifest, kept_key.value, f"{path}.{kept_key.value}" if path else kept_key.value,
                        manifest.origin_at(kept_key), manifest.origin_at(dropped_key), _show(kept), _show(dropped),
                        same=isinstance(kept, ScalarNode) and _show(kept) == _show(dropped))


def _show(node: Any) -> str:
    if isinstance(node, ScalarNode):
        text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        return repr(text)
    return "a list" if isinstance(node, SequenceNode) else "a mapping"
