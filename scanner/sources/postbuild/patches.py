"""A Flux Kustomization's `postBuild` as the Kustomization that applies it patches it: homelab trees set
their children's variables there (`spec.patches` of the parent, a strategic-merge patch targeting every
`kind: Kustomization`: truxnell/home-cluster's substituteFrom, joryirving/home-ops' `CLUSTER: ${CLUSTER}`).

A patch's target is matched as kustomize matches it (group, kind, a name or namespace regex, label and
annotation selectors); its `spec.postBuild` is merged into the child's (maps key by key, a list replaced:
a Flux Kustomization has no merge keys for kustomize), in the order the patches are written. A patch
kubehop cannot read for sure (a JSON 6902 one, a selector it does not parse), or a child two parents
patch, leaves the child's variables unknown: the reason is returned, nothing is guessed.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Origin
from scanner.nodes import STD_TAG, mapping_get, scalar, value_at
from scanner.sources.files.walk import read_file
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

_GROUP = "kustomize.toolkit.fluxcd.io"
_SELECTOR = re.compile(r"^\s*(!?)([A-Za-z0-9._/-]+)\s*"  # [!]key
                       r"(?:(==|=|!=)\s*([A-Za-z0-9._-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")  # = v, in (a, b)


class Unsure(Exception):
    """What a parent's patches do to the child cannot be told."""


def patched(child: Any, parents: Sequence[tuple[Any, str]]) -> tuple[Any, dict[int, Origin]]:
    """The child Kustomization's node with its parents' patches to `spec.postBuild` applied, and where each
    scalar a patch brought is written (its parent's file); Unsure when that cannot be told. `parents`:
    (node, file) of each Kustomization that applies the child."""
    applying = [(parent, path, patch) for parent, path in parents for patch in _patches(parent) if
                _touches(patch) and _targets(mapping_get(patch, "target"), patch, child)]
    if not applying:
        return child, {}
    if len({path for _, path, _ in applying}) > 1 or len({id(parent) for parent, _, _ in applying}) > 1:
        raise Unsure("two Kustomizations that apply it patch its postBuild")
    origins: dict[int, Origin] = {}
    node = child
    for parent, path, patch in applying:
        body = _body(patch, path, origins)
        post_build = value_at(body, "spec", "postBuild")
        if post_build is not None:
            node = _merge(node, _wrap(post_build))
    return node, origins


def _patches(parent: Any) -> list[Any]:
    items = value_at(parent, "spec", "patches")
    return [item for item in items.value if isinstance(item, MappingNode)] if isinstance(items, SequenceNode) else []


def _touches(patch: Any) -> bool:
    text = scalar(mapping_get(patch, "patch")) or ""
    return "postBuild" in text


def _targets(target: Any, patch: Any, child: Any) -> bool:
    """Does the patch apply to the child (kustomize's selector; no target: the patch's own kind and name)?"""
    if target is None:
        body = _document(scalar(mapping_get(patch, "patch")) or "")
        return isinstance(body, MappingNode) and scalar(mapping_get(body, "kind")) == "Kustomization" and \
            scalar(value_at(body, "metadata", "name")) == scalar(value_at(child, "metadata", "name"))
    if not isinstance(target, MappingNode):
        raise Unsure("a patch's target is not a mapping")
    said = {scalar(k): scalar(v) for k, v in target.value}
    if said.get("kind") not in (None, "Kustomization") or said.get("group") not in (None, _GROUP):
        return False
    for key in ("name", "namespace"):
        if said.get(key) and not _regex(said[key], scalar(value_at(child, "metadata", key)) or ""):
            return False
    for key, where in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        if said.get(key) and not _selects(said[key], value_at(child, "metadata", where)):
            return False
    return True


def _regex(pattern: str, value: str) -> bool:
    """kustomize's anchored name match (Go's RE2). Python's regular expressions backtrack: a pattern with a
    group or many repeats from the tree is not run (it could take a scan's time), but left unknown."""
    if re.escape(pattern) == pattern:
        return pattern == value
    if "(" in pattern or sum(pattern.count(c) for c in "*+?{") > 3 or len(pattern) > 253:
        raise Unsure(f"a patch's target {pattern[:80]!r} is a pattern kubehop does not match")
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error as err:
        raise Unsure(f"a patch's target {pattern[:80]!r} is no regular expression") from err


def _selects(selector: str, labels: Any) -> bool:
    """A Kubernetes label selector (equality and set-based terms) against a labels node."""
    have = {scalar(k): scalar(v) for k, v in labels.value} if isinstance(labels, MappingNode) else {}
    for term in _terms(selector):
        found = _SELECTOR.match(term)
        if found is None:
            raise Unsure(f"a patch's selector {selector!r} is not one kubehop reads")
        negated, key, operator, value, set_operator, values = found.groups()
        listed = {v.strip() for v in values.split(",")} if values is not None else set()
        if negated and (operator or set_operator):
            raise Unsure(f"a patch's selector {selector!r} is not one kubehop reads")
        if negated:
            matched = key not in have
        elif operator in ("=", "=="):
            matched = have.get(key) == value
        elif operator == "!=":
            matched = have.get(key) != value
        elif set_operator == "in":
            matched = key in have and have[key] in listed
        elif set_operator == "notin":
            matched = key not in have or have[key] not in listed
        else:
            matched = key in have
        if not matched:
            return False
    return True


def _terms(selector: str) -> list[str]:
    """The comma-separated terms of a selector, commas inside `( )` kept."""
    terms, depth, start = [], 0, 0
    for i, c in enumerate(selector):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return [t for t in terms if t.strip()]


def _document(text: str) -> Any:
    try:
        nodes, _ = compose_documents(text, "patch")
    except (DocumentProblem, TemplateSyntax, yaml.YAMLError):
        return None
    return nodes[0] if len(nodes) == 1 else None


def _body(patch: Any, path: str, origins: dict[int, Origin]) -> Any:
    """The patch's document, each of its nodes placed in the parent's file (`origins`)."""
    text_node = mapping_get(patch, "patch")
    body = _document(scalar(text_node) or "")
    if not isinstance(body, MappingNode):
        raise Unsure("a patch to its postBuild is not a strategic-merge patch kubehop reads")
    first, indent = _placing(text_node, path)
    stack = [body]
    while stack:
        node = stack.pop()
        mark = node.start_mark
        origins[id(node)] = Origin(path, first + mark.line, indent + mark.column + 1) if first else \
            Origin(path, text_node.start_mark.line + 1, text_node.start_mark.column + 1)
        if isinstance(node, MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return body


def _placing(text_node: ScalarNode, path: str) -> tuple[int, int]:
    """The file line of a block scalar's first line of text and its indentation; (0, 0) for another style."""
    if text_node.style not in ("|", ">"):
        return 0, 0
    text, problem = read_file(path)
    lines = text.split("\n") if problem is None else []
    for number in range(text_node.start_mark.line + 1, min(len(lines), text_node.end_mark.line + 1)):
        content = lines[number]
        if content.strip():
            return number + 1, len(content) - len(content.lstrip(" "))
    return 0, 0


def _wrap(post_build: Any) -> MappingNode:
    """`{spec: {postBuild: ...}}`: the one part of the patch the variables depend on."""
    def key(name: str) -> ScalarNode:
        return ScalarNode(STD_TAG + "str", name, post_build.start_mark, post_build.end_mark)
    spec = MappingNode(STD_TAG + "map", [(key("postBuild"), post_build)], post_build.start_mark, post_build.end_mark)
    return MappingNode(STD_TAG + "map", [(key("spec"), spec)], post_build.start_mark, post_build.end_mark)


def _merge(base: Any, patch: Any) -> Any:
    """`patch` merged into `base`, as a JSON merge patch: maps key by key, anything else replaced, null deletes."""
    if not isinstance(base, MappingNode) or not isinstance(patch, MappingNode):
        return patch
    pairs = list(base.value)
    for key, value in patch.value:
        at = next((i for i, (k, _) in enumerate(pairs) if isinstance(k, ScalarNode) and k.value == key.value), None)
        if isinstance(value, ScalarNode) and value.tag == STD_TAG + "null":
            if at is not None:
                del pairs[at]
        elif at is None:
            pairs.append((key, value))
        else:
            pairs[at] = (pairs[at][0], _merge(pairs[at][1], value))
    return MappingNode(base.tag, pairs, base.start_mark, base.end_mark, base.flow_style)
