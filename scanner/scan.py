"""The scan as a service: paths in, a ScanResult out. The CLI and the tests both call this."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Sequence

from scanner import baseline, suppress
from scanner.checks import ScanContext, per_object_checks, run_checks, sort_findings, tree_checks
from scanner.cluster_state import ClusterState, live_notice, load_cluster_state, split_live
from scanner.crds import CrdIndex
from scanner.freshness import data_checked
from scanner.model import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK, Diagnostic, Finding
from scanner.options import ScanOptions
from scanner.report.paths import where as at_path
from scanner.rulebook import load_rulebook
from scanner.sources import ScanInput, collect
from scanner.sources.retention import Retention
from scanner.sources.yamldoc import cyclic_gc_paused
from scanner.versions import Minor


@dataclass
class ScanResult:
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
    # `ignore` in the configuration (or --ignore), the baseline; and blockers the configuration's
    # `severity` made warnings. A pull request can change all of it: reports say so.
    silenced: dict[str, int] = field(default_factory=dict)
    rendered_with: dict[str, str] = field(default_factory=dict)  # tool -> version, e.g. the helm that rendered

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


def scan(paths: list[str], target: Minor, current: Minor | None = None,
         options: ScanOptions = ScanOptions()) -> ScanResult:
    rulebook = load_rulebook(options.rule_folders)
    with cyclic_gc_paused():
        per_object = per_object_checks()
        early = _EarlyChecks(ScanContext(target=target, rulebook=rulebook), per_object)
        scan_input: ScanInput = collect(paths, target, options, on_file=early)
        # Objects read from a cluster (a dump met in the tree) are cluster state, not desired state; those
        # of plain files were told apart as they were read, while their nodes were held (_EarlyChecks).
        read_early = scan_input.manifests[:scan_input.checked_early]
        late, late_live, _ = split_live(scan_input.manifests[scan_input.checked_early:])
        scan_input.manifests, live = read_early + late, scan_input.live + late_live
        notices = [live_notice(live)] if live else []
        crds, cluster = CrdIndex.from_manifests(scan_input.manifests), None
        if options.cluster_state or live:
            cluster, problems = load_cluster_state(list(options.cluster_state), live)
            scan_input.diagnostics.extend(problems)
            current, minor_notices = _current_minor(current, cluster, target)
            notices += minor_notices
            crds = crds.then(cluster.crds)  # a custom resource whose CRD is not in the tree
        from_orders = current is None
        if from_orders:
            current, order_notices = _current_from_orders(scan_input.manifests, target)
            notices += order_notices
        context = ScanContext(target=target, current=current, rulebook=rulebook, crds=crds, cluster=cluster,
                              current_from_orders=from_orders and current is not None,
                              components=_components(scan_input, target, current, options),
                              unknown=options.unknown)
        findings = _latent_as_warnings(
            run_checks(scan_input.manifests, context, scan_input.diagnostics, tree_checks())
            + run_checks(late, context, scan_input.diagnostics, per_object) + scan_input.findings,
            scan_input.latent)
    findings, unused, policy_notices, silenced = apply_policy(findings, scan_input.suppressions, options)
    diagnostics = scan_input.diagnostics + unused
    projection = rulebook.projection_notice(target)
    return ScanResult(
        target=target,
        current=current,
        findings=findings,
        notices=([projection] if projection else []) + scan_input.notices + notices + policy_notices,
        diagnostics=sorted(diagnostics, key=lambda d: (d.path, d.line or 0, d.message)),
        unrendered=sorted(scan_input.unrendered, key=lambda d: d.path),
        files_read=scan_input.files_read,
        objects=len(scan_input.manifests),
        data_checked=data_checked(),
        fail_on=options.fail_on,
        silenced=silenced,
        rendered_with=scan_input.rendered_with,
    )


class _EarlyChecks:
    """Run on each plain file as soon as it is read: the per-object checks (their findings join the
    file's) and the component pins of its objects, while their nodes are held; then the nodes are let
    go (sources/retention.py), so a scan's memory does not grow with its tree."""

    def __init__(self, context: ScanContext, checks: Sequence):
        from scanner.components.catalog import load_catalog
        from scanner.components.detect import ObjectPins

        self.context, self.checks = context, checks
        self.pins = ObjectPins(load_catalog())
        self._retention = Retention()

    def __call__(self, found: ScanInput) -> None:
        found.manifests, live, _ = split_live(found.manifests)
        found.live += live
        found.findings += run_checks(found.manifests, self.context, found.diagnostics, self.checks)
        found.pins += self.pins.of(found.manifests, found.diagnostics)
        found.checked_early = len(found.manifests)
        self._retention.release(found.manifests)


def _components(scan_input: ScanInput, target: Minor, current: Minor | None, options: ScanOptions):
    """The component state of the whole tree, as `kubehop plan` resolves it (the notices of what
    could not be read of the charts' own constraints join the scan's)."""
    from scanner.components.catalog import load_catalog
    from scanner.components.reading import pins_of
    from scanner.components.tree import component_timeline
    from scanner.sources.chart_index import chart_versions

    catalog = load_catalog()
    tree = pins_of(scan_input, catalog)
    charts = chart_versions(tree.charts, options.allow_network)
    scan_input.notices.extend(charts.notices)
    return component_timeline(tree, catalog, target, current, options.unknown, charts)


def apply_policy(findings: list[Finding], suppressions: Sequence[suppress.Suppression],
                 options: ScanOptions) -> tuple[list[Finding], list[Diagnostic], list[str], dict[str, int]]:
    """Severity overrides, inline suppressions, ignored rules, then the baseline: the findings
    that remain, the suppressions that silenced nothing, notices of what was left out, and how
    many findings each left out (ScanResult.silenced)."""
    errors = sum(f.severity == "error" for f in findings)
    findings = _with_severity(findings, options.severity)
    silenced = {"demoted": errors - sum(f.severity == "error" for f in findings)}
    kept, unused = suppress.apply(findings, suppressions)
    silenced["comments"] = len(findings) - len(kept)
    notices = [f"findings suppressed by `# kubehop: ignore` comments: {silenced['comments']}"] \
        if silenced["comments"] else []
    findings = [f for f in kept if not suppress.rule_matches(f.rule_id, options.ignore)]
    silenced["configuration"] = len(kept) - len(findings)
    if silenced["configuration"]:
        notices.append(f"findings of rules ignored by the configuration or --ignore: {silenced['configuration']}")
    before = len(findings)
    if options.baseline:
        if options.write_baseline:
            baseline.write(options.baseline, findings)
        findings, recorded = baseline.apply(options.baseline, findings)
        notices.extend(recorded)
    silenced["baseline"] = before - len(findings)
    return findings, unused, notices, silenced


def _latent_as_warnings(findings: list[Finding], latent: set[str]) -> list[Finding]:
    """Findings sorted; those of templates a chart's values switch off (--all-templates) as warnings."""
    return sort_findings(dataclasses.replace(f, severity="warning") if f.origin.via in latent else f
                         for f in findings)


def _with_severity(findings: Sequence[Finding], overrides: Sequence[tuple[str, str]]) -> list[Finding]:
    """Findings with the severity the configuration gives their rule, if it gives one."""
    if not overrides:
        return list(findings)

    def severity(finding: Finding) -> str:
        chosen = [level for pattern, level in overrides if suppress.rule_matches(finding.rule_id, [pattern])]
        return chosen[-1] if chosen else finding.severity

    return [dataclasses.replace(f, severity=severity(f)) for f in findings]


def _current_minor(given: Minor | None, cluster: ClusterState, target: Minor) -> tuple[Minor | None, list[str]]:
    """--from, else the API server version of the cluster dump; a notice when they disagree."""
    dumped = cluster.server
    if dumped is None or dumped == given:
        return given, []
    if given is not None:
        return given, [f"--from {given} differs from the API server in the cluster dump ({dumped}); "
                       f"node skew is checked from the dump"]
    if dumped > target:
        return None, [f"the cluster dump's API server ({dumped}) is newer than --target {target}"]
    return dumped, [f"--from {dumped} taken from the cluster dump (API server {cluster.server_version})"]


def _current_from_orders(manifests, target: Minor) -> tuple[Minor | None, list[str]]:
    """--from read from the tree's upgrade orders (the oldest cluster's, when the tree holds several)."""
    from scanner.orders.read import cluster_pins, read_orders

    pins = sorted(cluster_pins(read_orders(manifests)), key=lambda order: order.minor)
    if not pins:
        return None, []
    pin = pins[0]
    where = f"{pin.what} {pin.version_text} at {at_path(pin.origin.path, pin.origin.line)}"
    if pin.minor > target:
        return None, [f"the tree's upgrade orders move the cluster to {pin.minor} ({where}), past --target {target}"]
    return pin.minor, [f"--from {pin.minor} taken from the tree's upgrade orders: {where}"]
