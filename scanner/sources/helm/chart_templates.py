"""Helm chart templates read as text: where an apiVersion line is, and what a template could emit.

Rendered output knows which template an object came from (helm's post-renderer annotation), not
the line; the line is found here, in the template a person edits. Without helm, the same reading lists every
apiVersion/kind pair a template can produce, both branches of an `{{ if }}` switch included, but for
the branches the cluster's own Capabilities decide (template_branches.py).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from scanner import per_scan
from scanner.model import Manifest, Origin
from scanner.sources.yaml.line_map import fixed
from scanner.sources.helm.template_branches import Capabilities, decided_branches
from scanner.sources.yaml.yamldoc import read_text

_DOC_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)
_API_VERSION_LINE = re.compile(r"^([ \t]*)apiVersion:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_KIND_LINE = re.compile(r"^([ \t]*)kind:[ \t]*[\"']?([A-Za-z0-9]+)[\"']?[ \t]*$", re.MULTILINE)
_LITERAL = re.compile(r"^[\"']?([a-z0-9.-]+/)?v[0-9]+((alpha|beta)[0-9]+)?[\"']?$")
# An apiVersion written anywhere in a template action or helper, e.g. {{ print "apps/v1" }}.
_QUOTED_API_VERSION = re.compile(r"\"((?:[a-z0-9-]+\.)*[a-z0-9-]+/v[0-9]+(?:(?:alpha|beta)[0-9]+)?|v1)\"")
_INCLUDE = re.compile(r"\{\{-?\s*(?:template|include)\s+\"([^\"]+)\"")
_DEFINE = re.compile(r"\{\{-?\s*define\s+\"([^\"]+)\"")
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".json")


@dataclass(frozen=True, slots=True)
class ApiVersionLine:
    line: int  # 1-based
    column: int  # 1-based, of the `apiVersion` key
    literal: str | None  # the value when the template writes it out; None when an action makes it
    expression: str  # the text after `apiVersion:`
    kinds: tuple[str, ...]  # the document's literal kinds (several when an {{ if }} chooses one)
    nested: bool = False  # inside the document's object (a scaleTargetRef's apiVersion), not an object


@per_scan.cache(maxsize=4096)
def api_version_lines(path: str, capabilities: Capabilities | None = None) -> tuple[ApiVersionLine, ...]:
    """Every `apiVersion:` line of a template file, with its document's kind; with `capabilities`,
    but those in branches Helm would not take there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return ()
    if capabilities is not None:
        text = decided_branches(text, capabilities)
    found: list[ApiVersionLine] = []
    starts = [0] + [m.end() for m in _DOC_SEPARATOR.finditer(text)]
    for begin, end in zip(starts, starts[1:] + [len(text)]):
        document = text[begin:end]
        kind_lines = [(m.start(), m.group(1), m.group(2)) for m in _KIND_LINE.finditer(document)]
        matches = list(_API_VERSION_LINE.finditer(document))
        top = min((len(m.group(1)) for m in matches), default=0)
        for match in matches:
            value = match.group(2)
            kinds = _kinds_of(match, matches, kind_lines)
            found.append(ApiVersionLine(
                line=text.count("\n", 0, begin + match.start()) + 1,
                column=len(match.group(1)) + 1,
                literal=value.strip("\"'") if _LITERAL.match(value) else None,
                expression=value,
                kinds=kinds,
                nested=len(match.group(1)) > top,
            ))
    return tuple(found)


def _kinds_of(match: re.Match, matches: list[re.Match], kind_lines: list) -> tuple[str, ...]:
    """The kinds an apiVersion line goes with: those as indented as it (a roleRef's kind is deeper)
    between it and the next such apiVersion line (an {{ if }} choosing apiVersion and kind together),
    else those before it since the previous one, else any in the document (one kind after an
    {{ if }} that chooses only the apiVersion)."""
    indent = match.group(1)
    same = [m for m in matches if m.group(1) == indent]
    position = same.index(match)
    after = same[position + 1].start() if position + 1 < len(same) else None
    before = same[position - 1].start() if position else -1
    ours = [(at, kind) for at, kind_indent, kind in kind_lines if kind_indent == indent]
    for chosen in ([k for at, k in ours if at > match.start() and (after is None or at < after)],
                   [k for at, k in ours if before < at < match.start()],
                   [k for _, k in ours]):
        if chosen:
            return tuple(dict.fromkeys(chosen))
    return ()


def locate(path: str, api_version: str, kind: str, occurrence: int = 0) -> tuple[int, int]:
    """Line and column in template `path` of the apiVersion that produced an object.

    Preference: a line writing this very apiVersion in a document of this kind, then a templated
    apiVersion in such a document, then any line writing the apiVersion. `occurrence` picks among
    equals (a template emitting several objects). (0, 0) when the template has no such line.
    """
    lines = api_version_lines(path)
    same_kind = [entry for entry in lines if kind in entry.kinds or not entry.kinds]
    for candidates in (
        [e for e in same_kind if e.literal == api_version],
        [e for e in same_kind if e.literal is None],
        [e for e in lines if e.literal == api_version],
        lines,
    ):
        if candidates:
            chosen = candidates[occurrence % len(candidates)]
            return chosen.line, chosen.column
    return 0, 0


# --- Without helm: what could each template emit? -------------------------------------------------

@dataclass(frozen=True, slots=True)
class TemplateObject:
    path: str
    line: int
    column: int
    api_version: str
    kind: str


def chart_templates(chart_dir: str, follow_links: bool = False) -> list[str]:
    """Template files of a chart and its vendored subcharts (helpers included), sorted; `follow_links`:
    through linked folders too (a chart's copy made of links to it)."""
    found = []
    for top, dirs, files in os.walk(chart_dir, followlinks=follow_links):
        dirs.sort()
        if os.path.basename(top) == "templates" or os.sep + "templates" + os.sep in top + os.sep:
            found.extend(os.path.join(top, name) for name in sorted(files) if name.endswith(_TEMPLATE_SUFFIXES))
    return found


def possible_objects(chart_dir: str, capabilities: Capabilities | None = None,
                     follow_links: bool = False) -> list[TemplateObject]:
    """Every apiVersion/kind pair the chart's templates could emit, found by reading them as text
    (with `capabilities`: in the branches Helm takes there, where they decide).

    A literal apiVersion counts once; one made by an action counts once for each apiVersion that
    action (or the helper it calls, in any template file of the chart) writes out.
    """
    templates = chart_templates(chart_dir, follow_links)
    helpers = _defines(templates, capabilities)
    objects = []
    for path in templates:
        if os.path.basename(path).startswith("_") or path.endswith(".tpl"):
            continue  # helpers emit nothing by themselves
        for entry in api_version_lines(path, capabilities):
            if entry.nested:
                continue
            for api_version in _possible_values(entry, helpers):
                objects.extend(TemplateObject(path, entry.line, entry.column, api_version, kind)
                               for kind in entry.kinds)
    return objects


def _possible_values(entry: ApiVersionLine, helpers: dict[str, str]) -> list[str]:
    if entry.literal:
        return [entry.literal]
    values = _QUOTED_API_VERSION.findall(entry.expression)
    seen: set[str] = set()
    pending = _INCLUDE.findall(entry.expression)
    while pending:
        name = pending.pop()
        if name in seen or name not in helpers:
            continue
        seen.add(name)
        values.extend(_QUOTED_API_VERSION.findall(helpers[name]))
        pending.extend(_INCLUDE.findall(helpers[name]))
    return list(dict.fromkeys(values))


def _defines(templates: list[str], capabilities: Capabilities | None) -> dict[str, str]:
    helpers: dict[str, str] = {}
    for path in templates:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        if capabilities is not None:  # `common.capabilities.cronjob.apiVersion` and its like
            text = decided_branches(text, capabilities)
        # A helper's body runs to the next `define` (nested `end`s make its own end hard to find).
        starts = list(_DEFINE.finditer(text))
        for match, after in zip(starts, starts[1:] + [None]):
            helpers.setdefault(match.group(1), text[match.end():after.start() if after else len(text)])
    return helpers


def text_fallback(chart_dir: str, via: str, objects: list[TemplateObject] | None = None) -> list[Manifest]:
    """What the chart's templates could emit (or `objects` of them), as Manifests at their apiVersion
    lines: every branch."""
    manifests = []
    for found in possible_objects(chart_dir) if objects is None else objects:
        document = f"apiVersion: {json.dumps(found.api_version)}\nkind: {json.dumps(found.kind)}\n"
        (manifest,), _ = read_text(document, found.path)
        manifest.origin = Origin(found.path, found.line, found.column, via)
        manifest.line_map = fixed(found.line, found.column)
        manifest.text_only = True
        manifests.append(manifest)
    return manifests
