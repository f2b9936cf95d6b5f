"""JSON report: stable keys, documented in README (“JSON output”). Version it on breaking changes.
Names and messages are kept as they are (it is data); the text printed holds nothing a log acts on
(scanner.report.plain.log_json)."""

from __future__ import annotations

from scanner import __version__
from scanner.freshness import older_sources
from scanner.model import Finding
from scanner.report import hop_label
from scanner.paths import repo_path
from scanner.report.plain import log_json
from scanner.scan import ScanResult

SCHEMA_VERSION = 1


def _minor(value) -> str | None:
    return str(value) if value is not None else None


def finding_dict(finding: Finding, result: ScanResult, files: dict[str, str] | None = None) -> dict:
    """`files`: repo_path of the findings' paths, named once a file however many findings it holds."""
    path = finding.origin.path
    return {
        "rule": finding.rule_id,
        "severity": finding.severity,
        "hop": hop_label(finding, result),
        "breaks_in": _minor(finding.breaks_in),
        "deprecated_in": _minor(finding.deprecated_in),
        "file": files[path] if files is not None else repo_path(path),
        "line": finding.origin.line,
        "column": finding.origin.column,
        "via": finding.origin.via,
        "object": {
            "apiVersion": finding.api_version,
            "kind": finding.kind,
            "namespace": finding.namespace,
            "name": finding.name,
        },
        "message": finding.text,
        # What clears it, as one instruction (the end of the message), or null.
        "fix": finding.fix,
        "replacement": finding.replacement,
        "note": finding.note,
        "migrate": finding.migrate,
        "remediation": list(finding.remediation),
        "source": finding.source_url,
        # A component finding's state for its minor: supported, unsupported, unknown or unverified.
        "support": finding.support,
        # In a fleet repository: each cluster it breaks in, and the hop there (each has its own minor).
        **({"clusters": [{"name": name, "hop": hop_label(finding, _cluster(result, name))}
                         for name in finding.clusters]} if finding.clusters else {}),
    }


def _cluster(result: ScanResult, name: str) -> ScanResult:
    return next((v.analysis for v in result.clusters if v.cluster.name == name), result)


def _clusters(result: ScanResult) -> list[dict]:
    return [{"name": v.cluster.name, "declared_by": v.cluster.declared_by,
             "paths": [repo_path(p) for p in v.cluster.paths], "from": _minor(v.analysis.current),
             "from_source": v.analysis.current_source, "errors": len(v.analysis.errors),
             "warnings": len(v.analysis.warnings), "input_errors": len(v.analysis.input_errors)}
            for v in result.clusters]


def render(result: ScanResult, color: bool = False) -> str:
    files = {path: repo_path(path) for path in {f.origin.path for f in result.findings}}
    hops: dict[str, dict] = {}
    for finding in result.findings:
        label = hop_label(finding, result)
        entry = hops.setdefault(label, {"hop": label, "breaks_in": _minor(finding.breaks_in),
                                        "errors": 0, "warnings": 0, "notices": 0})
        entry[{"error": "errors", "notice": "notices"}.get(finding.severity, "warnings")] += 1
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kubehop", "version": __version__, "data_checked": result.data_checked,
                 "older_sources": older_sources(),
                 **({"rendered_with": result.rendered_with} if result.rendered_with else {}),
                 **({"isolation": result.isolation} if result.isolation else {})},
        "target": str(result.target),
        "from": _minor(result.current),
        # Where they came from: the configuration may be a pull request's (README, JSON output).
        "target_source": result.target_source,
        "from_source": result.current_source,
        "configuration": repo_path(result.configuration) if result.configuration else None,
        "exit_code": result.exit_code,
        "summary": {
            "files": result.files_read,
            "objects": result.objects,
            "errors": len(result.errors),
            "warnings": len(result.warnings),
            "notices": sum(f.severity == "notice" for f in result.findings),
            "input_errors": len(result.input_errors),
            "unrendered": len(result.unrendered),
            # Folders given that hold no Kubernetes object (a wrong path in CI: the Action fails on it).
            "empty_paths": [repo_path(p) for p, why in result.nothing_in if why == "empty"],
            # Findings left out by the project's own policy: comments, configuration, baseline;
            # "demoted": blockers the configuration's `severity` made warnings; "excluded": files `exclude` left out.
            "silenced": {key: result.silenced.get(key, 0)
                         for key in ("comments", "configuration", "baseline", "demoted", "excluded")},
            # Files read as not deployed, their findings notices: "unlisted", no kustomization lists them;
            # "unreached", no Flux Kustomization or Argo CD Application of the tree reaches them.
            "not_deployed": {kind: list(result.not_deployed.values()).count(kind) for kind in ("unlisted", "unreached")},
        },
        "hops": list(hops.values()),
        **({"clusters": _clusters(result)} if result.clusters else {}),
        "findings": [finding_dict(f, result, files) for f in result.findings],
        "diagnostics": [
            {"file": repo_path(d.path), "line": d.line, "level": d.level, "message": d.message}
            for d in result.diagnostics
        ],
        "unrendered": [{"file": repo_path(d.path), "reason": d.message} for d in result.unrendered],
        "notices": result.notices,
    }
    return log_json(document, ensure_ascii=True)
