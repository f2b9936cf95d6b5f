"""A finding's replacement is what the *target* serves: the end of the chain of replacements.

flowcontrol v1beta1 names v1beta2, itself gone in 1.29: at 1.36 the finding says v1. Where the
chain ends with nothing (PodSecurityPolicy), the finding says what to do instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.rulebook import ApiRule, load_rulebook
from scanner.scan import scan
from scanner.versions import Minor, parse_minor

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rules" / "core"
BOOK = load_rulebook()
RULES = BOOK.rules()


def fixture(rule_id: str) -> str:
    return str(FIXTURES / (rule_id.replace("/", "_") + ".yaml"))


def only_finding(rule_id: str, target: str, current: str | None = None):
    result = scan([fixture(rule_id)], target=parse_minor(target),
                  current=parse_minor(current) if current else None)
    assert [f.rule_id for f in result.findings] == [rule_id]
    return result.findings[0]


def minors_from(first: Minor) -> list[Minor]:
    return [m for m in BOOK.served.minors if m >= first]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_the_successor_is_served_at_every_minor_the_rule_reports(rule: ApiRule) -> None:
    for target in minors_from(max(rule.deprecated_in, BOOK.oldest)):
        successor = BOOK.successor(rule, target)
        if successor.api_version is None:
            assert successor.instead, f"{rule.id} at {target}: no successor and nothing to do instead"
            continue
        key = (successor.api_version, successor.kind)
        if successor.served_from is None:
            assert key in BOOK.served.served_at(target), f"{rule.id} at {target}: {key} is not served there"
        else:
            assert successor.served_from > target and key in BOOK.served.served_at(successor.served_from)


def test_flowcontrol_v1beta1_names_v1_on_1_36_and_v1beta2_where_v1_is_not_served() -> None:
    finding = only_finding("flowcontrol.apiserver.k8s.io/v1beta1/FlowSchema", "1.36")
    assert finding.replacement == "flowcontrol.apiserver.k8s.io/v1"
    assert finding.fix == "use flowcontrol.apiserver.k8s.io/v1"
    assert finding.text.endswith("; use flowcontrol.apiserver.k8s.io/v1")
    assert "v1beta2" not in finding.text
    assert only_finding("flowcontrol.apiserver.k8s.io/v1beta1/FlowSchema", "1.26").replacement == \
        "flowcontrol.apiserver.k8s.io/v1beta2"


def test_extensions_podsecuritypolicy_says_what_to_do_once_policy_v1beta1_is_gone() -> None:
    early = only_finding("extensions/v1beta1/PodSecurityPolicy", "1.20")
    assert early.replacement == "policy/v1beta1" and early.fix == "use policy/v1beta1"
    late = only_finding("extensions/v1beta1/PodSecurityPolicy", "1.36")
    assert late.replacement is None
    assert "policy/v1beta1" not in late.text and late.fix is None
    assert "no API replaces it on 1.36: enforce pod security with Pod Security Admission" in late.message


def test_an_api_with_no_successor_says_what_to_do_instead() -> None:
    finding = only_finding("policy/v1beta1/PodSecurityPolicy", "1.25")
    assert finding.replacement is None
    assert "; no API replaces it: enforce pod security with Pod Security Admission" in finding.message


def test_a_successor_not_served_yet_says_from_when() -> None:
    finding = only_finding("extensions/v1beta1/Ingress", "1.18")
    assert finding.severity == "warning"
    assert finding.fix == "use networking.k8s.io/v1 (served from 1.19)"


def test_with_from_the_migration_timing_is_that_of_the_successor() -> None:
    # From 1.28 to 1.36, v1 (served from 1.29) is the one to adopt, and 1.28 does not serve it yet.
    assert only_finding("flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema", "1.36", current="1.28").migrate == \
        "during-hop"
    assert only_finding("flowcontrol.apiserver.k8s.io/v1beta1/FlowSchema", "1.36", current="1.29").migrate == "now"
