"""What of a chart is read as text when helm does not render it.

- A chart helm cannot render (a template error, a value the chart requires) is read as text, as
  kubehop reads every chart without helm (`chart_templates.text_fallback`): every branch of its
  templates, marked unrendered with helm's reason. Its removed APIs are still reported, and the scan
  is not incomplete for it (exit 3 is for a chart that is the user's to fix: a Chart.yaml kubehop
  cannot read either, a render stopped at one of its bounds, a remote chart).
- `--all-templates`: the templates a chart's default values switch off (`{{ if .Values.x.enabled }}`,
  a subchart whose condition is false) rendered nothing; they are read as text too, their objects
  marked *latent* (`ScanInput.latent`), so their findings are warnings: what a chart maintainer ships
  to whoever turns them on.
"""

from __future__ import annotations

import dataclasses
import os

from scanner.model import Diagnostic, Manifest
from scanner.sources.helm.chart_copies import file_in_tree
from scanner.sources.helm.chart_templates import possible_objects, text_fallback
from scanner.sources.files.walk import read_yaml_file
from scanner.sources.helm.render import RenderOutcome
from scanner.sources.helm.template_branches import Capabilities


def unrenderable(outcome: RenderOutcome, capabilities: Capabilities | None = None
                 ) -> tuple[list[Manifest], list[Diagnostic], list[Diagnostic], int]:
    """A chart helm failed on: (its templates read as text, input problems, not-rendered entries,
    templates read); `capabilities`: those helm was given."""
    release = outcome.release
    where = release.where
    unreadable = None if release.remote or outcome.over_limit else _unreadable_metadata(release.chart_dir)
    if release.remote or outcome.over_limit or unreadable:
        problem = Diagnostic(where, f"helm could not render it: {outcome.error}" +
                             (f" ({unreadable})" if unreadable else ""))
        return [], [problem], [Diagnostic(where, "helm failed (see input problems)", level="notice")], 0
    found, templates = read_as_text(release.chart_dir, release.folder,
                                    f"{release.via}, template read as text (helm could not render it)",
                                    capabilities=capabilities)
    entry = Diagnostic(where, f"helm could not render it ({outcome.error}); its templates were read as text, "
                              "every branch", level="notice")
    return found, [], [entry], templates


def _unreadable_metadata(chart_dir: str) -> str | None:
    """Why Chart.yaml cannot be read, when it cannot: then the chart is the user's to fix."""
    meta, problem = read_yaml_file(os.path.join(chart_dir, "Chart.yaml"))  # guarded like any file kubehop reads
    if problem is not None:
        return f"Chart.yaml cannot be read: {problem.message}"
    if not isinstance(meta, dict) or not meta.get("name"):
        return "Chart.yaml names no chart"
    return None


def latent_templates(outcome: RenderOutcome, rendered: list[Manifest], problems: list[Diagnostic],
                     capabilities: Capabilities | None = None) -> tuple[list[Manifest], str | None, int]:
    """The objects of the templates that rendered nothing, read as text: (manifests, their via, how
    many templates). `rendered` and `problems` are what the render gave (an object Helm skips, a problem in
    the output, still names its template). A downloaded chart has no files in the tree to read."""
    release = outcome.release
    if release.remote or outcome.text is None:
        return [], None, 0
    seen = {os.path.normpath(item.origin.path) for item in rendered} | {os.path.normpath(p.path) for p in problems}
    via = f"{release.via}, latent: template switched off by the chart's values, read as text"
    found, templates = read_as_text(release.chart_dir, release.folder, via, seen, capabilities)
    return found, via, templates


def read_as_text(chart_dir: str, folder: str, via: str, rendered: set[str] = frozenset(),
                 capabilities: Capabilities | None = None) -> tuple[list[Manifest], int]:
    """The objects the chart's templates could emit (but those of `rendered` templates; in the branches
    `capabilities` decide, those Helm takes), read from `folder` (the chart, or the copy helm was given)
    and told at chart_dir's files; how many templates."""
    objects = []
    for found in possible_objects(folder, capabilities, follow_links=folder != chart_dir):  # a copy: its links
        path = found.path if folder == chart_dir else file_in_tree(chart_dir, folder, found.path)
        if path is not None and os.path.normpath(path) not in rendered:
            objects.append(dataclasses.replace(found, path=path))
    return text_fallback(chart_dir, via, objects), len({o.path for o in objects})
