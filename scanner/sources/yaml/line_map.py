"""Lines of a tool's output told as lines of the file a person edits.

An object read from generated text (helm's stream, a kustomize build) has nodes whose marks are lines
of that text; a finding must name a line of the template or file the object came from, inside that
object. `aligned` lines the object's output up with its source document: where the source document
is YAML, by key path (kustomize sorts keys, so the order of the text is lost, not the paths; a list
item by its `name` where it has one, as patches merge them); else, and for lines whose path the
source lacks, by text (difflib on the lines with indentation, list dashes and quotes set aside, then
keys alone in the gaps between matched runs). An output line with no counterpart (a value a helper
or values.yaml wrote) takes the source line of the nearest aligned line above it, so it never leaves
the object. `fixed` is for objects with no file
of their own in the tree (a downloaded chart, a release Secret): every node is at one line.
"""

from __future__ import annotations

import functools
import re
from difflib import SequenceMatcher
from typing import Any, Callable, Protocol, Sequence

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import per_scan
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

# (line, column) of a node in the output, 1-based -> (line, column) in the source file, or
# (line, column, file) where another file sets it (a chart's values.yaml: sources/helm/values_lines.py).
LineMap = Callable[[int, int], "tuple[int, int] | tuple[int, int, str]"]
Place = tuple[str, int, int]  # (file, line, column), 1-based


class ValuesLookup(Protocol):
    """Where the values files of a template set a line it renders (sources/helm/values_lines.py)."""

    def in_gap(self, gap: Sequence[str], above: Sequence[str], key_path: tuple, value: str | None) -> Place | None:
        """For an output line no template line holds: `gap`, the template lines between its aligned
        neighbours; `above`, the template's lines before them."""

    def printed(self, template_line: str, value: str) -> Place | None:
        """For an output line aligned with `template_line`: where its whole value is set, if there."""

_SEPARATOR = re.compile(r"^---(?:\s|$)")
_KEY = re.compile(r"^([^\s:{}\[\]\"'#][^:{}]*?|\"[^\"]*\"|'[^']*'):(?:\s|$)")


def fixed(line: int, column: int) -> LineMap:
    return lambda _line, _column: (line, column)


def aligned(output: Sequence[str], first: int, last: int, path: str, anchor: int,
            values: ValuesLookup | None = None) -> LineMap:
    """Map lines `first`..`last` (1-based) of `output` onto the document of `path` holding line
    `anchor` (the object's apiVersion line there); with `values` (a chart template's values files), a
    line the template prints from them onto the line of values.yaml that sets it. Computed on first
    use: most objects have no finding."""
    if anchor < 1:
        return fixed(max(anchor, 0), 0)

    @functools.cache
    def table() -> tuple[list[int], list[str], dict[int, tuple[int, Place]]]:
        source = _lines(path)
        begin, end = _document(source, anchor)
        lines = [output[i] for i in range(first - 1, min(last, len(output)))]
        mapping = _align(lines, source[begin:end])
        by_path = _by_path(lines, source[begin:end], path)
        if by_path is not None:
            mapping = [found if found is not None else fallback for found, fallback in zip(by_path, mapping)]
        result, previous = [], anchor
        for found in mapping:
            previous = begin + found + 1 if found is not None else previous
            result.append(previous)
        from_values = _from_values(lines, source[begin:end], mapping, values) if values is not None else {}
        return result, source, from_values

    def where(line: int, column: int) -> tuple[int, int] | tuple[int, int, str]:
        lines, source, from_values = table()
        index = line - first
        if not 0 <= index < len(lines):
            return anchor, _indent(source, anchor) + 1
        set_in = from_values.get(index)
        if set_in is not None and column - 1 >= set_in[0]:
            file, values_line, values_column = set_in[1]
            return values_line, values_column, file
        target = lines[index]
        out_indent = _indent_of(output[line - 1]) if line - 1 < len(output) else 0
        return target, _indent(source, target) + 1 + max(column - 1 - out_indent, 0)

    return where


def _from_values(output: list[str], source: list[str], mapping: list[int | None],
                 values: ValuesLookup) -> dict[int, tuple[int, Place]]:
    """For each output line the values files set, (the output column from which on they do, 0-based:
    0 for a line the template does not hold, the value's for `key: {{ .Values.x }}`; where they set it)."""
    # The object's lines may run on to the separator of the next document: not the object's.
    output = output[:next((i for i, text in enumerate(output) if i and _SEPARATOR.match(text)), len(output))]
    try:
        composed, _ = compose_documents("\n".join(output), "<output>")
    except (DocumentProblem, TemplateSyntax):
        return {}
    if len(composed) != 1:
        return {}
    # For each output line, the source lines of the nearest aligned output lines above and below it.
    above, below, last = [-1] * len(mapping), [len(source)] * len(mapping), -1
    for i, found_at in enumerate(mapping):
        above[i], last = last, found_at if found_at is not None else last
    last = len(source)
    for i in range(len(mapping) - 1, -1, -1):
        below[i], last = last, mapping[i] if mapping[i] is not None else last
    found: dict[int, tuple[int, Place]] = {}
    for line, (key_path, value, value_column) in _line_values(composed[0]).items():
        if not 0 <= line < len(mapping):
            continue
        if mapping[line] is None:
            start, stop = above[line] + 1, max(below[line], above[line] + 1)
            place, column = values.in_gap(source[start:stop], source[:start], key_path, value), 0
        else:
            place = values.printed(source[mapping[line]], value) if value is not None else None
            column = value_column
        if place is not None:
            found[line] = (column, place)
    return found


def _line_values(root: Any) -> dict[int, tuple[tuple, str | None, int]]:
    """For each 0-based line that starts a key or a list item: its key path (list items by index, or by
    name where named), its scalar value (None for a block) and the value's column."""
    found: dict[int, tuple[tuple, str | None, int]] = {}
    stack, seen = [((), root)], set()
    while stack:
        where, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        entries = []
        if isinstance(node, MappingNode):
            entries = [(where + (k.value,), k, v) for k, v in node.value if isinstance(k, ScalarNode)]
        elif isinstance(node, SequenceNode):
            entries = [(where + (_item_step(i, item),), item, item) for i, item in enumerate(node.value)]
        for path, start, value in entries:
            scalar = value.value if isinstance(value, ScalarNode) else None
            line = start.start_mark.line
            if line not in found or start is not value:  # a key before the list item it shares a line with
                found[line] = (path, scalar, value.start_mark.column)
            if not isinstance(value, ScalarNode):
                stack.append((path, value))
    return found


def _item_step(index: int, item: Any) -> Any:
    name = next((v.value for k, v in item.value if isinstance(k, ScalarNode) and k.value == "name"
                 and isinstance(v, ScalarNode)), None) if isinstance(item, MappingNode) else None
    return ("name", name) if name is not None else index


@per_scan.cache(maxsize=1024)
def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().split("\n")
    except OSError:
        return []


def _document(lines: list[str], anchor: int) -> tuple[int, int]:
    """0-based [begin, end) of the `---`-separated document holding 1-based line `anchor`."""
    begin = min(anchor, len(lines)) - 1
    while begin > 0 and not _SEPARATOR.match(lines[begin - 1]):
        begin -= 1
    end = min(anchor, len(lines))
    while end < len(lines) and not _SEPARATOR.match(lines[end]):
        end += 1
    return max(begin, 0), end


def _by_path(output: list[str], source: list[str], path: str) -> list[int | None] | None:
    """For each output line, the index of the source line with the same key path; None where the
    source has none, and no list at all when the source document is no YAML (a template)."""
    try:
        composed = [compose_documents("\n".join(lines), path)[0] for lines in (output, source)]
    except (DocumentProblem, TemplateSyntax):
        return None
    if not all(len(nodes) == 1 for nodes in composed):
        return None
    in_source: dict[tuple, int] = {}
    for key, line in _paths(composed[1][0]):
        in_source.setdefault(key, line)
    mapping: list[int | None] = [None] * len(output)
    # A key before the list item it shares a line with (`- image: web:1` is the key image's line).
    for key, line in sorted(_paths(composed[0][0]), key=lambda found: not isinstance(found[0][-1], str)):
        if 0 <= line < len(mapping) and mapping[line] is None:
            mapping[line] = in_source.get(key)
    return mapping


def _paths(root: Any):
    """(key path, 0-based line) of every mapping key and list item under `root`; an aliased node is
    walked once."""
    stack, seen = [((), root)], set()
    while stack:
        where, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    yield where + (key.value,), key.start_mark.line
                    stack.append((where + (key.value,), value))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                name = next((v.value for k, v in item.value if isinstance(k, ScalarNode) and k.value == "name"
                             and isinstance(v, ScalarNode)), None) if isinstance(item, MappingNode) else None
                step = where + (("name", name) if name is not None else index,)
                yield step, item.start_mark.line
                stack.append((step, item))


def _indent(lines: list[str], line: int) -> int:
    return _indent_of(lines[line - 1]) if 0 < line <= len(lines) else 0


def _indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _normal(text: str) -> str:
    text = text.strip()
    while text.startswith("- "):
        text = text[2:].lstrip()
    return text.replace('"', "").replace("'", "")


def _comparable(text: str, unique: tuple):
    text = _normal(text)
    return unique if not text or text.startswith(("#", "{{")) else text


def _align(output: list[str], source: list[str]) -> list[int | None]:
    """For each output line, the index of its source line, or None."""
    # Blank lines, comments and template actions never match (they would tie the texts at random places).
    a = [_comparable(t, ("out", i)) for i, t in enumerate(output)]
    b = [_comparable(t, ("src", j)) for j, t in enumerate(source)]
    mapping: list[int | None] = [None] * len(a)
    done_a = done_b = 0
    for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        _keys_in_gap(a, b, done_a, block.a, done_b, block.b, mapping)
        for offset in range(block.size):
            mapping[block.a + offset] = block.b + offset
        done_a, done_b = block.a + block.size, block.b + block.size
    return mapping


def _keys_in_gap(a: list, b: list, a_from: int, a_to: int, b_from: int, b_to: int,
                 mapping: list[int | None]) -> None:
    """Between two matched runs: an output line whose key a source line writes too goes there
    (`name: web` rendered from `name: {{ .Values.name }}`), in order."""
    cursor = b_from
    for i in range(a_from, a_to):
        key = _key(a[i])
        if key is None:
            continue
        for j in range(cursor, b_to):
            if _key(b[j]) == key:
                mapping[i], cursor = j, j + 1
                break


def _key(text) -> str | None:
    if not isinstance(text, str):
        return None
    match = _KEY.match(text)
    return match.group(1) if match else None
