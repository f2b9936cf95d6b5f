"""What a check is given and declares itself with: the ScanContext of a scan, the Check protocol and
the words of a declaration (its SCOPE, its RULES). The check modules stand on this (and on
findings.py, the helpers they build their findings with), and the registry (registry.py) on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence

from scanner.crds import CrdIndex
from scanner.model import DuplicateKey, Finding, Manifest
from scanner.rulebook import Rulebook
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.cluster_state import ClusterState
    from scanner.components.state import Timeline


@dataclass(frozen=True)
class ScanContext:
    """What the analysis hands every check: the target and current minors, the rulebook and what the tree
    holds."""

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
    # Keys helm's output writes twice (sources/helm/rendered_duplicates.py): checks/duplicate_keys.py reports them.
    duplicate_keys: tuple[DuplicateKey, ...] = ()
    # What the tree configures the cluster's components and clients with (scanner.cluster_config:
    # Settings and ToolPins, read by sources/cluster/).
    cluster_config: tuple = ()
    tool_pins: tuple = ()
    # The upgrade orders of the manifests the tree checks get (scanner.orders.read), read once by the
    # analysis; None: the order checks read them from those manifests.
    orders: tuple | None = None

    def upgrade_orders(self, manifests: Sequence[Manifest]) -> Sequence:
        """The upgrade orders among `manifests`: the analysis' reading of them, when it gave one."""
        if self.orders is not None:
            return self.orders
        from scanner.orders.read import read_orders

        return read_orders(manifests)


OBJECT = "object"  # run on each file's objects as the file is read, while its nodes are held
TREE = "tree"  # run once over every object, with the whole context (CRDs, components, the cluster)
SCOPES = (OBJECT, TREE)
SEVERITIES = ("error", "warning", "notice")


@dataclass(frozen=True)
class RuleInfo:
    """What a rule is, for reports and `kubehop rules`: the same for every finding of it."""

    title: str  # what a finding of it says, in a few words
    description: str  # what it means and what clears it
    # Its findings' severity once it applies in full (error, warning, notice): a finding may say otherwise
    # (an API's is a warning before its removal, a component's what --unknown says).
    severity: str
    help_url: str | None = None  # where what it checks is documented
    entry: Any = None  # the data entry it is made from (an ApiRule, a FieldRule, a CrdRule...), if any


class RegistryError(Exception):
    """A check that declares itself wrongly, or rules the data does not describe: a bug, which the tests find."""


class Rules:
    """Rules built on first use: the data's ids (`pattern` says how they read, `data` where they are
    declared), or fixed ids whose description or source is in the data. `build` gets the scan's
    rulebook (a project's own rule folders add API and field rules). `made` answers for ids made at
    scan time from what the tree pins (a chart tracked by its own versions), told by their form."""

    def __init__(self, build: Callable[[Rulebook], Mapping[str, RuleInfo]], pattern: str | None = None,
                 data: str | None = None, made: Callable[[str], RuleInfo | None] | None = None):
        self.build, self.pattern, self.data, self.made = build, pattern, data, made
        self._built: dict[int, tuple[Rulebook, Mapping[str, RuleInfo]]] = {}

    def of(self, rulebook: Rulebook) -> Mapping[str, RuleInfo]:
        held = self._built.get(id(rulebook))
        if held is None or held[0] is not rulebook:
            held = self._built[id(rulebook)] = (rulebook, valid(self.build(rulebook), self.pattern or "Rules"))
        return held[1]


def valid(rules: Mapping[str, RuleInfo], where: str) -> Mapping[str, RuleInfo]:
    """`rules`, once each is seen to be a RuleInfo with a severity kubehop has."""
    for rule_id, info in rules.items():
        if not isinstance(info, RuleInfo) or info.severity not in SEVERITIES:
            raise RegistryError(f"{where}: rule {rule_id} needs a RuleInfo with a severity of {', '.join(SEVERITIES)}")
    return rules


class Check(Protocol):
    """What a check module declares; the module itself is the check (registry.py finds it)."""

    SCOPE: str
    RULES: Mapping[str, RuleInfo] | Rules

    def check(self, manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]: ...
