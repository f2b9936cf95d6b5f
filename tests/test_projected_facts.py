"""scripts/projected_facts.py: the facts kubehop holds as projected for a minor, and which a changelog
names (issue 23, item 6: release day fast and hard to get wrong). In-process, on the real data for the
listing, on a small data folder of a made-up minor for the check, so that confirming the real facts on
release day changes no expectation here."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO
from scripts import projected_facts as pf

WHEN = ("removed_in", "locked_in", "minor")


def projected_by_text() -> dict[tuple[str, int], set[str]]:
    """(file, line of its `- `) -> the minors it is dated to, of every `status: projected` entry of rules/,
    read from the text alone: the list item whose keys sit at the indentation of its `status:` line."""
    found = {}
    for path in sorted((REPO / "rules").rglob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if line.strip() != "status: projected":
                continue
            indent = len(line) - len(line.lstrip())
            start = next(i for i in range(number, -1, -1) if re.match(rf" {{{indent - 2}}}- ", lines[i]))
            end = next((i for i in range(start + 1, len(lines)) if lines[i].strip()
                        and len(lines[i]) - len(lines[i].lstrip()) < indent), len(lines))
            keys = {m[2]: m[3] for m in (re.match(r'([ -]*)([a-z_]+): "?([^"]*)"?$', t) for t in lines[start:end])
                    if m and len(m[1]) == indent}
            dated = ("removed_in",) if "removal_source" in keys else WHEN
            found[(path.relative_to(REPO).as_posix(), start + 1)] = {keys[k] for k in dated if k in keys}
    return found


def test_the_listing_holds_every_projected_entry_of_the_minor_and_no_other(capsys):
    expected = {entry for entry, minors in projected_by_text().items() if "1.38" in minors}
    assert {(f.file, f.line) for f in pf.projected_facts("1.38")} == expected
    assert pf.main(["--minor", "1.38"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(expected)} projected facts about Kubernetes 1.38 in ")
    listed = {(file, int(line)) for file, line in re.findall(r"^(rules/\S+\.yaml):(\d+)  ", out, re.M)}
    assert listed == expected
    if expected:  # until 1.38's facts are confirmed, on its release day
        assert "    claims: " in out and "    source: https://" in out


def test_every_projected_entry_is_listed_under_the_minor_it_is_dated_to():
    by_text = projected_by_text()
    assert all(by_text.values())  # none without a minor to list it under
    for minor in set().union(*by_text.values()):
        assert {(f.file, f.line) for f in pf.projected_facts(minor)} == {e for e, m in by_text.items() if minor in m}


CORE = """\
data_checked: "2026-12-01"
rules:
  - id: resource.k8s.io/v1beta1/ResourceClaim
    apiVersion: resource.k8s.io/v1beta1
    kind: ResourceClaim
    deprecated_in: "1.96"
    removed_in: "1.99"
    replacement: resource.k8s.io/v1
    note: "No notable changes."
    source: https://example.com/lifecycle
    status: projected
    projected_source: https://example.com/draft
  - id: resource.k8s.io/v1beta1/DeviceClass
    apiVersion: resource.k8s.io/v1beta1
    kind: DeviceClass
    deprecated_in: "1.96"
    removed_in: "1.99"
    replacement: resource.k8s.io/v1
    note: "No notable changes."
    source: https://example.com/lifecycle
    status: projected
  - id: resource.k8s.io/v1beta2/DeviceClass
    apiVersion: resource.k8s.io/v1beta2
    kind: DeviceClass
    deprecated_in: "1.96"
    removed_in: "1.99"
    replacement: resource.k8s.io/v1
    note: "Confirmed already: not projected."
    source: https://example.com/changelog
"""
GATES = """\
data_checked: "2026-12-01"
source: https://example.com/gates
semantics_source: https://example.com/feature_gate.go
gates:
  - {name: GateRemoved, removed_in: "1.99", status: projected, source: https://example.com/draft}
  - {name: GateLocked, locked_in: "1.99", locked_to: true, status: projected, source: https://example.com/draft}
  - name: GateLockedFromItsPage
    locked_in: "1.99"
    locked_to: true
    removed_in: "1.102"
    status: projected
    removal_source: https://example.com/draft
    source: https://example.com/page
"""
NOTES = """\
distro: kubernetes
data_checked: "2026-12-01"
notes:
  - minor: "1.99"
    title: "kubelet --old-flag removed"
    detail: "Remove --old-flag first; FooBar takes its place."
    source: https://example.com/draft
    status: projected
  - minor: "1.99"
    title: "Something to know"
    detail: "Read the release notes."
    source: https://example.com/draft
    status: projected
  - minor: "1.97"
    title: "BarBaz renamed"
    detail: "BarBaz is now QuxQuux."
    source: https://example.com/draft
    status: projected
"""
FLAGS = """\
data_checked: "2026-12-01"
flags:
  - component: kubelet
    flags: [old-flag, other-flag]
    removed_in: "1.99"
    status: projected
    note: "Remove them first."
    source: https://example.com/draft
admission_plugins: []
"""
CONFIG = """\
data_checked: "2026-12-01"
config_versions:
  - api_version: kubeadm.k8s.io/v1beta9
    kinds: [ClusterConfiguration]
    component: kubeadm
    removed_in: "1.99"
    status: projected
    replacement: kubeadm.k8s.io/v1
    source: https://example.com/draft
scheduler_plugins: []
settings: []
node_files: []
"""
CHANGELOG = """\
## Urgent Upgrade Notes

- ACTION REQUIRED: the `resource.k8s.io/v1beta1` API version of ResourceClaims is no longer served.
  Move to `resource.k8s.io/v1`.
- Removed the `GateRemoved` feature gate.

## Changes by Kind

- Promoted `GateLocked` to GA.
- The kubelet drops `--old-flag`
  (use `FooBar` instead).
- `kubeadm`: Removed the `v1beta9` API.
"""


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    for relative, text in (("rules/core/resource.k8s.io.yaml", CORE), ("rules/hop-notes/kubernetes.yaml", NOTES),
                           ("rules/cluster-config/feature-gates.yaml", GATES),
                           ("rules/cluster-config/component-flags.yaml", FLAGS),
                           ("rules/cluster-config/config-apis.yaml", CONFIG)):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    shutil.copytree(REPO / "rules" / "schema", tmp_path / "rules" / "schema")
    return tmp_path


def test_facts_the_changelog_does_not_name_come_first_and_fail_the_run(data_root):
    code, out = pf.report("1.99", "CHANGELOG-1.99.md", CHANGELOG, root=data_root)
    assert code == 1
    assert out.startswith("8 projected facts about Kubernetes 1.99: CHANGELOG-1.99.md names 3, not 5\n")
    order = ["== Not confirmed by this changelog (5)", "component-flags.yaml:3  kubelet --old-flag, --other-flag",
             "config-apis.yaml:3  kubeadm.k8s.io/v1beta9", "feature-gates.yaml:6  GateLocked",
             "resource.k8s.io.yaml:13  resource.k8s.io/v1beta1/DeviceClass",
             "kubernetes.yaml:9  note: Something to know",
             "== Named by this changelog (3)", "feature-gates.yaml:5  GateRemoved",
             "resource.k8s.io.yaml:3  resource.k8s.io/v1beta1/ResourceClaim",
             "kubernetes.yaml:4  note: kubelet --old-flag removed", "== Removals this changelog states"]
    assert [out.index(part) for part in order] == sorted(out.index(part) for part in order)
    # where each fact is named, at the changelog's own line numbers
    assert "named at line 3: - ACTION REQUIRED: the `resource.k8s.io/v1beta1` API version of ResourceClaims" in out
    assert "named at line 5: - Removed the `GateRemoved` feature gate." in out
    assert "named at line 10: - The kubelet drops `--old-flag`" in out and "named at line 11: (use `FooBar`" in out
    # a name without the word that says what happened, or part of what must be named: a mention only
    assert 'looked for: GateLocked, with "lock"\n    not named: GateLocked\n' \
           "    mentioned at line 9: - Promoted `GateLocked` to GA." in out  # "GateLocked" itself says nothing
    assert "not named: resource.k8s.io/v1beta1 + DeviceClass\n    mentioned at line 3:" in out
    assert "not named: other-flag\n    mentioned at line 10:" not in out and "not named: other-flag\n" in out
    assert "not named: kubeadm.k8s.io/v1beta9\n    mentioned at line 12: - `kubeadm`: Removed the `v1beta9` API." in out
    assert "not named: nothing to look for" in out
    assert "GateLockedFromItsPage" not in out and "v1beta2/DeviceClass" not in out and "BarBaz" not in out


def test_a_changelog_that_names_every_fact_passes(data_root):
    code, out = pf.report("1.97", "notes.md", "- `BarBaz` was renamed to `QuxQuux`.\n", root=data_root)
    assert code == 0 and "names 1, not 0" in out and "== Not confirmed by this changelog (0)" in out


def test_removals_no_rule_has_are_listed_as_leads():
    text = ("- PodDisruptionBudget in the **policy/v1beta1** API version is no longer served as of v1.25;\n"
            "  migrate to `policy/v1`.\n"
            "- The `storage.k8s.io/v1beta1` API version of CSIStorageCapacity is no longer served.\n"
            "- Removed the deprecated `metrics.k8s.io/v1alpha1` types.\n"
            "- Removed the deprecated field `spec.foo` from `apps/v1` Deployments.\n"
            "- Promoted `autoscaling/v2` to GA.\n")
    leads = pf.unlisted_removals("1.25", pf.changelog_entries(text))
    # policy/v1beta1 has its rule for 1.25 and policy/v1 replaces it; metrics.k8s.io is not built in;
    # a field dropped from a served version is a lead too (see --help)
    assert [(line, gv) for line, gv, _ in leads] == [(3, "storage.k8s.io/v1beta1"), (5, "apps/v1")]
    assert "1.27" in leads[0][2] and leads[0][2].startswith("rules say removed in ")  # CSIStorageCapacity's
    assert leads[1][2] == "no rule removes it"


def test_bad_input_exits_2(tmp_path, capsys):
    assert pf.main(["--minor", "v1.38"]) == 2
    assert pf.main(["--minor", "1.38", "--changelog", str(tmp_path / "missing.md")]) == 2
    (tmp_path / "empty.md").write_text("\n")
    assert pf.main(["--minor", "1.38", "--changelog", str(tmp_path / "empty.md")]) == 2
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00")
    assert pf.main(["--minor", "1.38", "--changelog", str(tmp_path / "binary.md")]) == 2
    assert "projected_facts: --minor v1.38: not a minor" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        pf.main([])
    assert exited.value.code == 2


def test_help_says_it_never_edits_the_data(capsys):
    with pytest.raises(SystemExit):
        pf.main(["--help"])
    assert "it never edits the data" in capsys.readouterr().out
