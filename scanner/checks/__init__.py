"""Checks: each module looks at the manifests for one kind of upgrade blocker and says what it found.

Checks never read files (sources did that) and are the only code that makes a Finding: what other
layers know (a component's support, an upgrade order, a key a render writes twice) reaches them as
facts, and scanner/checks/findings.py has the helpers that turn facts into findings. context.py
holds what a check is given (ScanContext) and the words it declares itself with.

How to add a check (yamllint's rules are the model: one module per rule family, with its ids and
defaults; the registry is built from the modules, scanner/checks/registry.py):

1. Write `scanner/checks/<what_it_checks>.py` with
   - `SCOPE = OBJECT` when it reads each object alone, and of the context only the target and the
     rulebook (the scan runs it on each file as it is read, while its nodes are held); else `TREE`;
   - `RULES`: every rule id it can report, `{id: RuleInfo(title, description, default severity,
     help url)}`; ids the data gives (a rulebook's API rules, the catalog's components) are declared
     with `Rules(build, pattern=..., data=...)`, built from that data, never listed in Python;
   - `check(manifests, context) -> Iterable[Finding]`, making its findings with the helpers of
     scanner/checks/findings.py (or its own), each with a structured `fix` when it has one.
2. Write its test, on real manifests: what it finds, and nothing where it should not; and name the
   fixture scan that makes it fire in FAMILIES of tests/test_check_registry.py, which checks that
   every finding of it is of a declared rule. SARIF's rules and `kubehop rules --checks` then
   describe its rules with no change of theirs (rules/README.md, "How to add a check").

Nothing else lists a check: the scan runs every module that declares one. A finding of a rule its
check does not declare is a bug, refused (an input problem at its object; KUBEHOP_DEBUG=1 raises).
"""

from __future__ import annotations

from typing import Iterable, Sequence

# ScanContext and the words a check declares itself with (context.py): what the analysis hands every
# check, and what the registry (registry.py) reads of each.
from scanner.checks.context import OBJECT, TREE, Check, RuleInfo, Rules, ScanContext
from scanner.checks.registry import check_name, checks, of_scope, refuse_undeclared
from scanner.guard import debugging, unexpected
from scanner.model import Diagnostic, Finding, Manifest
from scanner.versions import Minor

__all__ = ["OBJECT", "TREE", "Check", "RuleInfo", "Rules", "ScanContext", "all_checks", "per_object_checks",
           "run_checks", "sort_findings", "tree_checks"]


def all_checks() -> list[Check]:
    return list(checks())


def per_object_checks() -> list[Check]:
    """The checks of scope OBJECT: the scan runs them on each file as it is read, while its nodes are held."""
    return of_scope(OBJECT)


def tree_checks() -> list[Check]:
    """The checks of scope TREE: they look across objects (CRDs, components, orders, the cluster) or read no node."""
    return of_scope(TREE)


def run_checks(manifests: Sequence[Manifest], context: ScanContext, problems: list[Diagnostic] | None = None,
               checks: Sequence[Check] | None = None) -> list[Finding]:
    """The findings of `checks` (default: all). With `problems`, a check that fails (a bug) is run again
    object by object: an object it still fails on becomes an input problem there, the others keep
    their findings."""
    findings: list[Finding] = []
    for check in all_checks() if checks is None else checks:
        try:
            findings.extend(_run(check, manifests, context, problems))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            if problems is None or debugging():
                raise
            findings.extend(_object_by_object(check, manifests, context, problems, err))
    return sort_findings(findings)


def _run(check: Check, manifests: Sequence[Manifest], context: ScanContext,
         problems: list[Diagnostic] | None) -> list[Finding]:
    """The check's findings of the rules it declares; with `problems`, any other is an input problem at its object."""
    def refused(finding: Finding, error: Exception) -> None:
        problems.append(unexpected(finding.origin.path, error, finding.origin.line or None,
                                   f"check {finding.object_ref}"))

    return list(refuse_undeclared(check, check.check(manifests, context), context.rulebook,
                                  None if problems is None else refused))


def _object_by_object(check: Check, manifests: Sequence[Manifest], context: ScanContext,
                      problems: list[Diagnostic], err: Exception) -> list[Finding]:
    name, before = f"<{check_name(check)} check>", len(problems)
    try:
        common = _run(check, [], context, problems)  # what the check finds in the context alone (cluster state)
    except Exception as again:  # noqa: BLE001 - it fails whatever the objects: the check as a whole
        problems.append(unexpected(name, again, what="run this check"))
        return []
    found: dict[Finding, None] = dict.fromkeys(common)
    for manifest in manifests:
        try:
            found.update(dict.fromkeys(_run(check, [manifest], context, problems)))
        except Exception as failed:  # noqa: BLE001
            problems.append(unexpected(manifest.origin.path, failed, manifest.origin.line,
                                       f"check {manifest.object_ref}"))
    if len(problems) == before:  # pragma: no cover - the whole failed, but no part of it does
        problems.append(unexpected(name, err, what="run this check"))
    return list(found)


_FAR = Minor(99, 0)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    found = list(findings)
    if len(found) < 2:  # the checks of one document, most often: nothing to sort
        return found
    far = _FAR
    # Findings tied to no minor (CRDs, cluster state) come first: they block whatever the hop; those of
    # files no build deploys last, in one group.
    return sorted(found, key=lambda f: (
        f.not_deployed, not f.unscheduled, f.breaks_in or far, f.origin.path, f.origin.line, f.origin.column,
        f.rule_id))
