"""One row per finding, with a header: for a spreadsheet or a script. Quoted as RFC 4180 says (a cell
with a comma or a quote is quoted, its quotes doubled); a record ends with a newline, not RFC 4180's
CRLF, since a carriage return is what no line kubehop prints may hold (every CSV reader takes either).
A tree writes the names, so every cell goes through plain.csv_cell (one line, and no cell a
spreadsheet runs as a formula), and every record through plain.log_line."""

from __future__ import annotations

import csv
import io

from scanner.report import hop_label
from scanner.paths import repo_path
from scanner.report.plain import csv_cell, log_line
from scanner.report.wide import fix_words
from scanner.scan import ScanResult

COLUMNS = ("file", "line", "column", "severity", "rule", "hop", "breaks_in", "api_version", "kind", "namespace",
           "name", "message", "fix", "via")


def render(result: ScanResult, color: bool = False) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for f in result.findings:
        writer.writerow([csv_cell(value) for value in (
            repo_path(f.origin.path), f.origin.line or "", f.origin.column or "", f.severity, f.rule_id,
            hop_label(f, result), f.breaks_in, f.api_version, f.kind, f.namespace, f.name, f.text, fix_words(f),
            f.origin.via)])
    return "\n".join(log_line(record) for record in out.getvalue().split("\n"))
