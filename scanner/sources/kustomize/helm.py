"""Kustomize `helmCharts`, rendered by kubehop's helm at the hop's exact Capabilities.

kustomize's own `--enable-helm` runs helm with helm's built-in API list (which still claims
long-removed APIs) and asks `helm version -c`, which helm 4 refuses. Each entry is rendered instead by
kubehop's rendering service (`helm.render_all`: discovery served on loopback with what the target
serves, so `.Capabilities` are exact), with the chart and values kustomize would use
(`charts.py`); an entry's `kubeVersion` and `apiVersions` are honoured on top of that.
The objects go back to kustomize as a plain resource of the kustomization (`mirror.py`),
so its patches and transformers apply, each tagged with an annotation that names its template and
line; `origin_of` reads it back after the build.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
from dataclasses import dataclass, field

import yaml

from scanner import data
from scanner.model import Diagnostic, DuplicateKey, Manifest, Origin
from scanner.sources.helm import render as helm
from scanner.sources.helm.chart_fallback import unrenderable
from scanner.sources.files.walk import read_file
from scanner.sources.helm.output import manifests_of
from scanner.sources.kustomize.charts import ChartEntry, locate, values_of
from scanner.sources.yaml.rendered import annotation, drop_annotation
from scanner.sources.helm.rendered_duplicates import split_duplicate_keys
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, read_text
from scanner.versions import parse_minor

OBJECT_ANNOTATION = "kubehop.dev/helm-chart-object"
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_CRD_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class EntryOutcome:
    entry: ChartEntry
    text: str = ""  # the objects for kustomize, each tagged with OBJECT_ANNOTATION
    not_rendered: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    duplicate_keys: list[DuplicateKey] = field(default_factory=list)  # keys written twice (rendered_duplicates)
    as_text: list[Manifest] = field(default_factory=list)  # a chart helm cannot render, read as text

    @property
    def rendered(self) -> bool:
        return self.not_rendered is None and not any(d.level == "error" for d in self.diagnostics)


@dataclass
class HelmCharts:
    """The scan's `helmCharts` renders, and where each object they produced came from."""

    settings: helm.HelmSettings | None  # None: helm cannot render here
    why_not: str | None = None
    allow_network: bool = False
    used: bool = False  # some entry was handed to helm
    origins: dict[str, tuple[Origin, bool]] = field(default_factory=dict)  # id -> (origin, a file in the tree)
    _ids: itertools.count = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def render(self, work: list[tuple[ChartEntry, int, str]], scratch: str) -> dict[tuple[str, int], EntryOutcome]:
        """Each (entry, its line, repository root) rendered; keyed by (kustomization file, index)."""
        outcomes: dict[tuple[str, int], EntryOutcome] = {}
        pending: dict[tuple, list[tuple[EntryOutcome, helm.ChartRelease, bool, int]]] = {}
        for entry, line, root in work:
            outcome = outcomes[(entry.kustomization, entry.index)] = EntryOutcome(entry)
            if self.settings is None:
                outcome.not_rendered = f"{entry.title}: not rendered ({self.why_not})"
                continue
            located = locate(entry, root, scratch, self.settings.helm, self.allow_network)
            if located.problem or located.not_rendered:
                self._refuse(outcome, located.problem, located.not_rendered, line)
                continue
            values, problem = values_of(entry, located, root)
            if problem:
                self._refuse(outcome, problem, None, line)
                continue
            release = helm.ChartRelease(located.chart_dir, entry.release, entry.namespace, values,
                                        via=f"{entry.label} (release {entry.release} of "
                                            f"{helm.describe_chart(located.chart_dir)})")
            pending.setdefault(self._capabilities(entry), []).append((outcome, release, located.in_tree, line))
        self.used = self.used or bool(pending)
        for capabilities, jobs in pending.items():
            settings = self._settings_for(*capabilities)
            rendered = helm.render_all([release for _, release, _, _ in jobs], settings)
            for (outcome, release, in_tree, line), result in zip(jobs, rendered):
                self._take(outcome, result, in_tree, line, settings)
        return outcomes

    def _refuse(self, outcome: EntryOutcome, problem: str | None, not_rendered: str | None, line: int) -> None:
        entry = outcome.entry
        if problem:
            outcome.diagnostics.append(Diagnostic(entry.kustomization, f"{entry.title}: {problem}", line or None))
        else:
            outcome.not_rendered = f"{entry.title}: {not_rendered}"

    @staticmethod
    def _capabilities(entry: ChartEntry) -> tuple[str, tuple[str, ...]]:
        versions = entry.spec.get("apiVersions")
        listed = tuple(sorted(str(v) for v in versions)) if isinstance(versions, list) else ()
        return str(entry.spec.get("kubeVersion") or ""), listed

    def _settings_for(self, kube_version: str, api_versions: tuple[str, ...]) -> helm.HelmSettings:
        """The hop's settings, with an entry's pinned kubeVersion and extra apiVersions."""
        settings = dataclasses.replace(self.settings, values_files=())
        if kube_version:
            try:
                settings = dataclasses.replace(settings, target=parse_minor(kube_version))
            except ValueError:
                pass
        extra = set()
        for listed in api_versions:
            parts = listed.strip("/").split("/")
            if len(parts) >= 2 and parts[-1][:1].isupper():  # group/version/Kind (or v1/Kind)
                extra.add(("/".join(parts[:-1]), parts[-1]))
            elif parts and parts[0]:
                extra.add((listed.strip("/"), ""))  # a group-version alone: listed, with no resource
        return dataclasses.replace(settings, served=settings.served | frozenset(extra))

    def _take(self, outcome: EntryOutcome, result: helm.RenderOutcome, in_tree: bool, line: int,
              settings: helm.HelmSettings) -> None:
        entry = outcome.entry
        outcome.diagnostics.extend(Diagnostic(entry.kustomization, f"{entry.title}: {notice}", line or None,
                                              level="notice") for notice in result.notices)
        if result.error is not None:
            if in_tree:  # read as text, as a chart helm cannot render is (chart_fallback)
                outcome.as_text, problems, _, _ = unrenderable(result, settings.capabilities)
                outcome.diagnostics.extend(problems)
                outcome.not_rendered = f"{entry.title}: helm could not render it ({result.error}); its " \
                                       "templates were read as text, every branch"
            else:
                outcome.diagnostics.append(Diagnostic(entry.kustomization, f"{entry.title}: helm could not "
                                                      f"render it: {result.error}", line or None))
            return
        found, problems, _ = manifests_of(result)
        outcome.duplicate_keys, problems = split_duplicate_keys(found, problems)
        if entry.spec.get("includeCRDs"):
            found.extend(_crds(result.release.chart_dir, result.release.via, problems))
        found = [m for m in found if _installed(m, entry.spec)]
        if not in_tree:  # a chart from helm's cache or a download: point at the entry that asks for it
            found = [_at_entry(m, entry, line, result.release.chart_dir) for m in found]
            problems = [dataclasses.replace(p, path=entry.kustomization, line=line or None) for p in problems]
        outcome.diagnostics.extend(problems)
        outcome.text = self._tagged(found, in_tree)

    def _tagged(self, manifests: list[Manifest], in_tree: bool) -> str:
        documents = []
        for manifest in manifests:
            body = manifest.body
            metadata = body.get("metadata")
            if not isinstance(metadata, dict):
                continue  # kustomize refuses an object without metadata anyway
            with self._lock:
                key = str(next(self._ids))
                self.origins[key] = (manifest.origin, in_tree)
            annotations = metadata.get("annotations") if isinstance(metadata.get("annotations"), dict) else {}
            tagged = {**body, "metadata": {**metadata, "annotations": {**annotations, OBJECT_ANNOTATION: key}}}
            documents.append(yaml.dump(tagged, Dumper=_DUMPER, sort_keys=False))
        return "---\n".join(documents)

    def origin_of(self, manifest: Manifest, built_by: str) -> tuple[Origin, bool] | None:
        """Where an object kustomize built from a rendered chart came from, and whether that is a file
        of the tree (a template) or the entry asking for a chart from elsewhere; the annotation is dropped."""
        key = annotation(manifest, OBJECT_ANNOTATION)
        if key is None:
            return None
        drop_annotation(manifest, OBJECT_ANNOTATION)
        if key not in self.origins:
            return None
        origin, in_tree = self.origins[key]
        return dataclasses.replace(origin, via=f"{built_by}, {origin.via}" if origin.via else built_by), in_tree


def _at_entry(manifest: Manifest, entry: ChartEntry, line: int, chart_dir: str) -> Manifest:
    via = manifest.origin.via or entry.label
    relative = os.path.relpath(manifest.origin.path, chart_dir)
    template = "" if relative.startswith("..") else f"{entry.name}/{relative}"
    manifest.origin = Origin(entry.kustomization, line, 1 if line else 0, f"{via}, {template}" if template else via)
    return manifest


def _installed(manifest: Manifest, spec: dict) -> bool:
    """Is the object in what kustomize would get (skipHooks drops hooks, skipTests drops tests)?"""
    hook = annotation(manifest, _hook_annotation())
    if hook is None:
        return True
    if spec.get("skipHooks"):
        return False
    return not (spec.get("skipTests") and "test" in hook)


def _hook_annotation() -> str:
    return data.load("rules/helm.yaml")["hook_annotation"]["name"]


def _crds(chart_dir: str, via: str, problems: list[Diagnostic]) -> list[Manifest]:
    """The chart's crds/ files and its unpacked subcharts' (charts/*/crds/), which helm adds with
    --include-crds; a templates/crds/ folder is a template like any other."""
    found: list[Manifest] = []
    for folder in _chart_folders(chart_dir):
        crds = os.path.join(folder, "crds")
        for top, dirs, files in os.walk(crds):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(top, name)
                if name.endswith(_CRD_SUFFIXES) and not os.path.islink(path):
                    found.extend(_crd_file(path, via, problems))
    return found


def _chart_folders(chart_dir: str) -> list[str]:
    found, stack = [], [chart_dir]
    while stack and len(found) < 1000:
        folder = stack.pop()
        found.append(folder)
        try:
            subcharts = sorted(os.scandir(os.path.join(folder, "charts")), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        stack.extend(e.path for e in subcharts if e.is_dir(follow_symlinks=False)
                     and os.path.isfile(os.path.join(e.path, "Chart.yaml")))
    return found


def _crd_file(path: str, via: str, problems: list[Diagnostic]) -> list[Manifest]:
    text, problem = read_file(path)
    if problem is not None or text is None:
        return []
    try:
        manifests, diagnostics = read_text(text, path)
    except (DocumentProblem, TemplateSyntax) as err:
        problems.append(Diagnostic(path, str(err) or "holds template syntax"))
        return []
    problems.extend(diagnostics)
    for manifest in manifests:
        manifest.origin = dataclasses.replace(manifest.origin, via=via)
    return manifests
