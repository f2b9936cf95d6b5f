"""Rendered Helm output back to the files a person edits.

helm names each object's template (helm 4 in an annotation, removed here; helm 3 in a `# Source:`
comment above it); the line is
the template's apiVersion line (`chart_templates.locate`). Objects Helm itself would skip -- a hook
type it does not run -- are left out with a notice, and problems in the output name their template.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Sequence

from scanner import data
from scanner.model import Diagnostic, Manifest, Origin
from scanner.sources.helm.chart_dependencies import dependency_file
from scanner.sources.helm.chart_templates import locate
from scanner.sources.helm.render import FILENAME_ANNOTATION, ChartRelease, RenderOutcome
from scanner.sources.helm.values_lines import ValuesLines
from scanner.sources.yaml.line_map import aligned, fixed
from scanner.sources.yaml.rendered import annotation, drop_annotation, read_output, reorigin, source_comments

_FILENAME_LINE = re.compile(rf"^(?:\s*{re.escape(FILENAME_ANNOTATION)}:\s*['\"]?(.+?)['\"]?|# Source: (.+?))\s*$",
                            re.MULTILINE)


def manifests_of(outcome: RenderOutcome, values_files: Sequence[str] = ()) -> tuple[list[Manifest], list[Diagnostic], int]:
    """Objects of a rendered release that Helm installs, pointing at their template lines (at the values
    file line for what a template prints from its values: values_lines.py; `values_files`, the --values
    files the render was given); problems; and how many templates produced them."""
    manifests, problems, templates = _remote_manifests(outcome) if outcome.release.remote \
        else _chart_manifests(outcome, values_files)
    installed = []
    for manifest in manifests:
        hook = _unknown_hook(manifest)
        if hook is None:
            installed.append(manifest)
        else:
            problems.append(Diagnostic(manifest.origin.path, f"{manifest.kind} {manifest.name}: hook type {hook!r} "
                                       "is not one Helm runs; Helm skips this object, so it is not checked",
                                       manifest.origin.line or None, level="notice"))
    return installed, problems, templates


def _chart_manifests(outcome: RenderOutcome, values_files: Sequence[str]) -> tuple[list[Manifest], list[Diagnostic], int]:
    release = outcome.release
    display = f"{release.chart_dir} (rendered)"
    manifests, diagnostics = read_output(outcome.text or "", display)
    occurrences: dict[tuple[str, str, str], int] = {}
    templates: set[str] = set()
    template_of = _template_of(outcome.text or "")
    output = (outcome.text or "").split("\n")

    def where(manifest: Manifest) -> Origin:
        source = template_of(manifest)
        if source is None:
            return Origin(display, manifest.origin.line, manifest.origin.column, release.via)
        path = template_path(release.chart_dir, source)
        if not os.path.exists(path):  # in a dependency helm was given in a copy of the chart
            path, dependency = dependency_file(release.chart_dir, source)
            if path is None and dependency is not None:
                pin = dependency.pin
                manifest.line_map = fixed(pin.line, pin.column)
                return Origin(pin.path, pin.line, pin.column, f"{release.via}, dependency {dependency}, {source}")
            path = path or template_path(release.chart_dir, source)
        templates.add(path)
        key = (path, manifest.api_version, manifest.kind)
        occurrence = occurrences.get(key, 0)
        occurrences[key] = occurrence + 1
        # A template with no apiVersion line of its own (a helper writes the object): its first line.
        line, column = locate(path, manifest.api_version, manifest.kind, occurrence)
        line, column = (line, column) if line else (1, 1)
        node = manifest.node
        values = ValuesLines(release.chart_dir, path, values_files, release.values)
        manifest.line_map = aligned(output, node.start_mark.line + 1, node.end_mark.line + 1, path, line, values)
        return Origin(path, line, column, release.via)

    found = reorigin(manifests, where)
    return found, [_in_template(d, outcome.text or "", release) for d in diagnostics], len(templates)


@functools.cache
def _hook_facts() -> tuple[str, frozenset[str]]:
    facts = data.load("rules/helm.yaml")
    return facts["hook_annotation"]["name"], frozenset(e["name"] for e in facts["hook_events"])


def _unknown_hook(manifest: Manifest) -> str | None:
    """The hook annotation of an object Helm would skip (a type it does not run), else None."""
    key, events = _hook_facts()
    hooks = annotation(manifest, key)
    if hooks and any(h.strip().lower() not in events for h in hooks.split(",")):
        return hooks
    return None


def _remote_manifests(outcome: RenderOutcome) -> tuple[list[Manifest], list[Diagnostic], int]:
    """No file of a downloaded chart is in the tree: findings point at the object that asked for it."""
    release = outcome.release
    asked = release.remote.requested_at
    manifests, diagnostics = read_output(outcome.text or "", f"{asked.path} (chart {release.remote})")
    template_of = _template_of(outcome.text or "")

    def where(manifest: Manifest) -> Origin:
        source = template_of(manifest)
        manifest.line_map = fixed(asked.line, asked.column)
        return Origin(asked.path, asked.line, asked.column, f"{release.via}, {source}" if source else release.via)

    return reorigin(manifests, where), diagnostics, 0


def _template_of(text: str):
    """The template an object came from: helm 4's annotation (dropped: checks see the object as
    applied), else helm 3's `# Source:` comment above it."""
    commented = source_comments(text) if "# Source: " in text else lambda manifest: None

    def template_of(manifest: Manifest) -> str | None:
        source = annotation(manifest, FILENAME_ANNOTATION)
        drop_annotation(manifest, FILENAME_ANNOTATION)
        return source if source is not None else commented(manifest)

    return template_of


def _in_template(problem: Diagnostic, text: str, release: ChartRelease) -> Diagnostic:
    """A problem in rendered output, told against the template that produced that document."""
    if problem.line is None:
        return problem
    lines = text.split("\n")
    begin = min(problem.line, len(lines)) - 1
    while begin > 0 and not lines[begin].startswith("---"):
        begin -= 1
    end = problem.line
    while end < len(lines) and not lines[end].startswith("---"):
        end += 1
    for line in lines[begin + lines[begin].startswith("---"):end]:
        match = _FILENAME_LINE.match(line)
        if match:
            path = template_path(release.chart_dir, match.group(1) or match.group(2))
            return Diagnostic(path, f"{problem.message} (in what it renders)", None, problem.level)
    return problem


def template_path(chart_dir: str, source: str) -> str:
    """`mychart/charts/sub/templates/x.yaml` -> the file under the scanned chart folder (a packaged
    subchart's .tgz when the template is inside one)."""
    relative = source.split("/", 1)[1] if "/" in source else source
    path = os.path.join(chart_dir, *relative.split("/"))
    if os.path.exists(path):
        return path
    parts = relative.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        if parts[depth - 1] == "charts":
            folder = os.path.join(chart_dir, *parts[:depth - 1], "charts")
            packed = sorted(n for n in _listdir(folder) if n.startswith(parts[depth] + "-") and n.endswith(".tgz"))
            if packed:
                return os.path.join(folder, packed[0])
    return path


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
