"""What a composed YAML document must pass before kubehop trusts it.

libyaml lets through what Kubernetes would not accept or a scanner must not hold: duplicate keys,
unknown tags, absurd nesting, aliases that expand a small file into millions of nodes ("billion
laughs") or into themselves. One pass over each document's tree checks them (`inspect`); the text is
looked at first for flow nesting libyaml itself would crash on (`check_flow_depth`).
"""

from __future__ import annotations

import re
from itertools import chain
from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Diagnostic
from scanner.nodes import STD_TAG
from scanner.yaml_errors import MAX_DEPTH, TOO_DEEP


# How much aliases may grow a document once expanded ("billion laughs"): nodes, and characters of
# scalar text (one long string aliased many times is as bad as many nodes). What reads a document
# whole (a JSON dump, Flux values handed to helm, kustomize) pays for every expanded copy; honest
# anchors (a backend or a values block reused) grow a document by a few hundred nodes.
MAX_ALIAS_GROWTH_NODES = 100_000
MAX_ALIAS_GROWTH_CHARS = 4 * 1024 * 1024
_CEILING = 1 << 40  # expanded sizes are counted no further (they grow exponentially)

# What the refusals above say: a file holding one is never handed to a tool (helm, kustomize),
# which would expand it without a limit (sources/hazards.py).
HAZARDS = ("nesting deeper than", "(recursive alias)", "(alias bomb)")


class DocumentProblem(Exception):
    """A document that cannot be trusted; its message is the diagnostic."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def check_flow_depth(text: str, path: str) -> None:
    # Only files with many brackets pay for the exact count.
    if text.count("[") + text.count("{") < MAX_DEPTH:
        return
    depth = 0
    for char in re.findall(r"[\[\]{}]", text):
        depth += 1 if char in "[{" else -1
        if depth > MAX_DEPTH:
            raise DocumentProblem(f"nesting deeper than {MAX_DEPTH} levels; file not parsed")


def inspect(root: Any, check_tags: bool, path: str, diagnostics: list[Diagnostic], anchors: bool = True) -> None:
    """One pass over the tree: depth, duplicate keys, unknown tags, aliases. `anchors`: may the text
    hold any (a `&`)? Without, no node can be met twice, and scalars need no visit of their own."""
    if not anchors:
        _inspect_unaliased(root, check_tags, path, diagnostics)
        return
    seen: set[int] = set()
    aliased = False
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            aliased = True
            continue
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise DocumentProblem(TOO_DEEP, node.start_mark.line + 1)
        if check_tags:
            _check_tag(node, path, diagnostics)
        if isinstance(node, MappingNode):
            pairs = node.value
            _check_keys(pairs, path, diagnostics)
            for key, value in pairs:
                stack.append((value, depth + 1))
                if not isinstance(key, ScalarNode):
                    stack.append((key, depth + 1))
        elif isinstance(node, SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    if aliased:
        _check_expansion(root)


def _inspect_unaliased(root: Any, check_tags: bool, path: str, diagnostics: list[Diagnostic]) -> None:
    """`inspect` for a tree without aliases (a tree, not a graph): the same findings, in less time (most
    nodes are scalars, checked where their parent is)."""
    stack = [(root, 1)]
    push = stack.append
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DocumentProblem(TOO_DEEP, node.start_mark.line + 1)
        if check_tags:
            _check_tag(node, path, diagnostics)
        below = depth + 1
        if isinstance(node, MappingNode):
            pairs = node.value
            size = len(pairs)
            if size == 2:  # _check_keys' first look, here: nearly every mapping has no duplicate
                if pairs[0][0].value == pairs[1][0].value:
                    _check_keys(pairs, path, diagnostics)
            elif size > 2:
                try:
                    unique = len({key.value for key, _ in pairs}) == size
                except TypeError:  # a key that is a mapping or a list
                    unique = False
                if not unique:
                    _check_keys(pairs, path, diagnostics)
            if depth < MAX_DEPTH and not check_tags:  # nearly every node: scalars need nothing of their own
                for key, value in pairs:
                    if key.__class__ is not ScalarNode:
                        push((key, below))
                    if value.__class__ is not ScalarNode:
                        push((value, below))
                continue
            children: Any = chain.from_iterable(pairs)
        elif isinstance(node, SequenceNode):
            children = node.value
            if depth < MAX_DEPTH and not check_tags:
                for child in children:
                    if child.__class__ is not ScalarNode:
                        push((child, below))
                continue
        else:
            continue
        for child in children:
            if not isinstance(child, ScalarNode):
                push((child, below))
            elif depth >= MAX_DEPTH:
                raise DocumentProblem(TOO_DEEP, child.start_mark.line + 1)
            elif check_tags:
                _check_tag(child, path, diagnostics)


def _check_tag(node: Any, path: str, diagnostics: list[Diagnostic]) -> None:
    if not node.tag.startswith(STD_TAG):
        diagnostics.append(Diagnostic(
            path, f"unknown YAML tag {node.tag}: value read as plain "
                  f"{'text' if isinstance(node, ScalarNode) else 'data'}",
            node.start_mark.line + 1, level="notice"))


def _check_keys(pairs, path: str, diagnostics: list[Diagnostic]) -> None:
    """Duplicate keys of a mapping; the set comparison first, as nearly every mapping has none."""
    if len(pairs) < 2:
        return
    try:  # a key that is a mapping or a list has an unhashable value: the loop below skips it
        if len({key.value for key, _ in pairs}) == len(pairs):
            return
    except TypeError:
        pass
    seen: set[str] = set()
    for key, _ in pairs:
        if not isinstance(key, ScalarNode) or key.value == "<<":
            continue
        if key.value in seen:
            diagnostics.append(Diagnostic(
                path, f"duplicate key {key.value!r} (Kubernetes rejects it; the last value was used)",
                key.start_mark.line + 1))
        seen.add(key.value)


def _check_expansion(root: Any) -> None:
    """Refuse a document whose aliases grow it past the limits, or that holds itself."""
    growth = alias_growth(root)
    if growth is None:
        raise DocumentProblem("an alias refers to a node that holds it (recursive alias); document skipped",
                              root.start_mark.line + 1)
    nodes, chars = growth
    if nodes > MAX_ALIAS_GROWTH_NODES or chars > MAX_ALIAS_GROWTH_CHARS:
        raise DocumentProblem(
            f"aliases expand it by more than {MAX_ALIAS_GROWTH_NODES:,} nodes or {MAX_ALIAS_GROWTH_CHARS // 1048576} "
            f"MiB of text (alias bomb); document skipped", root.start_mark.line + 1)


def alias_growth(root: Any) -> tuple[int, int] | None:
    """(nodes, scalar characters) that expanding every alias adds to the tree; None when the tree holds
    itself (an alias inside the node it names)."""
    sizes: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()  # nodes whose children are being sized: meeting one again is a cycle
    distinct_chars = 0
    # Post-order without recursion: children are sized before their parent.
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if ready:
            open_.discard(key)
            own = len(node.value) if isinstance(node, ScalarNode) else 0
            distinct_chars += own
            sizes[key] = (min(1 + sum(sizes[id(c)][0] for c in children), _CEILING),
                          min(own + sum(sizes[id(c)][1] for c in children), _CEILING))
            continue
        if key in open_:
            return None
        open_.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    nodes, chars = sizes[id(root)]
    return nodes - len(sizes), chars - distinct_chars


def _children(node: Any) -> list:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []
