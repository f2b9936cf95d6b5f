"""Deprecated APIs that something still calls, as the cluster dump tells it (the API server's
metrics, an audit log: scanner.client_calls): a blocker at the hop that removes the API when nothing
in the tree explains the calls. An object of that API in the tree is reported where it is written
(api_removal); the callers of an API with no object in Git (a controller, a CronJob's kubectl, a
script) are never in the tree, so the dump is the only place kubehop can see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.model import Finding, Manifest
from scanner.rulebook import ApiRule

if TYPE_CHECKING:
    from scanner.client_calls import ApiCall

REMOVED_API_CALLED = "client-calls/removed-api"
SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    """The rule, with the page on finding a deprecated API's callers (a finding names its API's own rule source)."""
    from scanner.client_calls import calls_source  # here and in _finding: only a cluster dump holds API calls

    return {
        REMOVED_API_CALLED: RuleInfo("something still calls an API the hop removes", "A cluster dump (the API "
                                     "server's metrics, an audit log) shows requests to the API and the tree holds "
                                     "no object of it: find the client (the audit log names it) and update it "
                                     "before the hop.", "error", calls_source()),
    }


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if context.cluster is None or not context.cluster.api_calls:
        return
    in_tree = {(m.api_version, guess_resource(m.kind)) for m in manifests}
    for call in _merged(context.cluster.api_calls):
        rule = _rule(call, context)
        removed = call.removed_in or (rule.removed_in if rule is not None else None)
        if removed is None or removed > context.target or (call.group_version, call.resource) in in_tree:
            continue
        yield _finding(call, rule, removed, context)


def guess_resource(kind: str) -> str:
    """The resource of a kind as the API machinery guesses it (lowercase, plural): FlowSchema -> flowschemas."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def _merged(calls: Sequence[ApiCall]) -> list[ApiCall]:
    """One call per API: the metrics and the audit log often name the same one (the audit log's callers kept)."""
    merged: dict[tuple[str, str, str], ApiCall] = {}
    for call in calls:
        key = (call.group, call.version, call.resource)
        held = merged.get(key)
        if held is None:
            merged[key] = call
        elif call.clients and not held.clients:
            call.removed_in = call.removed_in or held.removed_in
            merged[key] = call
    return list(merged.values())


def _rule(call: ApiCall, context: ScanContext) -> ApiRule | None:
    return next((rule for (api_version, kind), rule in context.rulebook.api_rules.items()
                 if api_version == call.group_version and guess_resource(kind) == call.resource), None)


def _finding(call: ApiCall, rule: ApiRule | None, removed, context: ScanContext) -> Finding:
    from scanner.client_calls import calls_source, clients_text

    replacement = context.rulebook.successor(rule, context.target).api_version if rule is not None else None
    move = f"; move it to {replacement}" if replacement else ""
    callers = f"; called by {clients_text(call)}" if call.clients else \
        "; an audit log (JSON lines with the k8s.io/deprecated annotation) names the callers"
    said = f"{call.said_by}: {call.requests} request{'s' if call.requests != 1 else ''}" if call.clients \
        else call.said_by
    message = (f"something still calls {call.group_version} {call.resource} ({said}), and no object of it is in "
               f"the tree: it stops working at {removed}{callers}. Find the client and update it (a controller, a "
               f"CronJob's kubectl, a script){move}, then take the dump again")
    return Finding(rule_id=REMOVED_API_CALLED, severity="error", message=message, origin=call.origin,
                   api_version=call.group_version, kind=rule.kind if rule is not None else call.resource,
                   name=call.resource, breaks_in=removed,
                   deprecated_in=rule.deprecated_in if rule is not None else None,
                   replacement=replacement, source_url=rule.source if rule is not None else calls_source())
