"""The project's own policy over the findings: severities, inline suppressions, ignored rules, the
baseline. What it leaves out is counted (Analysis.silenced): a pull request can change all of it."""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from scanner import baseline, suppress
from scanner.checks import sort_findings
from scanner.model import Diagnostic, Finding
from scanner.options import ScanOptions
from scanner.paths import repo_path


def apply_policy(findings: list[Finding], suppressions: Sequence[suppress.Suppression],
                 options: ScanOptions) -> tuple[list[Finding], list[Diagnostic], list[str], dict[str, int]]:
    """Severity overrides, inline suppressions, ignored rules, then the baseline: the findings
    that remain, the suppressions that silenced nothing, notices of what was left out, and how
    many findings each left out (Analysis.silenced)."""
    errors = sum(f.severity == "error" for f in findings)
    findings = _with_severity(findings, options.severity)
    silenced = {"demoted": errors - sum(f.severity == "error" for f in findings)}
    kept, unused = suppress.apply(findings, suppressions)
    silenced["comments"] = len(findings) - len(kept)
    notices = [f"findings suppressed by `# kubehop: ignore` comments: {silenced['comments']}"] \
        if silenced["comments"] else []
    findings = [f for f in kept if not suppress.rule_matches(f.rule_id, options.ignore)]
    silenced["configuration"] = len(kept) - len(findings)
    if silenced["configuration"]:
        notices.append(f"findings of rules ignored by the configuration or --ignore: {silenced['configuration']}")
    before = len(findings)
    if options.baseline:
        if options.write_baseline:
            baseline.write(options.baseline, findings)
        findings, recorded = baseline.apply(options.baseline, findings)
        notices.extend(recorded)
    silenced["baseline"] = before - len(findings)
    return findings, unused, notices, silenced


def latent_as_warnings(findings: Iterable[Finding], latent: set[str]) -> list[Finding]:
    """Findings sorted; those of templates a chart's values switch off (--all-templates) as warnings."""
    return sort_findings(dataclasses.replace(f, severity="warning") if f.origin.via in latent else f
                         for f in findings)


def unreferenced_as_notices(findings: Iterable[Finding], unreferenced: dict[str, str]) -> tuple[list[Finding], str | None]:
    """Findings of files no kustomization lists (sources/kustomize/unreferenced.py) as notices, each saying
    why; and the notice that says what was read as not deployed."""
    if not unreferenced:
        return list(findings), None
    kept, moved = [], 0
    for finding in findings:
        governing = unreferenced.get(finding.origin.path)
        if governing is None or finding.severity == "notice":
            kept.append(finding)
            continue
        why = f"Not deployed: {repo_path(governing)} does not list this file (list it there, or delete the file)."
        note = f"{finding.note.rstrip('.')}. {why}" if finding.note else why
        kept.append(dataclasses.replace(finding, severity="notice", note=note))
        moved += 1
    first = min(unreferenced)
    files = f"{len(unreferenced)} file{'s' if len(unreferenced) != 1 else ''}"
    return kept, (f"{files} that no kustomization lists, in folders a kustomization governs, read as not deployed "
                  f"(kustomize builds only what it lists): their findings are notices ({moved}), their component "
                  f"pins not the tree's; first: {repo_path(first)}, beside {repo_path(unreferenced[first])}")


def _with_severity(findings: Sequence[Finding], overrides: Sequence[tuple[str, str]]) -> list[Finding]:
    """Findings with the severity the configuration gives their rule, if it gives one."""
    if not overrides:
        return list(findings)

    def severity(finding: Finding) -> str:
        chosen = [level for pattern, level in overrides if suppress.rule_matches(finding.rule_id, [pattern])]
        return chosen[-1] if chosen else finding.severity

    return [dataclasses.replace(f, severity=severity(f)) for f in findings]
