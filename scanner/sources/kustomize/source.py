"""Kustomizations into Manifests, as `collect` asks for them: each folder built by kustomize (or
`kubectl kustomize`) as Flux would build it (build.py, flux.py), its helmCharts rendered by
kubehop's helm at the scan's Capabilities (helm.py), every object pointed back at its file
(origins.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from scanner.model import Diagnostic, Manifest, Origin
from scanner.sources.helm import render as helm
from scanner.sources.helm.capture import find_helm, helm_version
from scanner.sources.helm.source import helm_settings, why_not_rendered
from scanner.sources.kustomize import build as kustomize, flux as kustomize_flux, namespaces
from scanner.sources.kustomize.charts import local_charts
from scanner.sources.kustomize.errors import said_once
from scanner.sources.kustomize.helm import HelmCharts
from scanner.sources.kustomize.origins import identity
from scanner.sources.kustomize.overlays import VERSION_PATH, Overlaid, chart_version
from scanner.sources.scan_input import ScanInput
from scanner.sources.tools import no_network
from scanner.sources.tools.find import kustomize_command
from scanner.nodes import value_at
from scanner.sources.postbuild.fill import filled_in
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.options import ScanOptions
    from scanner.sources.files.walk import ChartFolder, KustomizeFolder
    from scanner.sources.postbuild.plan import Plan
    from scanner.sources.registry import Reading


def read(folders: list["KustomizeFolder"], so_far: ScanInput, reading: "Reading") -> ScanInput:
    """The kustomizations built; a file that cannot be read is said once, by its reading (errors.py)."""
    built = build_kustomizations([folder.path for folder in folders], so_far.manifests, reading.target,
                                 reading.options, reading.scanned, reading.postbuild)
    so_far.diagnostics, built.diagnostics = said_once(so_far.diagnostics, built.diagnostics)
    return built


def build_kustomizations(folders: list[str], manifests: list[Manifest], target: Minor | None,
                         options: "ScanOptions", scanned: list[str], postbuild: "Plan | None" = None) -> ScanInput:
    result = ScanInput()
    command = kustomize_command() if options.render else None
    if command is None:  # worded like the notice for charts read as text
        why = ("--no-render was given" if not options.render else "neither kustomize nor kubectl found (set "
               "KUBEHOP_KUSTOMIZE or KUBEHOP_KUBECTL, put one on PATH, or run `kubehop tools install`)")
        result.unrendered.extend(Diagnostic(folder, "kustomization not built: its files were scanned as they are",
                                            level="notice") for folder in folders)
        plural = "s were" if len(folders) != 1 else " was"
        result.notices.append(f"{why}: {len(folders)} kustomization{plural} not built; their files were scanned "
                              "as they are")
        return result
    # An object already read from its own file (or from another build) is not reported again.
    seen = {identity(m) for m in manifests}
    read_at = {identity(m): m for m in manifests}
    charts = _kustomize_helm(manifests, target, options)
    result.isolation["kustomize"] = "none (--allow-network)" if options.allow_network else no_network.isolation()
    flux_paths, result.diagnostics = kustomize_flux.flux_paths(manifests, scanned)
    targets = kustomize_flux.target_namespaces(manifests, scanned)
    no_namespace = namespaces.cluster_scoped(manifests) if targets else frozenset()
    for outcome in kustomize.build_all(folders, command, options.allow_network, os.cpu_count() or 1, charts,
                                       scanned, flux_paths, manifests, options.kustomize_unrestricted):
        target = targets.get(os.path.realpath(outcome.folder))
        if target is not None:  # what Flux builds with a targetNamespace lands there (namespaces.py)
            namespaces.in_flux_namespace(outcome.manifests, target, no_namespace)
        if outcome.not_built:
            result.unrendered.append(Diagnostic(outcome.folder, outcome.not_built, level="notice"))
        result.unrendered.extend(outcome.unrendered)
        result.diagnostics.extend(outcome.diagnostics)
        result.duplicate_keys.extend(outcome.duplicate_keys)
        builders = postbuild.for_folder(outcome.folder) if postbuild is not None else ()
        for manifest in outcome.manifests:
            patchers = outcome.patched.get(id(manifest))
            if patchers is None and identity(manifest) in seen:
                continue
            if builders:  # as the Flux Kustomizations that build the folder apply it (sources/postbuild)
                manifest = filled_in(manifest, builders, result.diagnostics)
            if patchers is not None:
                overlaid = _overlaid(read_at.get(identity(manifest)), manifest, patchers)
                if overlaid is not None:
                    result.overlaid.append(overlaid)
                    continue
            if identity(manifest) not in seen:
                seen.add(identity(manifest))
                result.manifests.append(manifest)
    if charts.used:
        result.rendered_with["helm"] = helm_version(charts.settings.helm).text
        result.isolation["helm"] = helm.isolation(charts.settings)
    return result


def _overlaid(base: Manifest | None, built: Manifest, patchers: list[str]) -> Overlaid | None:
    """An object read from its own file that an overlay gives another chart version: kept apart, for
    its pin (the objects' findings stay the base file's)."""
    if base is None:
        return None
    version = chart_version(built)
    if version is None or version == chart_version(base):
        return None
    pin_at = built.filled_at(value_at(built.node, *VERSION_PATH)) or built.patched_at.get(VERSION_PATH) \
        or Origin(patchers[-1], 1, 1, built.origin.via)
    return Overlaid(base, built, pin_at)


def _kustomize_helm(manifests: list[Manifest], target: Minor | None, options: "ScanOptions"):
    """kubehop's helm for Kustomize helmCharts entries, at the same Capabilities as the scan's charts."""
    helm_path = find_helm() if options.render else None
    why_not = why_not_rendered(helm_path, options.render)
    if why_not:
        return HelmCharts(None, why_not, options.allow_network)
    return HelmCharts(helm_settings(helm_path, manifests, target, options), None, options.allow_network)


def claim(folders: list["KustomizeFolder"], charts: list["ChartFolder"], reading: "Reading") -> list["ChartFolder"]:
    """The chart folders left to the helm source: those a kustomization's helmCharts render are rendered
    there, with its values, not on their own (when kubehop can build kustomizations and render charts;
    else they are read as charts)."""
    if not reading.options.render or kustomize_command() is None or why_not_rendered(find_helm(), True):
        return charts
    try:
        used = local_charts([folder.path for folder in folders])
    except Exception:  # noqa: BLE001 - the kustomizations' own reading reports what is wrong with them
        return charts
    return [chart for chart in charts if os.path.realpath(chart.path) not in used]
