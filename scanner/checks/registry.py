"""The registry of checks, built from the modules of this package: nothing lists them by hand.

A module of scanner/checks is a check when it declares one (scanner/checks/__init__.py says how, in
the words of scanner/checks/context.py):

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
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

from scanner.checks.context import SCOPES, RegistryError, RuleInfo, Rules, valid

if TYPE_CHECKING:
    from scanner.model import Finding
    from scanner.rulebook import Rulebook


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
        valid(rules, f"check {name}")
    elif not isinstance(rules, Rules):
        raise RegistryError(f"check {name}: RULES must be a mapping of rule ids to RuleInfo, or Rules")


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
            valid({rule_id: info}, f"check {check_name(check)}")
    return info


def describe(rule_ids: Iterable[str], rulebook: "Rulebook") -> dict[str, RuleInfo]:
    """What each of `rule_ids` is, from the check that declares it (the reports' rule metadata)."""
    found: dict[str, RuleInfo] = {}
    for rule_id in sorted(set(rule_ids)):
        info = next((i for check in checks() for i in [info_of(check, rule_id, rulebook)] if i is not None), None)
        if info is not None:
            found[rule_id] = info
    return found


class Described(Mapping):
    """`describe(rule_ids, rulebook)`, made when it is first read (only SARIF reports read the rules'
    metadata; other reports and `plan` never do): a mapping of rule id -> RuleInfo."""

    def __init__(self, make: Callable[[], Mapping[str, RuleInfo]]):
        self._make: Callable[[], Mapping[str, RuleInfo]] | None = make
        self._found: Mapping[str, RuleInfo] = {}

    def _rules(self) -> Mapping[str, RuleInfo]:
        if self._make is not None:
            self._found, self._make = self._make(), None
        return self._found

    def __getitem__(self, rule_id: str) -> RuleInfo:
        return self._rules()[rule_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules())

    def __len__(self) -> int:
        return len(self._rules())

    def __repr__(self) -> str:
        return repr(dict(self._rules()))


def rules_from(data: str, rulebook: "Rulebook") -> Mapping[str, RuleInfo]:
    """The rules the data at `data` declares ("rules/core", "rules/fields"...): what `kubehop rules` lists."""
    for check in checks():
        if isinstance(check.RULES, Rules) and check.RULES.data == data:
            return rules_of(check, rulebook)
    raise RegistryError(f"no check declares its rules from {data}")


def refuse_undeclared(check: ModuleType, findings: Iterable["Finding"], rulebook: "Rulebook",
                      refused: Callable[["Finding", UndeclaredRule], None] | None = None) -> Iterator["Finding"]:
    """`findings` of rules `check` declares; any other is handed to `refused` (None: raised). The rules
    are built at the first finding: most checks find nothing, and building theirs (from every API rule,
    every component) would read data only a finding needs."""
    for finding in findings:
        if finding.rule_id in rules_of(check, rulebook) or info_of(check, finding.rule_id, rulebook) is not None:
            yield finding
            continue
        error = UndeclaredRule(f"the {check_name(check)} check made a finding of rule {finding.rule_id!r}, "
                               "which it does not declare")
        if refused is None:
            raise error
        refused(finding, error)
