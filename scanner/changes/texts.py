"""The files of a change set as they will be: read once, edited value by value, each edit checked.

An edit rewrites one scalar where it stands (scanner.changes.scalar_edit) and is kept only if the
file still parses and the node at that place now holds the new value (and held the old one): a
change set never writes a file that reads otherwise than it says.
"""

from __future__ import annotations

import os
from typing import Callable

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.changes.model import Edit, FileChange
from scanner.changes.scalar_edit import NotEditable, replace_scalar
from scanner.containment import inside
from scanner.sources.files.walk import read_file

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Texts:
    """The tree's files a change set touches, under `root` (a real path): nothing outside is edited."""

    def __init__(self, root: str):
        self.root = root
        self.original: dict[str, str] = {}
        self.current: dict[str, str] = {}
        self.changes: dict[str, list[str]] = {}
        self.added: dict[str, str] = {}  # new files: path -> text

    def text(self, path: str) -> str:
        """The file as the change set has it so far; NotEditable when it cannot be edited at all."""
        if path in self.current:
            return self.current[path]
        if not inside(path, self.root):
            raise NotEditable("it is outside the scanned tree")
        if os.path.islink(path):
            raise NotEditable("it is a symbolic link")
        text, problem = read_file(path)
        if text is None:
            raise NotEditable(problem.message if problem else "it cannot be read")
        self.original[path] = self.current[path] = text
        return text

    def edit(self, path: str, line: int, column: int, change: Callable[[str], str | None], what: str) -> Edit:
        """Set the scalar at `line`:`column` to change(its value); NotEditable when it cannot be."""
        text = self.text(path)
        old = _scalar_at(text, line, column)
        if old is None:
            raise NotEditable(f"no value starts at line {line}, column {column}")
        new = change(old)
        if new is None:
            raise NotEditable(f"its value {old!r} does not hold the version where kubehop read it")
        edited = replace_scalar(text, line, column, old, new)
        if _scalar_at(edited, line, column) != new:
            raise NotEditable("the file would not read back with the new value")
        self.current[path] = edited
        return Edit(path, line, old, new, what)

    def replace(self, path: str, text: str, change: str) -> None:
        """A whole new text for a file (what the fix engine or the orders writer made of it)."""
        self.text(path)
        self.current[path] = text
        self.note(path, change)

    def add(self, path: str, text: str, change: str) -> None:
        if os.path.lexists(path) or not inside(os.path.dirname(os.path.abspath(path)), self.root):
            raise NotEditable("a file is already there" if os.path.lexists(path) else "it is outside the scanned tree")
        self.added[path] = text
        self.note(path, change)

    def note(self, path: str, change: str) -> None:
        notes = self.changes.setdefault(path, [])
        if change not in notes:
            notes.append(change)

    def files(self) -> list[FileChange]:
        changed = [FileChange(p, self.original[p], self.current[p], self.changes.get(p, []), _has_bom(p))
                   for p in sorted(self.current) if self.current[p] != self.original[p]]
        return changed + [FileChange(p, None, t, self.changes.get(p, [])) for p, t in sorted(self.added.items())]


def _scalar_at(text: str, line: int, column: int) -> str | None:
    """The value of the scalar node that starts at `line`:`column` (from 1); None when none does, or the
    text does not parse."""
    try:
        roots = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError:
        return None
    stack, seen = [r for r in roots if r is not None], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: its node is walked once (and a recursive one ends)
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if (node.start_mark.line, node.start_mark.column) == (line - 1, column - 1):
                return node.value
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return None


def _has_bom(path: str) -> bool:
    try:  # non-blocking, as read_file opens it
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(descriptor, 3) == b"\xef\xbb\xbf"
    except OSError:
        return False
    finally:
        os.close(descriptor)
