"""SARIF 2.1.0 for GitHub code scanning: one run, the rules that fired, a result per finding.

Each rule is described by the check that declares it (scanner.checks.registry), whichever finding
fired it; each result names its own source. Input problems (unreadable files) go to the invocation's
notifications, not to results: they are about the scan, not about the code.

Code scanning shows a message's `text` as plain text in which `[text](target)` is an embedded link
(SARIF 2.1.0, 3.11.6), so every line of it goes through `text`: printable (scanner.report.plain),
then the `]` of every `](` backslash-escaped, and every backslash (escaped brackets and backslashes
are how CodeQL writes literal ones, and how its viewers read them back): no `[...](...)` from the
tree is a link. A rule's help Markdown is written by scanner.report.md. Other strings (the object's name, the hop)
are data, kept as they are; the JSON text holds nothing raw either way (plain.log_json).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import quote

from scanner import __url__, __version__
from scanner.checks.registry import RuleInfo
from scanner.model import EXIT_INPUT, STDIN_PATH, Diagnostic, Finding
from scanner.report import hop_label, md
from scanner.paths import repo_path, repo_root
from scanner.report.plain import log_json, printable
from scanner.scan import ScanResult

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Paths are relative to the repository root (scanner.paths), which this base id names.
SRCROOT = "%SRCROOT%"
_LINK_CHARACTER = re.compile(r"(\\|\](?=\())")
_LEVEL = {"error": "error", "warning": "warning", "notice": "note"}  # kubehop's severity -> SARIF's level


def text(*lines: object) -> str:
    """Plain message text of these lines: each printable, with no embedded link in it."""
    return "\n".join(_LINK_CHARACTER.sub(r"\\\1", printable(line)) for line in lines)


def render(result: ScanResult, color: bool = False) -> str:
    rules = _rules(result)
    index = {rule["id"]: n for n, rule in enumerate(rules)}
    root = _root(result)
    run = {
        "tool": {"driver": {
            "name": "kubehop",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": __url__,
            "rules": rules,
        }},
        "invocations": [_invocation(result, root)],
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule_id], result, root) for f in result.findings],
        "properties": {
            "target": str(result.target),
            "from": str(result.current) if result.current else None,
            "targetSource": result.target_source,
            "fromSource": result.current_source,
            "configuration": repo_path(result.configuration) if result.configuration else None,
            "excludedFiles": result.silenced.get("excluded", 0),
            "dataChecked": result.data_checked,
        },
    }
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/",
                                               "description": {"text": "The repository root."}}}
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return log_json(document)


def _rules(result: ScanResult) -> list[dict]:
    """The rules that fired, as the checks that declare them describe them (scanner.checks.registry)."""
    return [_rule(rule_id, result.rules[rule_id]) for rule_id in sorted({f.rule_id for f in result.findings})]


def _rule(rule_id: str, info: RuleInfo) -> dict:
    rule = {
        "id": rule_id,
        "shortDescription": {"text": text(f"{rule_id}: {info.title}")},
        "fullDescription": {"text": text(info.description)},
        "help": {"text": text(info.description)},
        "defaultConfiguration": {"level": _LEVEL.get(info.severity, "warning")},
        "properties": {"tags": ["kubernetes", "upgrade"]},
    }
    if info.help_url:
        rule["helpUri"] = info.help_url
        rule["help"] = {"text": text(f"{info.description} Source: {info.help_url}"),
                        "markdown": md.document(f"{md.prose(info.description)}\n\n{md.link('Source', info.help_url)}")}
    return rule


def _message(finding: Finding, rule: RuleInfo) -> str:
    lines = [f"{finding.object_ref}: {finding.text}"]
    if finding.unscheduled and finding.note:
        lines.append(f"Note: {finding.note}")
    if finding.remediation:
        lines += ["Fix:", *finding.remediation]
    if finding.source_url and finding.source_url != rule.help_url:  # a component release's own source
        lines.append(f"Source: {finding.source_url}")
    return text(*lines)


def _root(result: ScanResult) -> str | None:
    """The one root SRCROOT stands for: that of the first file named (files elsewhere get absolute URIs)."""
    paths = [f.origin.path for f in result.findings] + [d.path for d in result.diagnostics]
    return next((root for root in map(repo_root, paths) if root is not None), None)


def _result(finding: Finding, rule_index: int, result: ScanResult, root: str | None) -> dict:
    sarif_result = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": _LEVEL.get(finding.severity, "warning"),
        "message": {"text": _message(finding, result.rules[finding.rule_id])},
        "partialFingerprints": {"kubehopFinding/v1": _fingerprint(finding)},
        "properties": {
            "hop": hop_label(finding, result),
            "breaksIn": str(finding.breaks_in) if finding.breaks_in else None,
            "object": {"apiVersion": finding.api_version, "kind": finding.kind,
                       "namespace": finding.namespace, "name": finding.name},
            "migrate": finding.migrate,
            "via": finding.origin.via,
            "support": finding.support,
            "source": finding.source_url,
            **({"clusters": list(finding.clusters)} if finding.clusters else {}),
        },
    }
    location = _location(root, finding.origin.path, finding.origin.line, finding.origin.column)
    if location:
        sarif_result["locations"] = [location]
    return sarif_result


def _fingerprint(finding: Finding) -> str:
    """One alert per finding, the same one when lines move: the rule, the file, the object, and what of
    it the finding is about -- the hop it breaks in and its message, which names the field (two
    containers' removed field, a component's two hops: two alerts), never the line."""
    key = "\0".join([finding.rule_id, repo_path(finding.origin.path), finding.kind,
                     finding.namespace or "", finding.name or "", str(finding.breaks_in or ""), finding.message])
    return hashlib.sha256(os.fsencode(key)).hexdigest()[:32]  # a name that is no UTF-8: its bytes


def _location(root: str | None, path: str, line: int | None, column: int | None = None) -> dict | None:
    if path == STDIN_PATH:
        return None
    physical: dict = {"artifactLocation": _artifact(root, path)}
    if line and line > 0:
        physical["region"] = {"startLine": line, **({"startColumn": column} if column and column > 0 else {})}
    return {"physicalLocation": physical}


def _artifact(root: str | None, path: str) -> dict:
    if root is None or repo_root(path) != root:  # outside the repository: no base to be relative to
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(os.fsencode(repo_path(path))), "uriBaseId": SRCROOT}  # a name's bytes, as as_uri


def _invocation(result: ScanResult, root: str | None) -> dict:
    return {
        "executionSuccessful": result.exit_code != EXIT_INPUT,
        "exitCode": result.exit_code,
        "toolExecutionNotifications": [_notification(d, root) for d in result.diagnostics],
    }


def _notification(diagnostic: Diagnostic, root: str | None) -> dict:
    notification = {
        "level": "error" if diagnostic.level == "error" else "note",
        "message": {"text": text(diagnostic.message)},
    }
    location = _location(root, diagnostic.path, diagnostic.line)
    if location:
        notification["locations"] = [location]
    return notification
