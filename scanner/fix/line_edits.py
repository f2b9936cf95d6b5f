"""Edits to a document's lines where libyaml's marks point (text_edits.py decides them): a span of a
line replaced, a line deleted, lines inserted; and the mappings the edits write, as the operations
left them (what ruamel.yaml's CommentedMap would hold).

Each edit writes only what reads as it is meant: one-line scalars copied as written, plain keys,
entries at the mapping's own column, a new mapping's entries indented under its key as the document
indents, a comment kept at its column as ruamel.yaml keeps it. What is not sure to is Declined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

STR_TAG = re.compile(r"(?:!!str|!<tag:yaml\.org,2002:str>)[ \t]+")
_COMMENT = re.compile(r"[ \t]+#")
_COLON = re.compile(r"[ \t]*:")


class Declined(Exception):
    """Not a shape these edits are sure of: ruamel.yaml takes the document."""


def position(mark: Any, lines: list[str], first: int) -> tuple[int, int]:
    """(line of `lines`, column) of a mark of the file whose line `first` is lines[0]."""
    line = mark.line - first
    if not (0 <= line < len(lines) and mark.column <= len(lines[line])):
        raise Declined
    return line, mark.column


@dataclass(slots=True)
class Entry:
    key: str
    value: Any  # a Node of the document, or a Tree or New the migration makes
    source: ScalarNode | None = None  # the key node it was read from (None: added by the migration)


@dataclass(slots=True)
class New:
    """A scalar the migration adds: its text, and the value it reads as."""
    text: str
    data: Any


@dataclass(slots=True)
class Tree:
    """A mapping the migration makes (`service` under an Ingress backend)."""
    entries: list[Entry] = field(default_factory=list)
    host: ScalarNode | None = None  # the key whose line it takes: the entry whose move made it

    def find(self, key: str) -> Entry | None:
        return next((entry for entry in self.entries if entry.key == key), None)


class MappingModel:
    """A mapping node of the document as the operations change it (what ruamel's CommentedMap
    would hold), rendered into edits at the end."""

    def __init__(self, node: MappingNode):
        self.node = node
        self.entries = [Entry(key.value, value, key) for key, value in node.value]
        if not all(isinstance(key, ScalarNode) for key, _ in node.value) or \
                len({entry.key for entry in self.entries}) < len(self.entries):
            raise Declined  # which of two keys a reader takes, ruamel.yaml and libyaml may not agree

    def find(self, key: str) -> Entry | None:
        return next((entry for entry in self.entries if entry.key == key), None)


class LineEdits:
    """Edits to a document's lines: spans replaced, lines deleted, lines inserted before a line."""

    def __init__(self, lines: list[str], first: int):
        self.lines, self.first = lines, first
        self.spans: dict[int, list[tuple[int, int, str, int | None]]] = {}  # line -> (start, end, text, comment column)
        self.deleted: set[int] = set()
        self.inserted: dict[int, list[str]] = {}
        self.rendered: set[int] = set()  # the mapping nodes written again

    def replace(self, line: int, start: int, end: int, text: str) -> None:
        """Replace columns start..end of `line`; a comment after them stays at its column (or one
        space after the new text), as ruamel.yaml keeps it; trailing blanks go, as it writes none."""
        rest = self.lines[line][end:]
        comment = _COMMENT.match(rest)
        column = None
        if comment:
            column = end = end + comment.end() - 1
        elif not rest.strip():
            end = len(self.lines[line])
        self.spans.setdefault(line, []).append((start, end, text, column))

    def replace_scalar(self, node: Any, value: str) -> None:
        """A one-line plain or quoted scalar's value, its `!!str` tag kept."""
        line, start = position(node.start_mark, self.lines, self.first)
        if not isinstance(node, ScalarNode) or node.end_mark.line != node.start_mark.line:
            raise Declined
        end = node.end_mark.column
        written = self.lines[line][start:end]
        tag = STR_TAG.match(written)
        start += tag.end() if tag else 0
        quote = node.style or ""
        if quote not in ("", "'", '"') or self.lines[line][start:end] != quote + node.value + quote:
            raise Declined
        self.replace(line, start, end, quote + value + quote)

    def render(self, model: MappingModel, step: int) -> None:
        if model.node.flow_style:
            self._render_flow(model)
        else:
            self._render_block(model, step)

    def _render_flow(self, model: MappingModel) -> None:
        """A one-line flow mapping, written again as ruamel.yaml writes one: `{key: value, ...}`."""
        node = model.node
        line, start = position(node.start_mark, self.lines, self.first)
        if node.end_mark.line != node.start_mark.line:
            raise Declined
        self.replace(line, start, node.end_mark.column, self._flow(model.entries, line))

    def _flow(self, entries: list[Entry], line: int) -> str:
        parts = []
        for entry in entries:
            renamed = entry.source is None or entry.source.value != entry.key
            key = entry.key if renamed else self._text(entry.source, line)
            if isinstance(entry.value, Tree):
                value = self._flow(entry.value.entries, line)
            else:
                value = entry.value.text if isinstance(entry.value, New) else self._text(entry.value, line)
            parts.append(f"{key}: {value}")
        return "{" + ", ".join(parts) + "}"

    def _text(self, node: Node, line: int) -> str:
        """The text of a node that is on `line` only, as written."""
        if node.start_mark.line - self.first != line or node.end_mark.line != node.start_mark.line:
            raise Declined
        return self.lines[line][node.start_mark.column:node.end_mark.column]

    def _render_block(self, model: MappingModel, step: int) -> None:
        pairs = model.node.value
        kept = {id(entry.source): entry for entry in model.entries if entry.source is not None}
        hosts = {id(entry.value.host): entry for entry in model.entries if isinstance(entry.value, Tree)}
        column = pairs[0][0].start_mark.column
        order: list[tuple[int, int, str]] = []  # (line, 0: inserted before it / 1: on it, key) in the new text
        for index, (key, value) in enumerate(pairs):
            line = key.start_mark.line - self.first
            entry = kept.get(id(key))
            if entry is not None:
                if entry.key != key.value:
                    self._rename(key, value, entry.key)
                order.append((line, 1, entry.key))
                continue
            if self._one_line(pairs, index, model.node) and not self._ends_its_tree(model, index):
                raise Declined  # comments or blank lines after it would move away from it
            host = hosts.get(id(key))
            if host is not None:  # the new mapping takes the line: `serviceName: a` -> `service:` `  name: a` ...
                text = "\n".join(self._block(host, column, step))
                self.spans.setdefault(line, []).append((column, len(self.lines[line]), text[column:], None))
                order.append((line, 1, host.key))
            elif self.lines[line][:key.start_mark.column].strip():
                raise Declined  # a `- ` the line cannot lose
            else:
                self.deleted.add(line)
        for position, entry in enumerate(model.entries):
            if entry.source is not None or (isinstance(entry.value, Tree) and entry.value.host is not None):
                continue
            following = next((e for e in model.entries[position + 1:] if e.source is not None), None)
            line = following.source.start_mark.line - self.first if following else self._end_line(model.node)
            line = self._after_blanks(model, following, line)
            self.inserted.setdefault(line, []).extend(self._block(entry, column, step))
            order.append((line, 0, entry.key))
        # Where the text puts the keys must be where the model has them.
        if [key for _, _, key in sorted(order, key=lambda o: o[:2])] != [e.key for e in model.entries]:
            raise Declined

    def _block(self, entry: Entry, column: int, step: int) -> list[str]:
        """A new block mapping entry at `column`: its lines."""
        if isinstance(entry.value, Tree):
            return [" " * column + f"{entry.key}:"] + [
                line for child in entry.value.entries for line in self._block(child, column + step, step)]
        if isinstance(entry.value, New):
            return [" " * column + f"{entry.key}: {entry.value.text}"]
        source = entry.value.start_mark.line - self.first
        text = " " * column + f"{entry.key}: {self._text(entry.value, source)}"
        rest = self.lines[source][entry.value.end_mark.column:]
        comment = _COMMENT.match(rest)
        if comment:  # at its column, as ruamel.yaml keeps it; one space after the text at least
            hash_column = entry.value.end_mark.column + comment.end() - 1
            text += " " * max(1, hash_column - len(text)) + rest[comment.end() - 1:]
        return [text]

    def _after_blanks(self, model: MappingModel, following: Entry | None, line: int) -> int:
        """Where an entry goes that is added before `line` when comment or blank lines come before it:
        as ruamel.yaml puts it, after them when they follow a scalar or a comment (they go with it),
        before them when they follow a flow collection."""
        if self.lines[line - 1].strip() and not self.lines[line - 1].lstrip().startswith("#"):
            return line
        keys = [key for key, _ in model.node.value]
        index = keys.index(following.source) - 1 if following else len(keys) - 1
        if index < 0 or not any(e.source is keys[index] for e in model.entries):
            raise Declined  # no entry of the text before them, or it moved
        value = model.node.value[index][1]
        if value.start_mark.line != value.end_mark.line or value.start_mark.line != keys[index].start_mark.line:
            raise Declined
        if isinstance(value, ScalarNode) and (value.style or "") in ("", "'", '"') or \
                _COMMENT.match(self.lines[value.end_mark.line - self.first][value.end_mark.column:]):
            return line
        if isinstance(value, (MappingNode, SequenceNode)) and value.flow_style:
            return value.end_mark.line - self.first + 1
        raise Declined

    def _rename(self, key: ScalarNode, value: Node, name: str) -> None:
        line, start = position(key.start_mark, self.lines, self.first)
        if key.style or key.end_mark.line != key.start_mark.line:  # libyaml's plain style is ''
            raise Declined
        end = key.end_mark.column
        if id(value) in self.rendered and value.start_mark.line == key.start_mark.line:  # a flow mapping written
            # again: it keeps the comment's column
            through = end
        elif value.start_mark.line == key.start_mark.line:  # `key: value  # comment`: the comment keeps its column
            through = value.end_mark.column if value.end_mark.line == key.end_mark.line else end
        else:  # `key:  # comment`
            colon = _COLON.match(self.lines[line], end)
            through = colon.end() if colon else end
        self.replace(line, start, through, name + self.lines[line][end:through])

    def _one_line(self, pairs: list, index: int, node: MappingNode) -> bool:
        """Declined unless the entry is on one line: a one-line scalar, then a comment at most. True
        when comment or blank lines follow it (the last entry only)."""
        key, value = pairs[index]
        line = key.start_mark.line - self.first
        last = index + 1 == len(pairs)
        following = self._end_line(node) if last else pairs[index + 1][0].start_mark.line - self.first
        if not (isinstance(value, ScalarNode) and (value.style or "") in ("", "'", '"')
                and value.start_mark.line == value.end_mark.line == key.start_mark.line
                and (following == line + 1 or last and following > line)):
            raise Declined
        rest = self.lines[line][value.end_mark.column:]
        if rest.strip() and not _COMMENT.match(rest):
            raise Declined
        return following > line + 1

    def _ends_its_tree(self, model: MappingModel, index: int) -> bool:
        """Whether the moved entry `index` (the last) is the last line of the new mapping it went into,
        and that mapping's lines come right before the lines after the entry. ruamel.yaml keeps the
        comment and blank lines after a value with it, here they stay where they are: the same text."""
        key = model.node.value[index][0]
        for entry in model.entries:
            tree = entry.value
            if not isinstance(tree, Tree) or tree.host is None:
                continue
            last = tree.entries[-1] if tree.entries else None
            while last is not None and isinstance(last.value, Tree):
                last = last.value.entries[-1] if last.value.entries else None
            if last is not None and last.source is key:
                host = [k for k, _ in model.node.value].index(tree.host)
                between = model.node.value[host + 1:index]
                return all(not any(e.source is k or isinstance(e.value, Tree) and e.value.host is k
                                   for e in model.entries) for k, _ in between)
        return False

    def _end_line(self, node: Node) -> int:
        """The line after a block mapping's last: where what is added at its end goes."""
        line, column = node.end_mark.line - self.first, node.end_mark.column
        if line >= len(self.lines):
            return len(self.lines)
        return line if not self.lines[line][:column].strip(" -") else line + 1

    def applied(self) -> tuple[list[str], list[tuple[int, int, int, int]]]:
        """The new lines, and where they differ: blocks of (first, last + 1) old lines, then new."""
        out: list[str] = []
        changes: list[tuple[int, int, int, int]] = []

        def changed(old: int, old_end: int, new: list[str]) -> None:
            if changes and changes[-1][1] == old and changes[-1][3] == len(out):
                changes[-1] = (changes[-1][0], old_end, changes[-1][2], len(out) + len(new))
            else:
                changes.append((old, old_end, len(out), len(out) + len(new)))
            out.extend(new)

        for index, line in enumerate(self.lines):
            if index in self.inserted:
                changed(index, index, self.inserted[index])
            spans = sorted(self.spans.get(index, ()))
            if index in self.deleted:
                if spans:
                    raise Declined
                changed(index, index + 1, [])
                continue
            if not spans:
                out.append(line)
                continue
            done, position = "", 0
            for start, end, text, column in spans:
                if start < position:
                    raise Declined  # overlapping edits
                done += line[position:start] + text
                if column is not None:
                    done += " " * max(1, column - len(done.rsplit("\n", 1)[-1]))
                position = end
            new = (done + line[position:]).split("\n")
            if new == [line]:
                out.append(line)
            else:
                changed(index, index + 1, new)
        if len(self.lines) in self.inserted:
            changed(len(self.lines), len(self.lines), self.inserted[len(self.lines)])
        return out, changes
