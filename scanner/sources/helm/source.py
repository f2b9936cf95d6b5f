"""Helm charts into Manifests, as `collect` asks for them: each chart folder of the tree and each Flux
HelmRelease rendered by the real helm at the target's Capabilities (render.py; values from the
releases: flux.py), or, without a usable helm, read as text in every branch (chart_fallback.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scanner.crds import CrdIndex
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest
from scanner.rulebook import load_rulebook
from scanner.sources.helm import chart_fallback, flux, render as helm
from scanner.sources.helm.capture import find_helm, helm_version, unsupported
from scanner.sources.helm.chart_copies import ChartCopies, Preparation
from scanner.sources.helm.chart_fallback import read_as_text
from scanner.sources.helm.output import manifests_of
from scanner.sources.helm.render import describe_chart
from scanner.sources.helm.rendered_duplicates import split_duplicate_keys
from scanner.sources.helm.template_branches import Capabilities
from scanner.sources.scan_input import ScanInput
from scanner.versions import Minor
from scanner.words import count

if TYPE_CHECKING:
    from scanner.options import ScanOptions
    from scanner.sources.files.walk import ChartFolder
    from scanner.sources.registry import Reading


def read(charts: list["ChartFolder"], so_far: ScanInput, reading: "Reading") -> ScanInput:
    """The chart folders, and the charts of the Flux HelmReleases among what the plain files gave."""
    return read_charts([chart.path for chart in charts], so_far.manifests, reading.target, reading.options,
                       reading.scanned, so_far.documents)


def read_charts(charts: list[str], manifests: list[Manifest], target: Minor | None,
                options: "ScanOptions", paths: list[str], documents: list[tuple[str, Any]] = ()) -> ScanInput:
    helm_path = find_helm() if options.render else None
    why_not = why_not_rendered(helm_path, options.render)
    if why_not:
        return _charts_as_text(charts, why_not, paths, _capabilities(manifests, target, options))
    result = ScanInput()
    deployed = flux.flux_releases(manifests, charts, options.allow_network, tuple(paths), documents)
    result.unrendered.extend(deployed.not_rendered)
    result.diagnostics.extend(deployed.notes)
    releases = deployed.releases + helm.releases_for(c for c in charts if c not in deployed.charts_used)
    settings = helm_settings(helm_path, manifests, target, options)
    if releases:
        result.rendered_with["helm"] = helm_version(helm_path).text
        result.isolation["helm"] = helm.isolation(settings)
    latent = 0
    rendered = ScanInput()
    with ChartCopies(paths, helm_path, options.allow_network) as copies:  # what helm reads: chart_copies.py
        for outcome in helm.render_each(releases, settings, helm.progress_printer(), copies.prepared):
            read, switched_off = _rendered(outcome, options, settings.capabilities)
            rendered.extend(read)
            latent += switched_off
        prepared = Preparation()
        copies.collect(releases, prepared)
    # What preparing the charts found comes first, as when they were all prepared before any render.
    result.extend(ScanInput(unrendered=prepared.unrendered, diagnostics=prepared.diagnostics))
    result.extend(rendered)
    if latent:
        result.notices.append(f"--all-templates: {count(latent, 'template')} that the charts' values switch off "
                              "read as text; findings from them are warnings marked latent")
    return result


def _rendered(outcome: Any, options: "ScanOptions", capabilities: Any) -> tuple[ScanInput, int]:
    """What one render gives: its objects (a chart helm failed on: read as text, in the branches
    `capabilities` decide as helm would), the keys its output writes twice, and with --all-templates
    the templates it switched off; and how many those were."""
    notices = [Diagnostic(outcome.release.where, notice, level="notice") for notice in outcome.notices]
    if outcome.error is not None:
        found, problems, not_rendered, templates = chart_fallback.unrenderable(outcome, capabilities)
        return ScanInput(found, problems + notices, not_rendered, files_read=templates), 0
    try:
        found, problems, templates = manifests_of(outcome, options.values_files)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        found, problems, templates = [], [unexpected(outcome.release.where, err)], 0
    duplicates, problems = split_duplicate_keys(found, problems)
    read = ScanInput(found, problems + notices, duplicate_keys=duplicates, files_read=templates)
    if not options.all_templates:
        return read, 0
    switched_off, via, latent = chart_fallback.latent_templates(outcome, found, problems, capabilities)
    read.extend(ScanInput(switched_off, files_read=latent, latent={via} if switched_off else set()))
    return read, latent


def helm_settings(helm_path: str, manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    capabilities = _capabilities(manifests, target, options)
    return helm.HelmSettings(helm_path, capabilities.minor, capabilities.served, tuple(options.values_files),
                             builtin=capabilities.builtin, allow_network=options.allow_network)


def _capabilities(manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    """What a chart's templates see as `.Capabilities` at `target`: what it serves, and the CRDs of the tree."""
    book = load_rulebook(options.rule_folders)  # the scan's own, already loaded
    target = target or book.newest
    served = frozenset(book.served_at(target)) | CrdIndex.from_manifests(manifests).served_apis()
    return Capabilities(target, served, book.served.group_versions())


def why_not_rendered(helm_path: str | None, render: bool) -> str | None:
    if not render:
        return "--no-render was given"
    if helm_path is None:
        return "helm was not found (set KUBEHOP_HELM, put helm on PATH, or run `kubehop tools install`)"
    return unsupported(helm_path)


def _charts_as_text(charts: list[str], why: str, paths: list[str], capabilities: Any) -> ScanInput:
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
