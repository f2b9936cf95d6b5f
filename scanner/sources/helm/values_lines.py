"""Where a chart's values files set what a template prints: the line a person edits for it.

A template that prints a value (`provisioner: {{ .Values.sc.provisioner }}`) or a whole subtree of
values (`{{ .Values.gp2.spec | toYaml }}`) renders lines its own text does not hold; a finding about
such a value names the values.yaml line that sets it. sources/yaml/line_map.py asks here for each
rendered line the template lines around it reference `.Values.<path>` from, with the line's key path
in the object and its value: a values file whose node at <path>, followed by the longest tail of that
key path, holds the same value (or, for a key that opens a block, a block) is the answer. The chart's
own values.yaml is read, then each --values file (helm merges them in that order; the last that sets
the key wins). A value a release's inline values set (a Flux HelmRelease's) has no file here: the
template line stays the answer, as it does for a template of a subchart (its values nest under the
parent's), a value a helper computes, and any value that is not what the values files hold.
"""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import per_scan
from scanner.sources.files.walk import read_file
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

# `.Values.a.b` (or `$.Values.a.b`): the path a template reads
_REFERENCE = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)")
# `{{- with .Values.a.b }}`: what a bare `toYaml .` below it prints
_WITH = re.compile(r"\{\{-?\s*with\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)\s*-?\}\}")
_BARE_DOT = re.compile(r"toYaml\s+\.(?:\s|\||\)|-?\}\})|\{\{-?\s*\.\s*\|\s*toYaml")
# `key: {{ .Values.a.b }}` (quoted, or piped through quote): a line whose whole value is one value
_WHOLE_VALUE = re.compile(r"^\s*(?:-\s+)?[^\s:{][^:{]*:\s+[\"']?\{\{-?\s*\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)"
                          r"(?:\s*\|\s*quote)?\s*-?\}\}[\"']?\s*(?:#.*)?$")

Path = tuple  # keys (str), list indices (int) or ("name", value) for a list item named so
Place = tuple[str, int, int]  # (file, line, column), 1-based


class ValuesLines:
    """The values files of one template of a chart, and where they set a value."""

    def __init__(self, chart_dir: str, template: str, values_files: Sequence[str] = (),
                 inline: Sequence[str] = ()):
        own = os.path.join(chart_dir, "templates", "")
        self.files = [os.path.join(chart_dir, "values.yaml"), *values_files] \
            if os.path.abspath(template).startswith(os.path.abspath(own)) else []
        self.inline = inline  # texts helm applies after the files, whose lines no file holds
        self._gaps: dict[tuple[int, int], list[Path]] = {}  # the references of each gap asked about

    def in_gap(self, gap: Sequence[str], above: Sequence[str], key_path: Path, value: str | None) -> Place | None:
        """A rendered line no template line holds, printed by the template lines `gap` (`above`: those before)."""
        if not self.files:
            return None
        references = self._gaps.get((len(above), len(gap)))  # one object's gaps: told apart by where they are
        if references is None:
            references = self._gaps[(len(above), len(gap))] = references_in(gap, above)
        return self.place(references, key_path, value)

    def printed(self, template_line: str, value: str) -> Place | None:
        """A rendered line aligned with `template_line`, which may print its whole value from the values."""
        reference = whole_value(template_line) if self.files else None
        return self.place([reference], (), value) if reference is not None else None

    def place(self, references: Sequence[Path], key_path: Path, value: str | None) -> Place | None:
        """Where a values file sets the rendered line at `key_path` (its scalar `value`, or None for a
        key that opens a block), read from one of `references`; None when no file is seen to."""
        if not self.files:
            return None
        best: tuple[int, Place] | None = None
        for reference in references:
            for start in range(len(key_path) + 1):
                tail = key_path[start:]
                if best is not None and len(tail) <= best[0]:
                    break
                found = self._set_at(reference + tail, value)
                if found is not None:
                    best = (len(tail), found)
                    break
        return best[1] if best else None

    def _set_at(self, path: Path, value: str | None) -> Place | None:
        setter = None
        for file in self.files:
            node, key = _at(_document(file), path)
            if node is not None:
                setter = (file, node, key)
        if setter is None or any(_sets(text, path) for text in self.inline):
            return None
        file, node, key = setter
        if (value is None) == isinstance(node, ScalarNode) or (value is not None and node.value != value):
            return None
        mark = (key or node).start_mark
        return file, mark.line + 1, mark.column + 1


def references_in(lines: Sequence[str], above: Sequence[str] = ()) -> list[Path]:
    """The `.Values` paths `lines` read, in order; with a bare `toYaml .`, the `with` of `above` it."""
    found: list[Path] = []
    for line in lines:
        found += [tuple(m.group(1)[1:].split(".")) for m in _REFERENCE.finditer(line)]
        if _BARE_DOT.search(line):
            enclosing = next((m for text in reversed(above) for m in [_WITH.search(text)] if m), None)
            if enclosing is not None:
                found.append(tuple(enclosing.group(1)[1:].split(".")))
    return list(dict.fromkeys(found))


def whole_value(line: str) -> Path | None:
    """The `.Values` path a template line prints as its key's whole value, if it does."""
    match = _WHOLE_VALUE.match(line)
    return tuple(match.group(1)[1:].split(".")) if match else None


@per_scan.cache(maxsize=64)
def _document(path: str) -> Any:
    text, problem = read_file(path)
    return _composed(text, path) if problem is None and text else None


@per_scan.cache(maxsize=64)
def _composed(text: str, path: str = "<values>") -> Any:
    """The one document of a values text, composed as every file kubehop reads is (depth, aliases
    bounded); None when it is not one readable document."""
    try:
        nodes, _ = compose_documents(text, path)
    except (DocumentProblem, TemplateSyntax, yaml.YAMLError):
        return None
    return nodes[0] if len(nodes) == 1 else None


def _at(root: Any, path: Path) -> tuple[Any, Any]:
    """The node at `path` under `root` and the key node that holds it (None for a list item)."""
    node, key = root, None
    for step in path:
        if isinstance(node, MappingNode) and isinstance(step, str):
            entry = next(((k, v) for k, v in node.value if isinstance(k, ScalarNode) and k.value == step), None)
            if entry is None:
                return None, None
            key, node = entry
        elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            key, node = None, node.value[step]
        elif isinstance(node, SequenceNode) and isinstance(step, tuple):
            node = next((item for item in node.value if isinstance(item, MappingNode) and any(
                isinstance(k, ScalarNode) and k.value == "name" and isinstance(v, ScalarNode) and v.value == step[1]
                for k, v in item.value)), None)
            key = None
            if node is None:
                return None, None
        else:
            return None, None
    return node, key


def _sets(text: str, path: Path) -> bool:
    """Does an inline values text set `path` (or could it: a text that cannot be read might)?"""
    node = _composed(text)
    if node is None:
        return bool(text.strip())
    for depth in range(1, len(path) + 1):
        found, _ = _at(node, path[:depth])
        if found is None:
            return False
        if isinstance(found, ScalarNode):  # a value where the path goes on: it replaces the whole subtree
            return True
    return True
