"""Migrate the objects of one YAML document (a `---` separated part of a file) with ruamel.yaml."""

from __future__ import annotations

from typing import Any, Iterator

from ruamel.yaml.comments import CommentedMap, TaggedScalar
from ruamel.yaml.error import YAMLError as RuamelError

from scanner.fix.engine import NotSafe, migrate, text_of
from scanner.yaml_layout import Layout, splice
from scanner.fix.migrations import Migration
from scanner.fix.result import Left
from scanner.sources.yaml.yamldoc import DocumentProblem, load_data



def rewrite_document(lines: list[str], first_line: int, path: str,
                     todo: dict[int, tuple[str, Migration]]) -> tuple[list[str] | None, int, list[Left]]:
    """The document's new lines (None: unchanged), objects migrated, and objects left.

    `todo` maps the file line of an object's apiVersion key to (its name, its migration).
    """
    text = "\n".join(lines) + "\n"
    not_safe: dict[int, str] = {}  # line -> why; the document is reloaded and migrated without it
    while True:
        try:
            layout = Layout(text)
            document = layout.load(text)
            before = layout.dump(document)
        except RuamelError as err:
            reason = f"cannot be rewritten: {_first_line(err)}; correct the YAML first"
            return None, 0, [Left(path, line, name, reason) for line, (name, _) in todo.items()]
        except (ValueError, KeyError, AttributeError, TypeError, OverflowError, RecursionError) as err:
            # ruamel's round-trip constructors raise these on values PyYAML reads as text (!!int abc,
            # a 4,301-digit integer, 2001-13-45): what the scan reads, fix still cannot rewrite.
            reason = f"cannot be rewritten: ruamel.yaml cannot load a value in it ({type(err).__name__}); edit it by hand"
            return None, 0, [Left(path, line, name, reason) for line, (name, _) in todo.items()]
        try:
            migrated = _migrate_objects(document, first_line, todo, not_safe)
            break
        except _Retry:
            continue
    left = [Left(path, line, todo[line][0], reason) for line, reason in not_safe.items()]
    # What the scan read as an object but ruamel.yaml does not (a tag it keeps on apiVersion or kind)
    # is named, not dropped.
    found = {first_line + obj.lc.key("apiVersion")[0] for obj in _objects(document)}
    left += [Left(path, line, name, _unmatched(document, line - first_line))
             for line, (name, _) in todo.items() if line not in found and line not in not_safe]
    if not migrated:
        return None, 0, left
    after = layout.dump(document)
    merged = splice(lines, before, after)
    if _data(merged) != _data(after):  # the layout-keeping splice must mean what ruamel wrote
        reason = "could not be rewritten without disturbing the file's layout; migrate it by hand"
        return None, 0, [Left(path, line, name, reason) for line, (name, _) in todo.items()]
    return merged, migrated, left


class _Retry(Exception):
    """An object turned out not safe to migrate: start again from the text, without it."""


def _migrate_objects(document: Any, first_line: int, todo: dict[int, tuple[str, Migration]],
                     not_safe: dict[int, str]) -> int:
    migrated = 0
    for obj in _objects(document):
        line = first_line + obj.lc.key("apiVersion")[0]
        if line not in todo or line in not_safe:
            continue
        migration = todo[line][1]
        try:
            migrate(obj, migration)
        except NotSafe as reason:
            not_safe[line] = f"{reason} ({migration.source})"
            raise _Retry from None
        migrated += 1
    return migrated


def _objects(node: Any) -> Iterator[CommentedMap]:
    """Kubernetes objects in a document: the document itself, or the items of a List."""
    if not (isinstance(node, CommentedMap) and text_of(node.get("apiVersion")) is not None
            and text_of(node.get("kind")) is not None):
        return
    if text_of(node["kind"]).endswith("List") and isinstance(node.get("items"), list):
        for item in node["items"]:
            yield from _objects(item)
    else:
        yield node


def _unmatched(document: Any, line: int) -> str:
    """Why the object whose apiVersion is on `line` (of the document) was not found to migrate."""
    for node in _mappings(document):
        if "apiVersion" in node and node.lc.key("apiVersion")[0] == line:
            tags = [value.tag.value for value in (node.get("apiVersion"), node.get("kind"))
                    if isinstance(value, TaggedScalar)]
            if tags:
                return f"its apiVersion or kind is tagged {tags[0]}, which fix does not rewrite; edit it by hand"
    return "cannot be rewritten: ruamel.yaml does not read its apiVersion and kind as text; edit it by hand"


def _mappings(node: Any) -> Iterator[CommentedMap]:
    if isinstance(node, CommentedMap):
        yield node
        for item in node.get("items", ()) if isinstance(node.get("items"), list) else ():
            yield from _mappings(item)


def _data(lines: list[str]) -> Any:
    try:
        return load_data("\n".join(lines), "")
    except DocumentProblem:
        return _Unreadable


class _Unreadable:
    """Compares unequal to any data."""


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]
