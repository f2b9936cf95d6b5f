"""Inline suppressions: `# kubehop: ignore[rule-id] -- reason` on a line or atop a document."""

from __future__ import annotations

import json
from pathlib import Path

from scanner.suppress import read_suppressions
from tests.conftest import run_kubehop_text as run_kubehop

RULE = "extensions/v1beta1/Ingress"
MANIFESTS = f"""\
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {{name: loud}}
---
# Owned by the legacy team.
# kubehop: ignore[{RULE}] -- migrated with the cluster rebuild
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {{name: hushed-document}}
---
apiVersion: extensions/v1beta1  # kubehop: ignore[extensions/*]
kind: Ingress
metadata: {{name: hushed-line}}
---
apiVersion: extensions/v1beta1
kind: Ingress  # kubehop: ignore[{RULE}] -- wrong line: the finding is on apiVersion
metadata: {{name: loud-too}}
---
apiVersion: v1
kind: List
items:  # the document comment below is not at the top: it only covers its own line
- apiVersion: extensions/v1beta1
  kind: Ingress
  metadata: {{name: in-list}}
"""


def test_reading_scopes_reasons_and_ids():
    found, problems = read_suppressions(MANIFESTS, "m.yaml")
    assert [(s.line, s.last_line, s.rules, s.reason) for s in found] == [
        (6, 9, (RULE,), "migrated with the cluster rebuild"),
        (11, 11, ("extensions/*",), None),
        (16, 16, (RULE,), "wrong line: the finding is on apiVersion"),
    ]
    assert problems == []


def test_separator_line_comment_heads_its_document_and_several_ids():
    text = "--- # kubehop: ignore[a/v1/B, c/v1/D]\napiVersion: a/v1\nkind: B\n---\nkind: X\n"
    (found,), _ = read_suppressions(text, "f")
    assert (found.line, found.last_line, found.rules) == (1, 3, ("a/v1/B", "c/v1/D"))


def test_crlf_line_ends_read_the_same():
    found, _ = read_suppressions(MANIFESTS.replace("\n", "\r\n"), "m.yaml")
    assert found == read_suppressions(MANIFESTS, "m.yaml")[0]


def test_comment_not_understood_is_a_warning():
    _, problems = read_suppressions("kind: X  # kubehop: ignore(a/v1/B)\n", "f")
    assert [(p.line, p.level) for p in problems] == [(1, "warning")]
    assert "expected '# kubehop: ignore[rule-id, ...] -- reason'" in problems[0].message


def test_a_key_named_kubehop_is_not_a_comment():
    found, problems = read_suppressions("metadata:\n  labels:\n    kubehop: ignore\n", "f")
    assert found == [] and problems == []


def test_scan_drops_suppressed_findings_and_reports_unused_ones(tmp_path: Path):
    (tmp_path / "m.yaml").write_text(MANIFESTS)
    done = run_kubehop("scan", "--format", "json", "m.yaml", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert sorted(f["object"]["name"] for f in report["findings"]) == ["in-list", "loud", "loud-too"]
    assert [(d["line"], d["level"], d["message"]) for d in report["diagnostics"]] == [
        (16, "warning", f"unused suppression: no {RULE} finding on this line")]
    assert done.returncode == 1  # the unused suppression itself blocks nothing


def test_document_suppression_covers_every_item_of_a_list(tmp_path: Path):
    (tmp_path / "list.yaml").write_text(
        f"# kubehop: ignore[{RULE}]\napiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: a}}\n"
        "- {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: b}}\n")
    done = run_kubehop("scan", "list.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "unused" not in done.stdout


def test_text_report_shows_unused_suppressions_and_baseline_notices(tmp_path: Path, snapshot):
    (tmp_path / "m.yaml").write_text(MANIFESTS)
    run_kubehop("scan", "--no-config", "--write-baseline", "baseline.json", "m.yaml", cwd=tmp_path)
    (tmp_path / "m.yaml").write_text(MANIFESTS + "---\napiVersion: extensions/v1beta1\nkind: Ingress\n"
                                     "metadata: {name: new}  # kubehop: ignore\n")
    done = run_kubehop("scan", "--no-config", "--baseline", "baseline.json", "m.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == snapshot
