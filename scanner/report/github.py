"""GitHub Actions workflow commands: one annotation per finding, shown on the pull request's diff.

`::error file=…,line=…,col=…,title=…::message`. The runner decodes %25, %0D and %0A in the
message, and in property values also %3A and %2C, so those characters are encoded here.
"""

from __future__ import annotations

from scanner.model import STDIN_PATH, Diagnostic, Finding
from scanner.report import counts, minor_sources, verdict
from scanner.paths import repo_path
from scanner.report.plain import log_line, printable
from scanner.scan import ScanResult


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: object) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items()
                     if value not in (None, "", 0))
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def render(result: ScanResult, color: bool = False) -> str:
    lines = [_finding(f) for f in result.findings]
    lines += [_diagnostic(d) for d in result.diagnostics]
    lines.append(log_line(printable(f"kubehop: {minor_sources(result, repo_path)}")))  # it names a file of the tree
    lines.append(f"kubehop: {verdict(result)} ({counts(result)})")
    return "\n".join(lines) + "\n"


def _where(path: str) -> str | None:
    return None if path == STDIN_PATH else repo_path(path)


def _finding(f: Finding) -> str:
    details = [f"{f.object_ref}: {f.message}"]
    if f.origin.via:
        details.append(f"via {f.origin.via}")
    if f.note:
        details.append(f"note: {f.note}")
    if f.remediation:
        details += ["fix:", *f.remediation]
    if f.source_url:
        details.append(f"source: {f.source_url}")
    return command({"error": "error", "notice": "notice"}.get(f.severity, "warning"), "\n".join(details),
                   file=_where(f.origin.path), line=f.origin.line, col=f.origin.column,
                   title=f"kubehop {f.rule_id}")


def _diagnostic(d: Diagnostic) -> str:
    return command("error" if d.level == "error" else "notice", d.message,
                   file=_where(d.path), line=d.line, title="kubehop: input problem")
