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


def not_deployed_as_notices(findings: Iterable[Finding], unreferenced: dict[str, str],
                            unreached: dict[str, str]) -> tuple[list[Finding], list[str]]:
    """Findings of files no kustomization lists (sources/kustomize/unreferenced.py) and of files no root
    of the tree reaches (sources/reach/unreached.py) as notices, each saying why; and the notices that
    say what was read as not deployed, one for each kind."""
    if not unreferenced and not unreached:
        return list(findings), []
    kept, moved = [], {"unreferenced": 0, "unreached": 0}
    for finding in findings:
        path = finding.origin.path
        if finding.severity == "notice" or (path not in unreferenced and path not in unreached):
            kept.append(finding)
            continue
        if path in unreferenced:
            why = f"Not deployed: {repo_path(unreferenced[path])} does not list this file (list it there, or delete the file)."
            moved["unreferenced"] += 1
        else:
            why = f"Not deployed: {unreached[path]}."
            moved["unreached"] += 1
        note = f"{finding.note.rstrip('.')}. {why}" if finding.note else why
        kept.append(dataclasses.replace(finding, severity="notice", note=note, not_deployed=True))
    notices = []
    if unreferenced:
        first = min(unreferenced)
        notices.append(f"{_files(len(unreferenced))} that no kustomization lists, in folders a kustomization governs, "
                       f"read as not deployed (kustomize builds only what it lists): their findings are notices "
                       f"({moved['unreferenced']}), their component pins not the tree's; first: {repo_path(first)}, "
                       f"beside {repo_path(unreferenced[first])}")
    if unreached:
        notices.append(f"{_files(len(unreached))} that no Flux Kustomization or Argo CD Application of the tree "
                       f"reaches, read as not deployed: their findings are notices ({moved['unreached']}), their "
                       f"component pins not the tree's; in {_folders(unreached)}")
    return sort_findings(kept), notices


def not_deployed_problems(diagnostics: Iterable[Diagnostic], unreferenced: dict[str, str],
                          unreached: dict[str, str]) -> list[Diagnostic]:
    """Input problems of files read as not deployed, as notices: a file no build applies leaves no hole in
    what the scan says of the cluster (an `.archive` kustomization naming a component that is gone made the
    whole scan exit 3)."""
    if not unreferenced and not unreached:
        return list(diagnostics)
    return [dataclasses.replace(d, level="notice", message=f"{d.message} (not deployed: the scan is complete without it)")
            if d.level != "notice" and (d.path in unreached or d.path in unreferenced) else d for d in diagnostics]


def _files(number: int) -> str:
    return f"{number} file{'s' if number != 1 else ''}"


def _folders(paths: Iterable[str], shown: int = 8) -> str:
    """The folders holding `paths`, the outermost ones, a few named."""
    import os

    folders = sorted({os.path.dirname(repo_path(p)) for p in paths})
    outer = [f for f in folders if not any(f != o and f.startswith(f"{o}/") for o in folders)]
    more = len(outer) - shown
    return ", ".join(outer[:shown]) + (f" and {more} more folder{'s' if more != 1 else ''}" if more > 0 else "")


def _with_severity(findings: Sequence[Finding], overrides: Sequence[tuple[str, str]]) -> list[Finding]:
    """Findings with the severity the configuration gives their rule, if it gives one."""
    if not overrides:
        return list(findings)

    def severity(finding: Finding) -> str:
        chosen = [level for pattern, level in overrides if suppress.rule_matches(finding.rule_id, [pattern])]
        return chosen[-1] if chosen else finding.severity

    return [dataclasses.replace(f, severity=severity(f)) for f in findings]
