"""Migrate the objects of one YAML document (a `---` separated part of a file)."""

from __future__ import annotations

from typing import Any, Iterator

import yaml
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError as RuamelError

from scanner.fix.engine import NotSafe, migrate
from scanner.fix.layout import dump, round_trip, splice
from scanner.fix.plan import Planner
from scanner.fix.result import Left
from scanner.model import Diagnostic

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def rewrite_document(lines: list[str], first_line: int, path: str,
                     planner: Planner) -> tuple[list[str] | None, int, list[Left], list[Diagnostic]]:
    """The document's new lines (None: unchanged), objects migrated, objects left, problems."""
    text = "\n".join(lines) + "\n"
    not_safe: dict[int, str] = {}  # object index -> why; the document is reloaded without it
    while True:
        try:
            yaml_rt = round_trip(text)
            document = yaml_rt.load(text)
        except RuamelError as err:
            return None, 0, [], [Diagnostic(path, f"not rewritten: invalid YAML ({_first_line(err)})", first_line)]
        before = dump(yaml_rt, document)
        try:
            migrated, left = _migrate_objects(document, first_line, path, planner, not_safe)
            break
        except _Retry:
            continue
    if not migrated:
        return None, 0, left, []
    after = dump(yaml_rt, document)
    merged = splice(lines, before, after)
    if _data(merged) != _data(after):  # the layout-keeping splice must mean what ruamel wrote
        return None, 0, left + [Left(path, first_line, "document", "could not rewrite it without "
                                     "disturbing its layout; migrate by hand")], []
    return merged, migrated, left, []


class _Retry(Exception):
    pass


def _migrate_objects(document: Any, first_line: int, path: str, planner: Planner,
                     not_safe: dict[int, str]) -> tuple[int, list[Left]]:
    migrated, left = 0, []
    for index, obj in enumerate(_objects(document)):
        decision = planner.decide(obj["apiVersion"], obj["kind"])
        where = first_line + obj.lc.line
        if decision is None:
            continue
        if isinstance(decision, str) or index in not_safe:
            left.append(Left(path, where, _name(obj), not_safe.get(index) or decision))
            continue
        try:
            migrate(obj, decision)
        except NotSafe as reason:
            not_safe[index] = f"{reason} ({decision.source})"
            raise _Retry from None
        migrated += 1
    return migrated, left


def _objects(node: Any) -> Iterator[CommentedMap]:
    """Kubernetes objects in a document: the document itself, or the items of a List."""
    if not (isinstance(node, CommentedMap) and isinstance(node.get("apiVersion"), str)
            and isinstance(node.get("kind"), str)):
        return
    if node["kind"].endswith("List") and isinstance(node.get("items"), list):
        for item in node["items"]:
            yield from _objects(item)
    else:
        yield node


def _name(obj: CommentedMap) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{obj['kind']} {name or '<unnamed>'}"


def _data(lines: list[str]) -> Any:
    try:
        return yaml.load("\n".join(lines), Loader=_Loader)
    except yaml.YAMLError:
        return _Unreadable


class _Unreadable:
    """Compares unequal to any data."""


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]
