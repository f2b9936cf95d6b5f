"""The one analysis of a tree: paths and minors in, an Analysis out.

sources -> manifests -> checks -> findings -> policy. `kubehop scan`, `plan`, `components` and
`inventory` are views of the same Analysis, so a new input or check enters here once and shows in
every command and report with the same counts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from scanner.checks import RuleInfo, ScanContext, per_object_checks, run_checks, tree_checks
from scanner.checks.registry import Described, describe
from scanner.cluster_state import ClusterState, live_notice, load_cluster_state, split_live
from scanner.crds import CrdIndex
from scanner.current_minor import CurrentMinor, given_by, resolve_current
from scanner.freshness import data_checked, relied_on
from scanner.model import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK, Diagnostic, Finding, Manifest
from scanner.options import ScanOptions
from scanner.policy import apply_policy, latent_as_warnings, not_deployed_as_notices, not_deployed_problems
from scanner.rulebook import Rulebook, load_rulebook
from scanner.sources import ScanInput, collect
from scanner.sources.files.retention import Retention
from scanner.sources.files.walk import build_file
from scanner.sources.yaml.yamldoc import cyclic_gc_paused
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.clusters import Cluster
    from scanner.components.catalog import Catalog
    from scanner.components.pins import ClusterPin
    from scanner.components.state import Timeline
    from scanner.components.tree import TreeComponents
    from scanner.orders.read import UpgradeOrder
    from scanner.sources.cluster.tool_pins import ToolFiles


@dataclass
class ClusterAnalysis:
    """One cluster of a fleet repository (scanner.clusters) and its own analysis (scanner.fleet)."""

    cluster: Cluster
    analysis: Analysis


class NoCurrentMinor(Exception):
    """The analysis needs the cluster's current minor (a plan does) and nothing gives one."""


@dataclass
class Analysis:
    """Everything one analysis found: what each report and command reads."""

    target: Minor
    current: Minor | None
    findings: list[Finding]
    diagnostics: list[Diagnostic]
    unrendered: list[Diagnostic]
    files_read: int
    objects: int
    data_checked: str
    notices: list[str] = field(default_factory=list)
    fail_on: str = "error"
    # Findings the project's own policy left out, by what did it: `# kubehop: ignore` comments,
    # `ignore` in the configuration (or --ignore), the baseline; blockers the configuration's
    # `severity` made warnings; and files `exclude` left out ("excluded"). A pull request can change
    # all of it: reports say so.
    silenced: dict[str, int] = field(default_factory=dict)
    rendered_with: dict[str, str] = field(default_factory=dict)  # tool -> version, e.g. the helm that rendered
    isolation: dict[str, str] = field(default_factory=dict)  # tool -> how it was kept from the network
    # Where the minors came from (ScanOptions.target_source; CurrentMinor.source): the configuration may
    # be the pull request's, so every report says.
    target_source: str = "flag"
    configuration: str | None = None  # the configuration file read, if any
    # Where `current` was read (scanner.current_minor), the objects read, what the tree pins and the
    # component state they give: what `plan` and `components` show.
    current_from: CurrentMinor = field(default_factory=lambda: CurrentMinor(None))
    manifests: list[Manifest] = field(default_factory=list)
    tree: TreeComponents | None = None
    timeline: Timeline | None = None
    # What each rule the findings name is, from the check that declares it (scanner.checks.registry):
    # the rule metadata reports show (SARIF's rules), the same whichever finding fired it first.
    rules: Mapping[str, RuleInfo] = field(default_factory=dict)
    # A fleet repository's clusters, each analysed on its own (scanner.fleet); empty: one cluster.
    clusters: list[ClusterAnalysis] = field(default_factory=list)
    # What the tree configures the cluster's components and clients with (scanner.cluster_config's
    # Settings and ToolPins, as the checks saw them): a folder holding only these was checked.
    cluster_config: tuple = ()
    tool_pins: tuple = ()
    # Each path given that gave nothing to check, and why: (path, "missing" or "empty"), scanner.given_paths.
    nothing_in: list[tuple[str, str]] = field(default_factory=list)
    # Every cluster of the fleet, when `--cluster` chose the one analysed: what else deploys its files.
    fleet: tuple[Cluster, ...] = ()
    # The upgrade orders among `manifests` (scanner.orders.read), read once: the checks, the cluster's
    # pins and the plan's orders are made of these.
    orders: tuple[UpgradeOrder, ...] = ()
    # The files read as not deployed: path -> "unlisted" (no kustomization lists it) or "unreached" (no
    # root of the tree reaches it); their findings are notices, their pins not the tree's.
    not_deployed: dict[str, str] = field(default_factory=dict)

    @property
    def current_source(self) -> str | None:
        return self.current_from.source

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def input_errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def exit_code(self) -> int:
        # Unreadable input wins, whatever --fail-on: the scan is incomplete, so "nothing blocks" can't be claimed.
        if self.input_errors:
            return EXIT_INPUT
        failing = {"error": self.errors, "warning": self.errors + self.warnings, "never": []}[self.fail_on]
        return EXIT_BLOCKED if failing else EXIT_OK


def analyse(paths: list[str], target: Minor, current: Minor | None = None, options: ScanOptions = ScanOptions(),
            version_file: ClusterPin | None = None, need_current: bool = False,
            before_render: Callable[[ScanInput], None] | None = None) -> Analysis:
    """Everything kubehop knows of `paths` for the hops up to `target`. `current` is the user's word
    (ScanOptions.from_source says whether the flag or the configuration gave it); `version_file`, a saved
    `kubectl version`. `need_current`: raise NoCurrentMinor, before anything is rendered, when nothing
    gives the current minor (scanner.current_minor names what may). `before_render` sees what the plain
    files gave before anything is rendered, and may raise to stop there (scanner.fleet: the clusters)."""
    from scanner.components.catalog import load_catalog
    from scanner.components.cluster_pin import assigned_pins
    from scanner.cluster_config import manifest_urls as talos_manifest_urls
    from scanner.components.file_pins import manifest_url_pins
    from scanner.components.unlisted import unlisted_urls

    rulebook = load_rulebook(options.rule_folders)
    catalog = load_catalog()
    with cyclic_gc_paused():
        per_object = per_object_checks()
        early = _EarlyChecks(ScanContext(target=target, rulebook=rulebook), per_object, catalog)
        tools = _read_tool_files(paths, options)  # the files no manifest walk reads; .tfvars may pin the cluster
        assigned = assigned_pins(tools.cluster)
        needs_current = _CurrentFromPlainFiles(target, current, version_file, options, assigned) \
            if need_current else None
        hooks = [hook for hook in (before_render, needs_current) if hook is not None]

        def before_anything_renders(read: ScanInput) -> None:
            for hook in hooks:  # the caller's first (scanner.fleet: the clusters), then the current minor
                hook(read)

        scan_input: ScanInput = collect(paths, target, options, on_file=early,
                                        before_render=before_anything_renders if hooks else None)
        # Objects read from a cluster (a dump met in the tree) are cluster state, not desired state; those
        # of plain files were told apart as they were read, while their nodes were held (_EarlyChecks).
        read_early = scan_input.manifests[:early.checked]
        late, late_live, _ = split_live(scan_input.manifests[early.checked:])
        scan_input.manifests, live = read_early + late, early.live + late_live
        notices = [live_notice(live)] if live else []
        crds, cluster = CrdIndex.from_manifests(scan_input.manifests), None
        if options.cluster_state or live:
            cluster, problems = load_cluster_state(list(options.cluster_state), live)
            scan_input.diagnostics.extend(problems)
            crds = crds.then(cluster.crds)  # a custom resource whose CRD is not in the tree
        _tool_files(scan_input, tools)
        orders = _orders(scan_input.manifests)
        tree = _pins(scan_input, catalog, early, orders)
        tree.cluster += assigned
        # What Talos applies: the URLs of machine-configuration templates, configs and talhelper patches.
        applied = [*tools.manifest_urls, *talos_manifest_urls(scan_input.cluster_config)]
        tree.detections += manifest_url_pins(applied, catalog)
        tree.unlisted += unlisted_urls(applied, catalog)
        found = resolve_current(target, current, given_by(options), version_file, cluster, tree.cluster)
        notices += found.notices
        if need_current and found.minor is None:
            raise NoCurrentMinor(_no_current(found))
        timeline = _components(tree, scan_input, catalog, target, found.minor, options)
        # What the stale-data notice dates: the components judged, and those whose CRDs' objects were read.
        relied_on({d.component for d in tree.detections}
                  | {owner.name for group in {m.group for m in scan_input.manifests}
                     if group and (owner := catalog.crd_owner(group + '/')) is not None})
        context = ScanContext(target=target, current=found.minor, rulebook=rulebook, crds=crds, cluster=cluster,
                              current_from_tree=found.from_tree, current_said_by=found.said_by,
                              components=timeline, unknown=options.unknown,
                              cluster_config=tuple(scan_input.cluster_config),
                              tool_pins=tuple(scan_input.tool_pins),
                              duplicate_keys=tuple(scan_input.duplicate_keys), orders=orders)
        findings = run_checks(scan_input.manifests, context, scan_input.diagnostics, tree_checks()) \
            + run_checks(late, context, scan_input.diagnostics, per_object) + early.findings
        findings = latent_as_warnings(_settled(findings, scan_input, cluster, rulebook), scan_input.latent)
        findings, not_deployed = not_deployed_as_notices(findings, scan_input.unreferenced, scan_input.unreached)
        notices += not_deployed
    findings, unused, policy_notices, silenced = apply_policy(findings, scan_input.suppressions, options)
    silenced["excluded"] = scan_input.excluded
    if scan_input.excluded:
        policy_notices.append(f"files left out by `exclude` (the configuration's, or --exclude): {scan_input.excluded}")
    diagnostics = not_deployed_problems(scan_input.diagnostics, scan_input.unreferenced, scan_input.unreached) + unused
    projection = rulebook.projection_notice(target)
    return Analysis(
        target=target,
        current=found.minor,
        findings=findings,
        notices=([projection] if projection else []) + scan_input.notices + notices + policy_notices,
        diagnostics=sorted(diagnostics, key=lambda d: (d.path, d.line or 0, d.message)),
        unrendered=sorted(scan_input.unrendered, key=lambda d: d.path),
        files_read=scan_input.files_read,
        objects=sum(not build_file(m.origin) for m in scan_input.manifests),
        data_checked=data_checked(),
        fail_on=options.fail_on,
        silenced=silenced,
        rendered_with=scan_input.rendered_with,
        isolation=scan_input.isolation,
        target_source=options.target_source,
        configuration=options.configuration,
        current_from=found,
        manifests=scan_input.manifests,
        tree=tree,
        timeline=timeline,
        cluster_config=tuple(scan_input.cluster_config),
        tool_pins=tuple(scan_input.tool_pins),
        rules=Described(functools.partial(describe, {f.rule_id for f in findings}, rulebook)),
        orders=orders,
        not_deployed={**dict.fromkeys(scan_input.unreached, "unreached"),
                      **dict.fromkeys(scan_input.unreferenced, "unlisted")},
    )


def _no_current(found: CurrentMinor) -> str:
    if found.notices:
        return found.notices[0]
    return ("the tree pins no cluster version (no upgrade orders, no version variables): give --from, "
            "--cluster-version-file or --cluster-state")


class _EarlyChecks:
    """Run on each document of a plain file as soon as it is read (sources.FileHook): the per-object
    checks and the component pins of its objects, while their nodes are held; then the nodes are let go
    (sources/files/retention.py), so a scan's memory grows neither with its tree nor with its largest
    file. What it finds is kept here, not in the sources' ScanInput."""

    def __init__(self, context: ScanContext, checks: Sequence, catalog: Catalog):
        from scanner.components.detect import ObjectPins

        self.context, self.checks = context, checks
        self._object_pins = ObjectPins(catalog)
        self._retention = Retention()
        self.checked = 0  # the first `checked` objects of the sources' input: those of the plain files
        self.live: list[Manifest] = []  # objects of those files that carry server-side state (split_live)
        self.findings: list[Finding] = []  # the per-object checks' findings on the other objects
        self.pins: list = []  # their component pins (scanner.components.pins.Detection)

    def __call__(self, found: ScanInput) -> tuple[list[Manifest], tuple[list[Finding], list, int]]:
        found.manifests, live, _ = split_live(found.manifests)
        findings = run_checks(found.manifests, self.context, found.diagnostics, self.checks)
        pins = self._object_pins.of(found.manifests, found.diagnostics)
        self._retention.release(found.manifests)
        return live, (findings, pins, len(found.manifests))

    def keep(self, live: list[Manifest], kept: tuple[list[Finding], list, int]) -> None:
        findings, pins, checked = kept
        self.live += live
        self.findings += findings
        self.pins += pins
        self.checked += checked


class _CurrentFromPlainFiles:
    """Before any chart is rendered or kustomization built: the current minor from what the plain files
    and the dumps say, so that a plan with nothing to start from stops before the costly part. (A pin
    only a render would bring is not waited for.)"""

    def __init__(self, target: Minor, current: Minor | None, version_file: ClusterPin | None, options: ScanOptions,
                 tool_file_pins: Sequence[ClusterPin] = ()):
        self.target, self.current, self.version_file, self.options = target, current, version_file, options
        self.tool_file_pins = list(tool_file_pins)  # those of the files no manifest walk reads (.tfvars)

    def __call__(self, read: ScanInput) -> None:
        if self.current is not None or self.version_file is not None or self.options.cluster_state:
            return  # the user's or the cluster's word, whatever the tree says
        from scanner.components.cluster_pin import cluster_pins_in_manifests
        from scanner.components.file_pins import cluster_variables_in

        pins = list(cluster_pins_in_manifests(read.manifests)) + cluster_variables_in(read.documents) \
            + self.tool_file_pins
        found = resolve_current(self.target, pins=pins)
        if found.minor is None:
            raise NoCurrentMinor(_no_current(found))


def _read_tool_files(paths: list[str], options: ScanOptions) -> ToolFiles:
    """The files the manifest walk does not read (.tool-versions, env files, Dockerfiles, containerd
    templates, .tfvars), read before anything else: a plan that needs the current minor may need theirs."""
    from scanner.sources.cluster.tool_pins import read_tool_files

    return read_tool_files([p for p in paths if p not in options.cluster_state], options.exclude)


def _tool_files(scan_input: ScanInput, found: ToolFiles) -> None:
    """Their client tools and node files join what the plain files gave."""
    scan_input.tool_pins += found.pins
    scan_input.cluster_config += found.settings
    scan_input.diagnostics += found.diagnostics
    scan_input.files_read += found.files_read


def _orders(manifests: list[Manifest]) -> tuple[UpgradeOrder, ...]:
    """The tree's upgrade orders; scanner.orders' readers imported only for a tree that has some."""
    from scanner.orders import may_hold_orders

    if not may_hold_orders(manifests):
        return ()
    from scanner.orders.read import read_orders

    return tuple(read_orders(manifests))


def _settled(findings: list[Finding], scan_input: ScanInput, cluster: ClusterState | None,
             rulebook: Rulebook) -> list[Finding]:
    """An in-tree volume type keeps working through CSI migration where the tree installs its CSI driver
    (scanner.csi_migration, imported only when a finding is of a volume type CSI migration moves)."""
    migrated = {rule.id for rule in rulebook.field_rules.rules if rule.csi_migration is not None}
    if not any(finding.rule_id in migrated for finding in findings):
        return findings
    from scanner.csi_migration import installed_drivers, settle

    drivers = installed_drivers(scan_input.manifests, scan_input.latent,
                                {**scan_input.unreferenced, **scan_input.unreached}, cluster)
    return settle(findings, drivers, rulebook)


def _pins(scan_input: ScanInput, catalog: Catalog, early: _EarlyChecks,
          orders: Sequence[UpgradeOrder]) -> TreeComponents:
    from scanner.components.reading import pins_of

    return pins_of(scan_input, catalog, (early.pins, early.checked), orders)


def _components(tree: TreeComponents, scan_input: ScanInput, catalog: Catalog, target: Minor,
                current: Minor | None, options: ScanOptions) -> Timeline:
    """The component state of the whole tree (the notices of what could not be read of the charts' own
    constraints join the analysis')."""
    from scanner.components.tree import component_timeline
    from scanner.components.chart_index import chart_versions

    charts = chart_versions(tree.charts, options.allow_network)
    scan_input.notices.extend(charts.notices)
    return component_timeline(tree, catalog, target, current, options.unknown, charts)
