"""Sources: everything that turns what the user points at into Manifests.

`collect` is the one entry point. Plain files are read here; Helm charts are rendered
(`helm.py`, values from Flux HelmReleases in `flux.py`), kustomizations built (`kustomize.py`)
and Helm's release Secrets decoded (`helm_releases.py`) by the modules beside it, imported only
when a scan has such input.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from yaml.nodes import MappingNode, ScalarNode

from scanner.containment import within
from scanner.guard import unexpected
from scanner.model import STDIN_PATH, Diagnostic, DuplicateKey, Finding, Manifest
from scanner.sources.files import KUSTOMIZATION_FILES, ChartFolder, KustomizeFolder, ManifestFile, read_file, walk
from scanner.sources.hazards import hazardous_files, held_back
from scanner.sources.parallel import read_all
from scanner.nodes import mapping_get
from scanner.sources.yamldoc import DocumentProblem, TemplateSyntax, read_text
from scanner.suppress import MARKER, Suppression, read_suppressions
from scanner.versions import Minor
from scanner.words import count

if TYPE_CHECKING:
    from scanner.options import ScanOptions


@dataclass
class ScanInput:
    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Charts, kustomizations and files holding template syntax that were not rendered, with the reason.
    unrendered: list[Diagnostic] = field(default_factory=list)
    # `# kubehop: ignore[...]` comments (scanner.suppress), applied once the checks have run.
    suppressions: list[Suppression] = field(default_factory=list)
    files_read: int = 0
    notices: list[str] = field(default_factory=list)
    # (path, root node) of the documents that may pin a component or cluster version without being a
    # Kubernetes object: Chart.yaml, kustomizations, `*_version:` variables (scanner.components.file_pins).
    documents: list[tuple[str, Any]] = field(default_factory=list)
    # Keys a render writes twice (rendered_duplicates.py): facts for the checks (checks/duplicate_keys.py).
    duplicate_keys: list[DuplicateKey] = field(default_factory=list)
    # What the per-object checks found as each plain file was read (scanner.analysis), in a worker process too.
    findings: list[Finding] = field(default_factory=list)
    # The `via` of objects read from templates a chart's values switch off: their findings are warnings.
    latent: set[str] = field(default_factory=set)
    # The first `checked_early` objects had the per-object checks and their component pins taken as
    # their file was read (scanner.scan); `pins` are those pins (scanner.components.pins.Detection).
    checked_early: int = 0
    pins: list[Any] = field(default_factory=list)
    # Objects among those that carry server-side state: what a cluster holds (cluster_state.split_live).
    live: list[Manifest] = field(default_factory=list)
    # The tools that rendered part of the input, and their versions, e.g. {"helm": "v4.1.4+g05fa379"}.
    rendered_with: dict[str, str] = field(default_factory=dict)
    # How each tool that ran was kept from the network (sandbox.py, no_network.py), e.g. {"helm": "network namespace ..."}.
    isolation: dict[str, str] = field(default_factory=dict)
    # Files the exclusions (`exclude` in the configuration, --exclude) left out: reports count them.
    excluded: int = 0
    # The paths scanned: what a file the tree names may be read from (kustomize_refs.repository_root).
    scanned: list[str] = field(default_factory=list)

    def extend(self, other: "ScanInput") -> None:
        if other.checked_early and self.checked_early == len(self.manifests):
            self.checked_early += other.checked_early  # still a prefix
        self.pins.extend(other.pins)
        self.live.extend(other.live)
        self.manifests.extend(other.manifests)
        self.duplicate_keys.extend(other.duplicate_keys)
        self.findings.extend(other.findings)
        self.latent.update(other.latent)
        self.documents.extend(other.documents)
        self.diagnostics.extend(other.diagnostics)
        self.unrendered.extend(other.unrendered)
        self.suppressions.extend(other.suppressions)
        self.files_read += other.files_read
        self.excluded += other.excluded
        self.notices.extend(other.notices)
        self.rendered_with.update(other.rendered_with)
        self.isolation.update(other.isolation)


def collect(paths: list[str], target: Minor | None = None, options: "ScanOptions | None" = None,
            on_file: Callable[[ScanInput], None] | None = None,
            before_render: Callable[[ScanInput], None] | None = None) -> ScanInput:
    """Everything under `paths`, charts rendered for `target` (default: the newest minor known).

    `on_file` sees what each plain file gave as soon as it is read (the scan checks its objects
    there, then lets their nodes go); those objects come first in the result, in that order. Only
    then may files be read by worker processes (sources/parallel.py): nothing else needs every node.
    `before_render` sees what the plain files gave before any chart is rendered or kustomization built
    (it may raise to stop there)."""
    from scanner.options import ScanOptions

    options = options or ScanOptions()
    # What the repository spans: the paths, and (a fleet's cluster reading part of it) its top.
    scanned = [*paths, *(r for r in options.repository_roots if r not in paths)]
    result = ScanInput(diagnostics=list(options.config_problems), scanned=scanned)
    charts: list[str] = []
    kustomizations: list[str] = []
    files: list[ManifestFile] = []
    stdin_bytes = sys.stdin.buffer.read() if "-" in paths else None
    dumps, met = _dumps(options), set()
    for item in walk(paths):
        if any(e.matches(item.path) for e in options.exclude):
            result.excluded += isinstance(item, ManifestFile)
            continue
        dump = _dump_of(item.path, dumps) if dumps else None
        if dump is not None:  # what a cluster holds (--cluster-state, --helm-releases), never desired state
            met.add(dump)
            continue
        if isinstance(item, Diagnostic):
            result.diagnostics.append(item)
        elif isinstance(item, ChartFolder):
            charts.append(item.path)
        elif isinstance(item, KustomizeFolder):
            kustomizations.append(item.path)
        else:
            files.append(item)

    def read(item: ManifestFile) -> ScanInput:
        found = _guarded(item.path, read_manifest_file, item, stdin_bytes)
        if on_file is not None:
            on_file(found)
        return found

    in_workers = on_file is not None and stdin_bytes is None
    for found in (read_all(files, read) if in_workers else map(read, files)):
        result.extend(found)
    if kustomizations:
        result.extend(_guarded(kustomizations[0], _mark_patches, result.manifests, kustomizations))
    if before_render is not None:
        before_render(result)
    hazards = hazardous_files(result.diagnostics)
    if hazards and (charts or kustomizations):
        charts, kustomizations, held = held_back(charts, kustomizations, hazards, scanned)
        result.unrendered.extend(held)
    if kustomizations and charts:
        charts = _without_kustomize_charts(charts, kustomizations, options)
    if charts or any(m.kind == "HelmRelease" for m in result.manifests):
        result.extend(_all_or_each(charts, _charts, charts, result.manifests, target, options, scanned))
    if kustomizations:
        from scanner.sources.kustomize_errors import said_once

        built = _all_or_each(kustomizations, _kustomizations, kustomizations, result.manifests, target, options,
                             scanned)
        result.diagnostics, built.diagnostics = said_once(result.diagnostics, built.diagnostics)
        result.extend(built)
    for dump in options.helm_releases:
        result.extend(_guarded(dump, _helm_releases, dump))
    result.notices.extend(f"{dump}: a kubectl dump inside the scanned paths: read as what the cluster holds "
                          "(--cluster-state, --helm-releases), not as manifests" for dump in sorted(met))
    return result


def _dumps(options: "ScanOptions") -> dict[str, str]:
    """Real path -> the path given, of what --cluster-state and --helm-releases read."""
    return {os.path.realpath(p): p for p in (*options.cluster_state, *options.helm_releases)}


def _dump_of(path: str, dumps: dict[str, str]) -> str | None:
    real = os.path.realpath(path)
    return next((given for dump, given in dumps.items() if within(real, dump)), None)


def _guarded(path: str, read, *args) -> ScanInput:
    """`read(*args)`, or, should kubehop fail on this input, an input problem for `path`."""
    try:
        return read(*args)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        return ScanInput(diagnostics=[unexpected(STDIN_PATH if path == "-" else path, err)])


def _all_or_each(folders: list[str], read, *args) -> ScanInput:
    """`read(*args)` for all `folders` at once; should kubehop fail there, an input problem for each."""
    try:
        return read(*args)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        return ScanInput(diagnostics=[unexpected(folder, err) for folder in folders] or [unexpected("", err)])


def _charts(charts: list[str], manifests: list[Manifest], target: Minor | None,
            options: "ScanOptions", paths: list[str]) -> ScanInput:
    from scanner.sources import flux, helm
    from scanner.sources.chart_copies import ChartCopies, Preparation
    from scanner.sources.helm_capture import find_helm, helm_version

    helm_path = find_helm() if options.render else None
    why_not = _why_not_rendered(helm_path, options.render)
    if why_not:
        return _charts_as_text(charts, why_not, paths, _capabilities(manifests, target, options))
    result = ScanInput()
    deployed = flux.flux_releases(manifests, charts, options.allow_network, tuple(paths))
    result.unrendered.extend(deployed.not_rendered)
    result.diagnostics.extend(deployed.notes)
    releases = deployed.releases + helm.releases_for(c for c in charts if c not in deployed.charts_used)
    settings = _helm_settings(helm_path, manifests, target, options)
    if releases:
        result.rendered_with["helm"] = helm_version(helm_path).text
        result.isolation["helm"] = helm.isolation(settings)
    latent = 0
    with ChartCopies(paths, helm_path, options.allow_network) as copies:  # what helm reads: chart_copies.py
        prepared = Preparation()
        releases = copies.prepare(releases, prepared)
        result.extend(ScanInput(unrendered=prepared.unrendered, diagnostics=prepared.diagnostics))
        for outcome in helm.render_each(releases, settings, helm.progress_printer()):
            read, switched_off = _rendered(outcome, options, settings.capabilities)
            result.extend(read)
            latent += switched_off
    if latent:
        result.notices.append(f"--all-templates: {count(latent, 'template')} that the charts' values switch off "
                              "read as text; findings from them are warnings marked latent")
    return result


def _rendered(outcome: Any, options: "ScanOptions", capabilities: Any) -> tuple[ScanInput, int]:
    """What one render gives: its objects (a chart helm failed on: read as text, in the branches
    `capabilities` decide as helm would), the keys its output writes twice, and with --all-templates
    the templates it switched off; and how many those were."""
    from scanner.sources import chart_fallback
    from scanner.sources.helm_output import manifests_of
    from scanner.sources.rendered_duplicates import split_duplicate_keys

    notices = [Diagnostic(outcome.release.where, notice, level="notice") for notice in outcome.notices]
    if outcome.error is not None:
        found, problems, not_rendered, templates = chart_fallback.unrenderable(outcome, capabilities)
        return ScanInput(found, problems + notices, not_rendered, files_read=templates), 0
    try:
        found, problems, templates = manifests_of(outcome)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        found, problems, templates = [], [unexpected(outcome.release.where, err)], 0
    duplicates, problems = split_duplicate_keys(found, problems)
    read = ScanInput(found, problems + notices, duplicate_keys=duplicates, files_read=templates)
    if not options.all_templates:
        return read, 0
    switched_off, via, latent = chart_fallback.latent_templates(outcome, found, problems, capabilities)
    read.extend(ScanInput(switched_off, files_read=latent, latent={via} if switched_off else set()))
    return read, latent


def _helm_settings(helm_path: str, manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    from scanner.sources import helm

    capabilities = _capabilities(manifests, target, options)
    return helm.HelmSettings(helm_path, capabilities.minor, capabilities.served, tuple(options.values_files),
                             builtin=capabilities.builtin, allow_network=options.allow_network)


def _capabilities(manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    """What a chart's templates see as `.Capabilities` at `target`: what it serves, and the CRDs of the tree."""
    from scanner.crds import CrdIndex
    from scanner.rulebook import load_rulebook
    from scanner.sources.template_branches import Capabilities

    book = load_rulebook(options.rule_folders)  # the scan's own, already loaded
    target = target or book.newest
    served = frozenset(book.served_at(target)) | CrdIndex.from_manifests(manifests).served_apis()
    return Capabilities(target, served, book.served.group_versions())


def _why_not_rendered(helm_path: str | None, render: bool) -> str | None:
    from scanner.sources.helm_capture import unsupported

    if not render:
        return "--no-render was given"
    if helm_path is None:
        return "helm was not found (set KUBEHOP_HELM, put helm on PATH, or run scripts/get-tools.sh)"
    return unsupported(helm_path)


def _charts_as_text(charts: list[str], why: str, paths: list[str], capabilities: Any) -> ScanInput:
    from scanner.sources.chart_copies import ChartCopies, Preparation
    from scanner.sources.chart_fallback import read_as_text
    from scanner.sources.helm import describe_chart

    result = ScanInput()
    with ChartCopies(paths, None, False) as copies:  # links out of the tree are not read here either
        for chart_dir in charts:
            prepared = Preparation()
            try:
                folder = copies.folder_for(chart_dir, prepared)
                found, templates = read_as_text(chart_dir, folder, f"{describe_chart(chart_dir)}, template read "
                                                                   "as text (not rendered)", capabilities=capabilities)
            except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
                result.diagnostics.append(unexpected(chart_dir, err))
                continue
            result.extend(ScanInput(found, prepared.diagnostics, prepared.unrendered, files_read=templates))
            result.unrendered.append(Diagnostic(chart_dir, "Helm chart read as text: every branch of its "
                                                           "templates, nothing rendered", level="notice"))
    if charts:
        plural = "s were" if len(charts) != 1 else " was"
        result.notices.append(f"{why}: {len(charts)} Helm chart{plural} read as text, not rendered; findings "
                              "from them cover every branch of an {{ if }} on values, including ones the cluster never gets")
    return result


def _kustomizations(folders: list[str], manifests: list[Manifest], target: Minor | None, options: "ScanOptions",
                    scanned: list[str]) -> ScanInput:
    from scanner.sources import helm, kustomize, kustomize_flux, no_network
    from scanner.sources.helm_capture import helm_version
    from scanner.sources.kustomize_origins import identity
    from scanner.sources.tools import kustomize_command

    result = ScanInput()
    command = kustomize_command() if options.render else None
    if command is None:  # worded like the notice for charts read as text
        why = ("--no-render was given" if not options.render else "neither kustomize nor kubectl found (set "
               "KUBEHOP_KUSTOMIZE or KUBEHOP_KUBECTL, put one on PATH, or run scripts/get-tools.sh)")
        result.unrendered.extend(Diagnostic(folder, "kustomization not built: its files were scanned as they are",
                                            level="notice") for folder in folders)
        plural = "s were" if len(folders) != 1 else " was"
        result.notices.append(f"{why}: {len(folders)} kustomization{plural} not built; their files were scanned "
                              "as they are")
        return result
    # An object already read from its own file (or from another build) is not reported again.
    seen = {identity(m) for m in manifests}
    charts = _kustomize_helm(manifests, target, options)
    result.isolation["kustomize"] = "none (--allow-network)" if options.allow_network else no_network.isolation()
    flux_paths, result.diagnostics = kustomize_flux.flux_paths(manifests, scanned)
    for outcome in kustomize.build_all(folders, command, options.allow_network, os.cpu_count() or 1, charts,
                                       scanned, flux_paths, manifests, options.kustomize_unrestricted):
        if outcome.not_built:
            result.unrendered.append(Diagnostic(outcome.folder, outcome.not_built, level="notice"))
        result.unrendered.extend(outcome.unrendered)
        result.diagnostics.extend(outcome.diagnostics)
        result.duplicate_keys.extend(outcome.duplicate_keys)
        for manifest in outcome.manifests:
            if identity(manifest) not in seen:
                seen.add(identity(manifest))
                result.manifests.append(manifest)
    if charts.used:
        result.rendered_with["helm"] = helm_version(charts.settings.helm).text
        result.isolation["helm"] = helm.isolation(charts.settings)
    return result


def _mark_patches(manifests: list[Manifest], folders: list[str]) -> ScanInput:
    from scanner.sources.kustomize_patches import mark_patches

    mark_patches(manifests, folders)
    return ScanInput()


def _kustomize_helm(manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    """kubehop's helm for Kustomize helmCharts entries, at the same Capabilities as the scan's charts."""
    from scanner.sources.helm_capture import find_helm
    from scanner.sources.kustomize_helm import HelmCharts

    helm_path = find_helm() if options.render else None
    why_not = _why_not_rendered(helm_path, options.render)
    if why_not:
        return HelmCharts(None, why_not, options.allow_network)
    return HelmCharts(_helm_settings(helm_path, manifests, target, options), None, options.allow_network)


def _without_kustomize_charts(charts: list[str], folders: list[str], options: "ScanOptions") -> list[str]:
    """Chart folders a kustomization's helmCharts render are rendered there, with its values, not on
    their own (when kubehop can build kustomizations and render charts; else they are read as charts)."""
    from scanner.sources.kustomize_charts import local_charts
    from scanner.sources.helm_capture import find_helm
    from scanner.sources.tools import kustomize_command

    if not options.render or kustomize_command() is None or _why_not_rendered(find_helm(), True):
        return charts
    try:
        used = local_charts(folders)
    except Exception:  # noqa: BLE001 - the kustomizations' own reading reports what is wrong with them
        return charts
    return [chart for chart in charts if os.path.realpath(chart) not in used]


def _helm_releases(dump: str) -> ScanInput:
    from scanner.sources.helm_releases import read_helm_releases

    manifests, diagnostics, releases = read_helm_releases(dump)
    return ScanInput(manifests=manifests, diagnostics=diagnostics, files_read=1,
                     notices=[f"{dump}: {count(releases, 'deployed Helm release')} scanned"])


# Files whose documents name versions whatever their keys: Helm chart metadata and kustomizations.
PIN_FILES = frozenset(("Chart.yaml", "requirements.yaml", "requirements.yml", *KUSTOMIZATION_FILES))


def _holds_version_variable(node: Any) -> bool:
    """A plain mapping (not an object) with a `<name>_version` or `<name>Version` key: Ansible defaults,
    values files, talconfig.yaml. Which of them pin anything is the pin readers' to say
    (scanner.components.file_pins, cluster_pin); this only keeps the documents they may read."""
    if not isinstance(node, MappingNode) or mapping_get(node, "kind") is not None:
        return False
    return any(isinstance(key, ScalarNode) and key.value.endswith(("_version", "Version")) for key, _ in node.value)


def read_manifest_file(item: ManifestFile, stdin_bytes: bytes | None = None) -> ScanInput:
    result = ScanInput(files_read=1)
    display = STDIN_PATH if item.path == "-" else item.path
    if item.chart_template:
        result.unrendered.append(Diagnostic(display, "Helm chart template; not rendered", level="notice"))
        return result
    text, problem = read_file(item.path, stdin_bytes)
    if problem is not None:
        result.diagnostics.append(dataclasses.replace(problem, path=display))
        return result
    documents: list[Any] = []
    try:
        manifests, diagnostics = read_text(text, display, documents)
    except DocumentProblem as problem:
        result.diagnostics.append(Diagnostic(display, str(problem), problem.line))
        return result
    except TemplateSyntax:
        result.unrendered.append(Diagnostic(display, "holds Helm template syntax; not rendered", level="notice"))
        return result
    result.manifests = manifests
    result.diagnostics = diagnostics
    pin_file = os.path.basename(display) in PIN_FILES
    result.documents = [(display, node) for node in documents if pin_file or _holds_version_variable(node)]
    if MARKER in text:
        result.suppressions, problems = read_suppressions(text, display)
        result.diagnostics.extend(problems)
    return result
