"""One fixture manifest per core rule, scanned through the real scanner.

Each fixture is a small object of the rule's apiVersion/kind. The scan must report exactly
that rule, at the line of `apiVersion:`, as an error from removed_in on, as a warning from
deprecated_in, and not at all before deprecated_in.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from scanner.rulebook import ApiRule, load_rulebook
from scanner.scan import scan
from scanner.versions import Minor

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rules" / "core"
RULES = load_rulebook().rules()
HAS_PACKAGE = importlib.util.find_spec("kubernetes_validate") is not None
# The minors whose schemas kubernetes-validate 1.37.0 ships.
VALIDATED = (Minor(1, 25), Minor(1, 37))


def fixture_for(rule: ApiRule) -> Path:
    return FIXTURES / (rule.id.replace("/", "_") + ".yaml")


def api_version_line(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.startswith("apiVersion:"))


def scan_at(rule: ApiRule, target: Minor):
    result = scan([str(fixture_for(rule))], target=target)
    assert result.diagnostics == [], result.diagnostics
    return result


def before(minor: Minor) -> Minor:
    return Minor(minor.major, minor.minor - 1)


def test_every_rule_has_a_fixture_and_every_fixture_a_rule() -> None:
    expected = {fixture_for(rule).name for rule in RULES}
    assert sorted(p.name for p in FIXTURES.glob("*.yaml")) == sorted(expected)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_fixture_holds_one_object_of_the_rules_kind(rule: ApiRule) -> None:
    documents = list(yaml.safe_load_all(fixture_for(rule).read_text(encoding="utf-8")))
    assert [(d["apiVersion"], d["kind"]) for d in documents] == [(rule.api_version, rule.kind)]


@pytest.mark.parametrize("rule", [r for r in RULES if r.removed_in], ids=lambda r: r.id)
def test_rule_is_an_error_once_removed(rule: ApiRule) -> None:
    result = scan_at(rule, rule.removed_in)
    assert [(f.rule_id, f.severity) for f in result.findings] == [(rule.id, "error")]
    finding = result.findings[0]
    assert (finding.origin.path, finding.origin.line, finding.origin.column) == \
        (str(fixture_for(rule)), api_version_line(fixture_for(rule)), 1)
    assert finding.breaks_in == rule.removed_in
    assert (finding.replacement, finding.note, finding.source_url) == (rule.replacement, rule.note, rule.source)
    assert result.exit_code == 1


@pytest.mark.parametrize("rule", [r for r in RULES if r.removed_in is None or r.deprecated_in < r.removed_in],
                         ids=lambda r: r.id)
def test_rule_is_a_warning_while_deprecated(rule: ApiRule) -> None:
    result = scan_at(rule, rule.deprecated_in)
    assert [(f.rule_id, f.severity) for f in result.findings] == [(rule.id, "warning")]
    assert result.findings[0].origin.line == api_version_line(fixture_for(rule))
    assert result.exit_code == 0


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_is_silent_before_the_deprecation(rule: ApiRule) -> None:
    result = scan_at(rule, before(rule.deprecated_in))
    assert result.findings == [] and result.objects == 1


@pytest.mark.skipif(not HAS_PACKAGE, reason="kubernetes-validate is not installed (pip install '.[test]')")
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_fixture_is_a_valid_object_while_served(rule: ApiRule) -> None:
    """Strict validation against Kubernetes' own schema of the last minor that serves the kind."""
    import kubernetes_validate

    last = VALIDATED[1] if rule.removed_in is None or rule.removed_in > VALIDATED[1] else before(rule.removed_in)
    if last < VALIDATED[0]:
        pytest.skip(f"served last in {last}; kubernetes-validate 1.37.0 starts at {VALIDATED[0]}")
    document = yaml.safe_load(fixture_for(rule).read_text(encoding="utf-8"))
    kubernetes_validate.validate(document, f"{last}.0", strict=True)
