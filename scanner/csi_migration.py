"""The CSI drivers a tree installs, and what they do to the findings of in-tree volume types: a pass
over the checks' findings once the whole tree is read (scanner.analysis), not a check of its own.

A field rule with `csi_migration` (rules/fields/volumes.yaml) names the CSI driver that CSI migration
sends its in-tree volume type to. The per-object check (checks/field_rules.py) reads each object alone, before
the charts that may install that driver are rendered, so its findings say the object breaks unless the
driver is installed and that kubehop sees none in the tree. Once the whole tree is read, `settle` makes
those whose driver the tree installs (a CSIDriver object of that name, deployed: not in a template its
chart's values switch off, not in a file no kustomization lists) or the cluster state holds warnings:
the object keeps working through CSI migration, and moving to the CSI driver is the lasting fix.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Collection, Iterable, Mapping

from scanner.checks.field_rules import verdict
from scanner.model import Finding, Manifest, Origin
from scanner.paths import where
from scanner.rulebook import FieldCheck, FieldRule, Rulebook

if TYPE_CHECKING:
    from scanner.cluster_state import ClusterState

_GROUP, _KIND = "storage.k8s.io", "CSIDriver"


@dataclasses.dataclass(frozen=True)
class InstalledDriver:
    origin: Origin  # its CSIDriver object
    from_cluster: bool = False  # read from the cluster state, not from the tree's manifests


def installed_drivers(manifests: Iterable[Manifest], latent: Collection[str] = frozenset(),
                      unreferenced: Mapping[str, str] | None = None,
                      cluster: ClusterState | None = None) -> dict[str, InstalledDriver]:
    """The CSIDriver objects the tree deploys, by name (the first of each), then those of the cluster state."""
    found: dict[str, InstalledDriver] = {}
    for manifest in manifests:
        if _is_driver(manifest) and manifest.origin.via not in latent \
                and manifest.origin.path not in (unreferenced or {}):
            found.setdefault(manifest.name, InstalledDriver(manifest.origin))
    for manifest in cluster.objects if cluster is not None else ():
        if _is_driver(manifest):
            found.setdefault(manifest.name, InstalledDriver(manifest.origin, from_cluster=True))
    return found


def _is_driver(manifest: Manifest) -> bool:
    return manifest.group == _GROUP and manifest.kind == _KIND and bool(manifest.name)


def settle(findings: Iterable[Finding], drivers: Mapping[str, InstalledDriver], rulebook: Rulebook) -> list[Finding]:
    """`findings`, those of a CSI-migrated volume type whose driver is installed made warnings that say so."""
    migrated = {rule.id: rule for rule in rulebook.field_rules.rules if rule.csi_migration is not None}
    settled = []
    for finding in findings:
        rule = migrated.get(finding.rule_id)
        driver = drivers.get(rule.csi_migration.driver) if rule is not None else None
        settled.append(finding if driver is None else _kept_working(finding, rule, driver))
    return settled


def _kept_working(finding: Finding, rule: FieldRule, driver: InstalledDriver) -> Finding:
    name = rule.csi_migration.driver
    since = f" since {rule.deprecated_in}" if rule.deprecated_in else ""
    has = "the cluster state has" if driver.from_cluster else "the tree installs"
    said = (f"{rule.title} is deprecated{since}, and keeps working through CSI migration because {has} the "
            f"{name} CSI driver (CSIDriver {name} at {where(driver.origin.path, driver.origin.line)})")
    return dataclasses.replace(finding, severity="warning", breaks_in=None, message=f"{_where(finding, rule)}: {said}",
                               fix=f"use {rule.replacement} (the lasting fix)" if rule.replacement else finding.fix)


def _where(finding: Finding, rule: FieldRule) -> str:
    """The path the finding names: its message less what field_rules.verdict said after it."""
    for provisioning in (True, False):
        for removed in (True, False):
            said = f": {verdict(FieldCheck(rule, provisioning=provisioning), finding.breaks_in, removed)}"
            if finding.message.endswith(said):
                return finding.message[:-len(said)]
    return finding.message.partition(": ")[0]
