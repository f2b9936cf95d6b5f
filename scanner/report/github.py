"""GitHub Actions workflow commands: one annotation per finding, shown on the pull request's diff.

`::error file=…,line=…,col=…,title=…::message`. The runner decodes %25, %0D and %0A in the
message, and in property values also %3A and %2C, so those characters are encoded here. What
comes from the tree goes through `command`, the one way out of this module: each line of a
message and each property is made printable first (scanner.report.plain: a newline from the tree
is shown as `\n`, not taken as the annotation's next line), and `##[` is broken up, as in the text
report, so the only workflow commands in the output are the ones kubehop writes.
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


def command(level: str, lines: list[str] | str, **properties: object) -> str:
    """One workflow command; `lines` are the message's lines (an annotation shows them one under another)."""
    message = "\n".join(printable(line) for line in ([lines] if isinstance(lines, str) else lines))
    props = ",".join(f"{key}={escape_property(printable(value))}" for key, value in properties.items()
                     if value not in (None, "", 0))
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}".replace("##[", "##\\[")


def render(result: ScanResult, color: bool = False) -> str:
    lines = [_finding(f) for f in result.findings]
    lines += [_diagnostic(d) for d in result.diagnostics]
    lines.append(log_line(printable(f"kubehop: {minor_sources(result, repo_path)}")))  # it names a file of the tree
    lines.append(log_line(f"kubehop: {verdict(result)} ({counts(result)}; data checked {result.data_checked})"))
    return "\n".join(lines) + "\n"


def _where(path: str) -> str | None:
    return None if path == STDIN_PATH else repo_path(path)


def _finding(f: Finding) -> str:
    details = [f"{f.object_ref}: {f.text}"]
    if f.clusters:
        details.append(f"breaks in cluster{'s' if len(f.clusters) > 1 else ''} {', '.join(f.clusters)}")
    if f.origin.via:
        details.append(f"via {f.origin.via}")
    if f.note:
        details.append(f"note: {f.note}")
    if f.remediation:
        details += ["fix:", *f.remediation]
    if f.source_url:
        details.append(f"source: {f.source_url}")
    return command({"error": "error", "notice": "notice"}.get(f.severity, "warning"), details,
                   file=_where(f.origin.path), line=f.origin.line, col=f.origin.column,
                   title=f"kubehop {f.rule_id}")


def _diagnostic(d: Diagnostic) -> str:
    return command("error" if d.level == "error" else "notice", d.message,
                   file=_where(d.path), line=d.line, title="kubehop: input problem")
