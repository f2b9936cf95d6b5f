"""The registry of checks, built from the modules of this package: nothing lists them by hand.

A module of scanner/checks is a check when it declares one (scanner/checks/__init__.py says how):

    SCOPE = OBJECT          # or TREE: when the scan runs it
    RULES = {"crd/unserved-version": RuleInfo(title, description, "error", help_url), ...}
    def check(manifests, context) -> Iterable[Finding]: ...

`RULES` is a mapping of fixed ids, or `Rules(build, pattern=..., data=...)` when the ids are the
data's (every API rule of the rulebook, every component of the catalog) or their descriptions are.
Modules that declare neither SCOPE nor `check` are the checks' helpers. A finding whose rule its
check does not declare is refused (`refuse_undeclared`): a bug in kubehop, which `run_checks`
makes an input problem at the finding's object (scanner.guard; KUBEHOP_DEBUG=1 raises it).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from scanner.checks import ScanContext
    from scanner.model import Finding, Manifest
    from scanner.rulebook import Rulebook

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


class Rules:
    """Rules built on first use: the data's ids (`pattern` says how they read, `data` where they are
    declared), or fixed ids whose description or source is in the data. `build` gets the scan's
    rulebook (a project's own rule folders add API and field rules). `made` answers for ids made at
    scan time from what the tree pins (a chart tracked by its own versions), told by their form."""

    def __init__(self, build: Callable[["Rulebook"], Mapping[str, RuleInfo]], pattern: str | None = None,
                 data: str | None = None, made: Callable[[str], RuleInfo | None] | None = None):
        self.build, self.pattern, self.data, self.made = build, pattern, data, made
        self._built: dict[int, tuple["Rulebook", Mapping[str, RuleInfo]]] = {}

    def of(self, rulebook: "Rulebook") -> Mapping[str, RuleInfo]:
        held = self._built.get(id(rulebook))
        if held is None or held[0] is not rulebook:
            held = self._built[id(rulebook)] = (rulebook, _valid(self.build(rulebook), self.pattern or "Rules"))
        return held[1]


class Check(Protocol):
    """What a check module declares; the module itself is the check."""

    SCOPE: str
    RULES: Mapping[str, RuleInfo] | Rules

    def check(self, manifests: Sequence["Manifest"], context: "ScanContext") -> Iterable["Finding"]: ...


class RegistryError(Exception):
    """A module of scanner/checks that declares its check wrongly: a bug, which the tests find."""


class UndeclaredRule(Exception):
    """A check made a finding of a rule it does not declare."""


@functools.cache
def checks() -> tuple[ModuleType, ...]:
    """Every check module, by name."""
    import scanner.checks as package

    found = []
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        if hasattr(module, "SCOPE") or hasattr(module, "check"):
            _validate(module)
            found.append(module)
    return tuple(found)


def _validate(module: ModuleType) -> None:
    name = check_name(module)
    if getattr(module, "SCOPE", None) not in SCOPES:
        raise RegistryError(f"check {name}: SCOPE must be one of {', '.join(SCOPES)}")
    if not callable(getattr(module, "check", None)):
        raise RegistryError(f"check {name}: it declares no check(manifests, context) function")
    rules = getattr(module, "RULES", None)
    if isinstance(rules, Mapping):
        _valid(rules, f"check {name}")
    elif not isinstance(rules, Rules):
        raise RegistryError(f"check {name}: RULES must be a mapping of rule ids to RuleInfo, or Rules")


def _valid(rules: Mapping[str, RuleInfo], where: str) -> Mapping[str, RuleInfo]:
    for rule_id, info in rules.items():
        if not isinstance(info, RuleInfo) or info.severity not in SEVERITIES:
            raise RegistryError(f"{where}: rule {rule_id} needs a RuleInfo with a severity of {', '.join(SEVERITIES)}")
    return rules


def check_name(check: ModuleType) -> str:
    return check.__name__.rpartition(".")[2]


def of_scope(scope: str) -> list[ModuleType]:
    return [check for check in checks() if check.SCOPE == scope]


def rules_of(check: ModuleType, rulebook: "Rulebook") -> Mapping[str, RuleInfo]:
    """The rules `check` declares, with the scan's rulebook (not those made at scan time: `info_of`)."""
    rules = check.RULES
    return rules.of(rulebook) if isinstance(rules, Rules) else rules


def info_of(check: ModuleType, rule_id: str, rulebook: "Rulebook") -> RuleInfo | None:
    """What `rule_id` is, if `check` declares it."""
    info = rules_of(check, rulebook).get(rule_id)
    made = check.RULES.made if isinstance(check.RULES, Rules) else None
    if info is None and made is not None:
        info = made(rule_id)
        if info is not None:
            _valid({rule_id: info}, f"check {check_name(check)}")
    return info


def describe(rule_ids: Iterable[str], rulebook: "Rulebook") -> dict[str, RuleInfo]:
    """What each of `rule_ids` is, from the check that declares it (the reports' rule metadata)."""
    found: dict[str, RuleInfo] = {}
    for rule_id in sorted(set(rule_ids)):
        info = next((i for check in checks() for i in [info_of(check, rule_id, rulebook)] if i is not None), None)
        if info is not None:
            found[rule_id] = info
    return found


def rules_from(data: str, rulebook: "Rulebook") -> Mapping[str, RuleInfo]:
    """The rules the data at `data` declares ("rules/core", "rules/fields"...): what `kubehop rules` lists."""
    for check in checks():
        if isinstance(check.RULES, Rules) and check.RULES.data == data:
            return rules_of(check, rulebook)
    raise RegistryError(f"no check declares its rules from {data}")


def refuse_undeclared(check: ModuleType, findings: Iterable["Finding"], rulebook: "Rulebook",
                      refused: Callable[["Finding", UndeclaredRule], None] | None = None) -> Iterator["Finding"]:
    """`findings` of rules `check` declares; any other is handed to `refused` (None: raised)."""
    rules = rules_of(check, rulebook)
    for finding in findings:
        if finding.rule_id in rules or info_of(check, finding.rule_id, rulebook) is not None:
            yield finding
            continue
        error = UndeclaredRule(f"the {check_name(check)} check made a finding of rule {finding.rule_id!r}, "
                               "which it does not declare")
        if refused is None:
            raise error
        refused(finding, error)
