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
from typing import Any, Callable, Sequence

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import per_scan
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

# (line, column) of a node in the output, 1-based -> (line, column) in the source file.
LineMap = Callable[[int, int], "tuple[int, int]"]

_SEPARATOR = re.compile(r"^---(?:\s|$)")
_KEY = re.compile(r"^([^\s:{}\[\]\"'#][^:{}]*?|\"[^\"]*\"|'[^']*'):(?:\s|$)")


def fixed(line: int, column: int) -> LineMap:
    return lambda _line, _column: (line, column)


def aligned(output: Sequence[str], first: int, last: int, path: str, anchor: int) -> LineMap:
    """Map lines `first`..`last` (1-based) of `output` onto the document of `path` holding line
    `anchor` (the object's apiVersion line there). Computed on first use: most objects have no finding."""
    if anchor < 1:
        return fixed(max(anchor, 0), 0)

    @functools.cache
    def table() -> tuple[list[int], list[str]]:
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
        return result, source

    def where(line: int, column: int) -> tuple[int, int]:
        lines, source = table()
        index = line - first
        if not 0 <= index < len(lines):
            return anchor, _indent(source, anchor) + 1
        target = lines[index]
        out_indent = _indent_of(output[line - 1]) if line - 1 < len(output) else 0
        return target, _indent(source, target) + 1 + max(column - 1 - out_indent, 0)

    return where


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
