"""What a check is given and builds its findings with: the ScanContext of a scan, the Check type,
and `rule_finding`, the finding of an API or field rule. The check modules stand on this, and the
registry (checks/__init__.py) on them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from scanner.crds import CrdIndex
from scanner.model import Finding, Manifest, Origin
from scanner.rulebook import ApiRule, FieldRule, Rulebook
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.cluster_state import ClusterState
    from scanner.components.state import Timeline


@dataclass(frozen=True)
class ScanContext:
    target: Minor
    rulebook: Rulebook
    current: Minor | None = None  # --from: the minor the cluster runs today
    # `current` was read from the tree itself (its upgrade orders or version variables, no --from, no
    # cluster dump): checks of those orders must not compare them with their own reading.
    current_from_tree: bool = False
    current_said_by: str = "--from"  # where `current` was read, for a person (scanner.current_minor)
    crds: CrdIndex = field(default_factory=CrdIndex)  # the CRDs among the scanned manifests
    cluster: ClusterState | None = None  # --cluster-state: what the cluster holds today
    # The component state of the whole tree (pins in files too), resolved by the scan; None: the
    # component checks resolve it from the manifests they get.
    components: Timeline | None = None
    unknown: str = "warn"  # --unknown: what a fact nobody states counts as (warn, block, ignore)
    # What the tree configures the cluster's components and clients with (scanner.cluster_config:
    # Settings and ToolPins, read by sources/cluster/).
    cluster_config: tuple = ()
    tool_pins: tuple = ()


Check = Callable[[Sequence[Manifest], ScanContext], Iterable[Finding]]


def rule_finding(manifest: Manifest, rule: ApiRule | FieldRule, removed: bool, message: str,
                 origin: Origin | None = None, **extra) -> Finding:
    """A finding about `manifest` from a rule (API or field: both carry id, minors, replacement, note, source).

    `extra` sets further Finding fields, or overrides the rule's (the replacement the target serves; the id
    and minor of a finding about a reference to the rule's API)."""
    fields = dict(rule_id=rule.id, breaks_in=rule.removed_in, deprecated_in=rule.deprecated_in,
                  replacement=rule.replacement, note=rule.note, source_url=rule.source)
    return Finding(
        severity="error" if removed else "warning",
        message=message,
        origin=origin or manifest.origin,
        api_version=manifest.api_version,
        kind=manifest.kind,
        name=manifest.name,
        namespace=manifest.namespace,
        **{**fields, **extra},
    )
