"""One repository, several clusters: each analysed on its own, then seen together.

Each cluster the repository declares (scanner.clusters) is analysed as a tree of its own: its current
minor from its own pins, its own components, the shared files checked once per cluster that deploys
them. The fleet's Analysis holds every cluster's, and their findings once each, a finding in a shared
base naming every cluster it breaks (Finding.clusters); the verdict counts each finding once.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Sequence

from scanner import per_scan
from scanner.analysis import Analysis, ClusterAnalysis, NoCurrentMinor, analyse
from scanner.checks import sort_findings
from scanner.checks.registry import Described
from scanner.clusters import Cluster, flux_clusters
from scanner.current_minor import CurrentMinor
from scanner.model import Diagnostic, Finding
from scanner.options import ScanOptions
from scanner.paths import where
from scanner.sources import ScanInput, collect
from scanner.sources.files.retention import Retention
from scanner.versions import Minor


class FleetChoiceError(Exception):
    """--cluster names no cluster of the tree, or --from was given for a tree of several clusters."""


def find_clusters(paths: list[str], options: ScanOptions) -> list[Cluster]:
    """The clusters the configuration names, else those Flux is bootstrapped into, else the destinations
    of the Argo CD Applications; none for one cluster."""
    return _clusters_and_objects(paths, options)[0]


def _clusters_and_objects(paths: list[str], options: ScanOptions) -> tuple[list[Cluster], ScanInput]:
    if "-" in paths:  # standard input is one stream: no folders to tell clusters apart by
        return in_rollout_order(options.clusters, options.rollout), ScanInput()
    plain = _plain_manifests(paths, options)
    if options.clusters:
        return in_rollout_order(options.clusters, options.rollout), plain
    return _declared(plain, paths, options.rollout), plain


def _declared(plain: ScanInput, paths: list[str], rollout: Sequence[str]) -> list[Cluster]:
    """The clusters Flux is bootstrapped into, else the Argo CD Applications' destinations: none for one."""
    found = flux_clusters(plain.manifests, paths, plain.unreferenced)
    if len(found) < 2 and any(m.group == "argoproj.io" for m in plain.manifests):
        from scanner.argo_clusters import argo_clusters  # here: a tree with no Argo CD object needs none of it

        found = argo_clusters(plain.manifests, paths)
    return in_rollout_order(found, rollout) if len(found) > 1 else []


class _FleetFound(Exception):
    def __init__(self, clusters: list[Cluster], plain: ScanInput):
        self.clusters, self.plain = clusters, plain


class _Discovery:
    """Before anything renders, the clusters the plain files declare: the tree's own analysis goes on
    when it is one cluster (its plain files read once), and stops for the fleet's when it is several."""

    def __init__(self, paths: list[str], rollout: Sequence[str], only: str | None):
        self.paths, self.rollout, self.only = paths, rollout, only

    def __call__(self, read: ScanInput) -> None:
        clusters = _declared(read, self.paths, self.rollout)
        if clusters:
            raise _FleetFound(clusters, read)
        if self.only is not None:
            raise FleetChoiceError(f"--cluster {self.only}: the tree declares one cluster only")


def in_rollout_order(clusters: Sequence[Cluster], rollout: Sequence[str]) -> list[Cluster]:
    """The clusters `rollout:` names, in its order, then the others in theirs."""
    rank = {name: i for i, name in enumerate(rollout)}
    return sorted(clusters, key=lambda c: rank.get(c.name, len(rank)))  # stable: the others keep their order


def _rollout_notices(clusters: Sequence[Cluster], rollout: Sequence[str]) -> list[str]:
    names = {c.name for c in clusters}
    unknown = [name for name in rollout if name not in names]
    if not unknown or not clusters:
        return []
    return [f"the configuration's rollout names {', '.join(unknown)}: no cluster of the tree is called so "
            f"(its clusters: {', '.join(c.name for c in clusters)})"]


@per_scan.scope()  # the clusters' analyses read the same files: one cache for them all
def analyse_fleet(paths: list[str], target: Minor, current: Minor | None = None,
                  options: ScanOptions = ScanOptions(), only: str | None = None, **analysis) -> Analysis:
    """The analysis of `paths`, cluster by cluster where the repository declares several (`only`: that one
    cluster); `analysis`: what scanner.analysis.analyse takes besides."""
    if "-" in paths or options.clusters:
        clusters, plain = _clusters_and_objects(paths, options)
    else:  # the clusters are told by the plain files: those the analysis of the whole tree reads first
        try:
            return analyse(paths, target, current, options, **analysis,
                           before_render=_Discovery(paths, options.rollout, only))
        except _FleetFound as fleet:
            clusters, plain = fleet.clusters, fleet.plain
    if clusters:  # each cluster reads part of the repository; the repository still ends where it did, and
        # what no root of it reaches is what the whole repository's reading found (sources/reach)
        options = dataclasses.replace(options, repository_roots=tuple(p for p in paths if p != "-"),
                                      not_deployed=_not_deployed(plain))
    if only is not None or not clusters:
        plain = ScanInput()  # what the files no cluster deploys are told by: a tree's objects need not outlive that
    if only is not None:
        names = [c.name for c in clusters]
        if only not in names:
            raise FleetChoiceError(f"--cluster {only}: " + (f"the tree's clusters are {', '.join(names)}" if names
                                                            else "the tree declares one cluster only"))
        fleet, clusters = tuple(clusters), [c for c in clusters if c.name == only]
        if current is not None:
            return _one(clusters[0], analyse(list(clusters[0].paths), target, current, options, **analysis), fleet)
        return _one(clusters[0], _analyse_cluster(clusters[0], target, options, analysis), fleet)
    if not clusters:
        return analyse(paths, target, current, options, **analysis)
    if current is not None:  # the user's word, for every cluster (each as its own tree says is told apart)
        clusters = [dataclasses.replace(c, current=current) for c in clusters]
    views = [ClusterAnalysis(c, _analyse_cluster(c, target, options, analysis)) for c in clusters]
    left = _deployed_by_none(plain.manifests, views, options.repository_roots)
    notices = _from_for_all(current, views) if current is not None else []
    if left:  # checked as the whole tree was before: no cluster of the repository claims them
        rest = analyse(left, target, current, options, **{**analysis, "need_current": False})
        if rest.findings or rest.input_errors:
            views.append(ClusterAnalysis(Cluster(NO_CLUSTER, tuple(left), "no cluster of the repository deploys "
                                                                            "these files"), rest))
        else:
            notices.append(f"{len(left)} file(s) with Kubernetes objects that no cluster deploys were checked on "
                           "their own: nothing found")
    merged = merge(views)
    merged.notices += notices + _rollout_notices(clusters, options.rollout)
    return merged


NO_CLUSTER = "(no cluster)"


def _not_deployed(plain: ScanInput) -> tuple[tuple[str, str], ...]:
    """(real path, why) of each file no root of the repository reaches."""
    return tuple(sorted((os.path.realpath(path), why) for path, why in plain.unreached.items()))


def _from_for_all(current: Minor, views: Sequence[ClusterAnalysis]) -> list[str]:
    """What --from means in a tree of several clusters: that minor for each; a cluster whose own tree
    pins another minor is named, with its pin."""
    names = ", ".join(v.cluster.name for v in views)
    said = [f"--from {current} was taken for each of the tree's {len(views)} clusters ({names})"]
    for view in views:
        pin = min(view.analysis.tree.cluster, key=lambda p: p.minor, default=None) if view.analysis.tree else None
        if pin is not None and pin.minor != current:
            said.append(f"cluster {view.cluster.name}: its tree pins {pin.minor} ({pin.what} {pin.version} at "
                        f"{where(pin.origin.path, pin.origin.line)}), not {current}; without --from each cluster "
                        "starts from its own minor")
    return said


def _deployed_by_none(plain: Sequence, views: Sequence[ClusterAnalysis], roots: Sequence[str]) -> list[str]:
    """Files of the tree holding Kubernetes objects that no cluster's analysis read, nor lie under what a
    cluster deploys: its paths and the kustomizations they reach (read from the kustomization files, so
    that a shared base is a cluster's with --no-render too, where nothing is built)."""

    from scanner.containment import within
    from scanner.fleet_shared import deployed_folders
    from scanner.sources.files.walk import KUSTOMIZATION_FILES

    read = {os.path.realpath(m.origin.path) for v in views for m in v.analysis.manifests}
    root = roots[0] if roots else "."
    under = [folder for v in views for folder in deployed_folders(v.cluster.paths, root)]
    files = dict.fromkeys(m.origin.path for m in plain if m.group != "kustomize.config.k8s.io"
                          and os.path.basename(m.origin.path) not in KUSTOMIZATION_FILES)
    return [f for f in files if os.path.realpath(f) not in read
            and not any(within(os.path.realpath(f), folder) for folder in under)]


def _analyse_cluster(cluster: Cluster, target: Minor, options: ScanOptions, analysis: dict) -> Analysis:
    paths = list(cluster.paths)
    if not options.render:  # no kustomization is built: the bases its kustomizations reach are read as they are
        from scanner.fleet_shared import deployed_folders

        root = options.repository_roots[0] if options.repository_roots else "."
        paths = list(dict.fromkeys([*paths, *(f for f in deployed_folders(paths, root) if f not in map(
            os.path.realpath, paths))]))
    try:
        return analyse(paths, target, cluster.current, options, **analysis)
    except NoCurrentMinor as why:
        raise NoCurrentMinor(f"cluster {cluster.name}: {why} (or `from:` for it in the configuration's `clusters:`)") \
            from None


def _one(cluster: Cluster, analysis: Analysis, fleet: tuple[Cluster, ...]) -> Analysis:
    findings = [dataclasses.replace(f, clusters=(cluster.name,)) for f in analysis.findings]
    return dataclasses.replace(analysis, findings=findings, fleet=fleet,
                               clusters=[ClusterAnalysis(cluster, dataclasses.replace(analysis, findings=findings))])


def merge(views: Sequence[ClusterAnalysis]) -> Analysis:
    """The fleet as one Analysis: each finding once, naming the clusters it breaks in."""
    found: dict[tuple, Finding] = {}
    named: list[ClusterAnalysis] = []
    for view in views:
        mine = [dataclasses.replace(f, clusters=(view.cluster.name,)) for f in view.analysis.findings]
        for finding in mine:
            key = finding_key(finding)
            if key in found:
                found[key] = dataclasses.replace(found[key], clusters=found[key].clusters + (view.cluster.name,))
            else:
                found[key] = finding
        named.append(ClusterAnalysis(view.cluster, dataclasses.replace(view.analysis, findings=mine)))
    for view in named:  # each cluster's findings name every cluster they break in too
        view.analysis.findings = [dataclasses.replace(f, clusters=found[finding_key(f)].clusters)
                                  for f in view.analysis.findings]
    first = views[0].analysis
    analyses = [v.analysis for v in views]
    return Analysis(
        target=first.target, current=None,
        findings=sort_findings(found.values()),
        diagnostics=_once(d for a in analyses for d in a.diagnostics),
        unrendered=_once(d for a in analyses for d in a.unrendered),
        files_read=sum(a.files_read for a in analyses), objects=sum(a.objects for a in analyses),
        data_checked=first.data_checked,
        notices=_cluster_notices(views),
        fail_on=first.fail_on,
        silenced={key: sum(a.silenced.get(key, 0) for a in analyses) for key in first.silenced},
        rendered_with={k: v for a in analyses for k, v in a.rendered_with.items()},
        isolation={k: v for a in analyses for k, v in a.isolation.items()},
        target_source=first.target_source, configuration=first.configuration,
        current_from=CurrentMinor(None), manifests=[], clusters=named,
        rules=Described(lambda: {rule_id: info for a in analyses for rule_id, info in a.rules.items()}),
        not_deployed={path: kind for a in analyses for path, kind in a.not_deployed.items()})


def finding_key(finding: Finding) -> tuple:
    """The same finding, whichever cluster's analysis made it: one edit in one file."""
    return (finding.rule_id, finding.origin.path, finding.origin.line, finding.origin.column, finding.kind,
            finding.namespace, finding.name)


def _once(diagnostics) -> list[Diagnostic]:
    return sorted(dict.fromkeys(diagnostics), key=lambda d: (d.path, d.line or 0, d.message))


def _cluster_notices(views: Sequence[ClusterAnalysis]) -> list[str]:
    """A notice every cluster gave, once; one only some gave, with their names."""
    said: dict[str, list[str]] = {}
    for view in views:
        for notice in view.analysis.notices:
            said.setdefault(notice, []).append(view.cluster.name)
    everyone = len(views)
    return [notice if len(names) == everyone else f"cluster {', '.join(names)}: {notice}"
            for notice, names in said.items()]


class _Read(Exception):
    def __init__(self, read: ScanInput):
        self.read = read


class _NodesLetGo:
    """The fleet's look at the plain files keeps their objects for the rest of the scan, but of their
    nodes only those retention.py keeps (Flux's and Argo CD's objects, which name the clusters' folders):
    the others go as each file is read, as the analysis lets its own go (sources.FileHook)."""

    def __init__(self) -> None:
        self._retention = Retention()

    def __call__(self, found: ScanInput) -> tuple[list, None]:
        self._retention.release(found.manifests)
        return [], None

    def keep(self, taken: list, kept: None) -> None:
        pass


def _plain_manifests(paths: list[str], options: ScanOptions) -> ScanInput:
    """What the plain files under `paths` gave, nothing rendered: enough to see the clusters."""
    def stop(read: ScanInput) -> None:
        raise _Read(read)

    try:
        collect(paths, None, dataclasses.replace(options, render=False), on_file=_NodesLetGo(), before_render=stop)
    except _Read as done:
        return done.read
    return ScanInput()
