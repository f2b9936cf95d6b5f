"""Migrate a document by editing its text where libyaml's marks point, for the shapes whose edit is
plain: a scalar replaced, a key renamed, one-line entries moved under new keys, a key added.

ruamel.yaml (document.py) loads and writes back a whole document for any edit, some 8 ms for an
Ingress; these edits (written by line_edits.py) take a fraction of a scan's time for it. What they
are not sure of (aliases, anchors, merge keys, tags but a `!!str` on apiVersion or kind, duplicate
keys, a moved entry over several lines or followed by comments, a flow mapping over several lines,
so JSON, odd line breaks) is Declined, and ruamel.yaml takes the document.

What the edits mean is checked against the migration of the object as plain data (engine.migrate,
the code ruamel.yaml's objects go through): edits that would mean otherwise are Declined. That the
text they write reads as they mean is line_edits.py's construction and the tests' to show
(tests/test_fix_properties.py: they write what ruamel.yaml writes); reading each edited document
back would double-check it at 40% of the time these edits take.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from scanner.fix.engine import NotSafe, migrate, move_target
from scanner.yaml_layout import mapping_indent
from scanner.fix.line_edits import STR_TAG, Declined, Entry, LineEdits, MappingModel, New, Tree, position
from scanner.fix.migrations import Migration
from scanner.fix.result import Left
from scanner.nodes import STD_TAG, construct, key_node, mapping_get

_ODD_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks to libyaml, not to str.split("\n")
_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_NOT_STRINGS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}  # YAML 1.1 reads them otherwise


def rewrite_document_text(lines: list[str], first: int, root: Node, todo: dict[int, tuple[str, Migration]],
                          path: str) -> tuple[list[str] | None, int, list[Left], list[tuple[int, int, int, int]]]:
    """As document.rewrite_document, for the document `lines` (without line ends) that starts at line
    `first` (counted from 0) of its file, composed as `root`; and the blocks of lines that changed
    (LineEdits.applied), which the diff needs. Declined when it cannot."""
    text = "\n".join(lines)
    if _ODD_BREAKS.search(text):
        raise Declined
    objects = [(key_node(obj, "apiVersion").start_mark.line + 1, obj) for obj in _objects(root)]
    objects = [(line, obj) for line, obj in objects if line in todo]
    if sorted(line for line, _ in objects) != sorted(todo):
        raise Declined
    if any(mark in text for mark in ("!", "&", "*", "<<")):  # else no tag, anchor, alias or merge key can be
        _check(root, lines, first, {id(mapping_get(obj, key)) for _, obj in objects for key in ("apiVersion", "kind")})
    memo: dict[int, Any] = {}
    construct(root, memo)  # the document as data: memo[id(node)] is the dict or list of a node
    edits = LineEdits(lines, first)
    step = mapping_indent([line for line in lines if line.strip() and not line.lstrip().startswith("#")]) or 2
    migrated, left = 0, []
    for line, obj in objects:
        name, migration = todo[line]
        data = memo[id(obj)]
        try:
            migrate(data, migration)  # the reference: the edits must mean what it made of the data
        except NotSafe as reason:
            data.clear()
            data.update(construct(obj))
            left.append(Left(path, line, name, f"{reason} ({migration.source})"))
            continue
        _edit_object(edits, obj, migration, step, memo)
        migrated += 1
    if not migrated:
        return None, 0, left, []
    new, changes = edits.applied()
    return new, migrated, left, changes


def _objects(node: Node) -> Iterator[MappingNode]:
    """The Kubernetes objects of a document, as the scan reads them (sources/yaml/yamldoc.py)."""
    api_version, kind = mapping_get(node, "apiVersion"), mapping_get(node, "kind")
    if not (isinstance(api_version, ScalarNode) and isinstance(kind, ScalarNode) and api_version.value and kind.value):
        return
    items = mapping_get(node, "items")
    if kind.value.endswith("List") and isinstance(items, SequenceNode):
        for item in items.value:
            yield from _objects(item)
    else:
        yield node


def _check(root: Node, lines: list[str], first: int, may_be_str_tagged: set[int]) -> None:
    """Declined for aliases, anchors, tags (but `!!str` where allowed), merge keys, keys that are not
    scalars and duplicate keys."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise Declined  # an alias
        seen.add(id(node))
        if node.start_mark.index != node.end_mark.index:
            line, column = position(node.start_mark, lines, first)
            if lines[line][column:column + 1] in ("!", "&"):
                if id(node) not in may_be_str_tagged or not STR_TAG.match(lines[line], column):
                    raise Declined
        if isinstance(node, MappingNode):
            keys = set()
            for key, value in node.value:
                if not isinstance(key, ScalarNode) or key.tag == STD_TAG + "merge" or key.value in keys:
                    raise Declined
                keys.add(key.value)
                stack.extend((key, value))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)


def _edit_object(edits: LineEdits, obj: MappingNode, migration: Migration, step: int, memo: dict[int, Any]) -> None:
    """The edits for one object; `memo` holds the data migrated (engine.migrate) they must agree with."""
    edits.replace_scalar(mapping_get(obj, "apiVersion"), migration.new)
    models: dict[int, MappingModel] = {}
    keys: dict[int, dict[str, Node]] = {}  # the keys of the mappings looked into, read once
    for operation in migration.operations:
        kind, spec = next(iter(operation.items()))
        for node in _mappings_at(obj, spec["at"], models, keys):
            model = models.get(id(node)) or models.setdefault(id(node), MappingModel(node))
            (_move if kind == "move" else _default)(model, spec)
    if not all(_agree(model.entries, memo[id(model.node)], memo) for model in models.values()):
        raise Declined
    edits.rendered.update(models)
    for model in models.values():
        edits.render(model, step)


def _agree(entries: list[Entry], data: Any, memo: dict[int, Any]) -> bool:
    """Whether the entries a model holds are what the migration made of the mapping: the same keys,
    the same values (a value read from the document is the very object the migration moved)."""
    if not isinstance(data, dict) or len(entries) != len(data):
        return False
    for entry in entries:
        value, wanted = entry.value, data.get(entry.key, _Absent)
        if isinstance(value, Tree):
            same = _agree(value.entries, wanted, memo)
        elif isinstance(value, New):
            same = type(value.data) is type(wanted) and value.data == wanted
        elif isinstance(value, ScalarNode):
            same = wanted is not _Absent and construct(value) == wanted
        else:
            same = memo.get(id(value)) is wanted
        if not same:
            return False
    return True


class _Absent:
    """No value at a key."""


def _mappings_at(node: Node, path: str, models: dict[int, MappingModel], keys: dict[int, dict[str, Node]]) \
        -> list[MappingNode]:
    """The mapping nodes at a dotted path (`key[]`: each item of a list), through the keys as the
    operations so far left them."""
    current = [node]
    for part in path.split("."):
        key, each = part.removesuffix("[]"), part.endswith("[]")
        following = []
        for item in current:
            if not isinstance(item, MappingNode):
                continue
            model = models.get(id(item))
            if model is None:
                found = keys.get(id(item))
                if found is None:
                    found = keys[id(item)] = {k.value: v for k, v in item.value if isinstance(k, ScalarNode)}
                    if len(found) < len(item.value):
                        raise Declined  # a key that is no scalar, or twice a key: which one counts?
                value = found.get(key)
                if value is None:
                    continue
            else:
                entry = model.find(key)
                if entry is None:
                    continue
                if isinstance(entry.value, (Tree, New)):
                    raise Declined  # into what the migration made: not edited here
                value = entry.value
            if not each:
                following.append(value)
            elif isinstance(value, SequenceNode):
                following.extend(value.value)
        current = following
    return list({id(n): n for n in current if isinstance(n, MappingNode)}.values())


def _move(model: MappingModel, spec: dict) -> None:
    """engine._move on the model."""
    entry = model.find(spec["from"])
    if entry is None:
        return
    if isinstance(spec["to"], str):
        target = spec["to"]
    elif isinstance(entry.value, ScalarNode):
        value = construct(entry.value)
        if isinstance(value, str) and entry.value.tag != STD_TAG + "str":
            raise Declined  # kept as text though it is no string (a 4,301-digit integer): which type is it?
        target = move_target({spec["from"]: value}, spec)
    else:
        raise Declined
    *parents, leaf = target.split(".")
    position = model.entries.index(entry)
    model.entries.remove(entry)
    holder: MappingModel | Tree = model
    for key in parents:
        found = holder.find(key)
        if found is None:
            child = Tree(host=entry.source if holder is model else None)
            holder.entries.insert(position if holder is model else len(holder.entries), Entry(key, child))
            holder = child
        elif isinstance(found.value, Tree):
            holder = found.value
        else:
            raise Declined  # a mapping already in the text: not edited here
    if holder is model and model.find(leaf) is not None:
        raise Declined
    holder.entries.insert(position if holder is model else len(holder.entries), Entry(leaf, entry.value, entry.source))


def _default(model: MappingModel, spec: dict) -> None:
    """engine._default on the model."""
    if model.find(spec["key"]) is not None:
        return
    keys = [entry.key for entry in model.entries]
    after = spec.get("after")
    position = keys.index(after) + 1 if after in keys else len(keys)
    model.entries.insert(position, Entry(spec["key"], New(_plain_scalar(spec["value"]), spec["value"])))


def _plain_scalar(value: Any) -> str:
    """A value as a plain scalar that reads back as it; Declined for what would need quoting."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and _PLAIN_WORD.fullmatch(value) and value.lower() not in _NOT_STRINGS:
        return value
    raise Declined


