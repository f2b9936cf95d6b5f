"""The scan as a service: paths in, a ScanResult out. The CLI and the tests both call this."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field

from scanner.checks import ScanContext, run_checks
from scanner.model import Diagnostic, Finding
from scanner.rulebook import load_rulebook
from scanner.sources import ScanInput, collect
from scanner.versions import Minor

EXIT_OK = 0  # nothing blocks the target
EXIT_BLOCKED = 1  # at least one error-level finding
EXIT_USAGE = 2  # bad command line (click's own code too)
EXIT_INPUT = 3  # some input could not be read; everything else was still scanned


@dataclass
class ScanResult:
    target: Minor
    current: Minor | None
    findings: list[Finding]
    diagnostics: list[Diagnostic]
    unrendered: list[Diagnostic]
    files_read: int
    objects: int
    data_checked: str
    notices: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def input_errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def exit_code(self) -> int:
        # Unreadable input wins: the scan is incomplete, so "nothing blocks" can't be claimed.
        if self.input_errors:
            return EXIT_INPUT
        return EXIT_BLOCKED if self.errors else EXIT_OK


@dataclass(frozen=True)
class ScanOptions:
    """Everything a scan can be asked beyond paths and minors; sources and checks read what they need."""

    allow_network: bool = False


def scan(paths: list[str], target: Minor, current: Minor | None = None,
         options: ScanOptions = ScanOptions()) -> ScanResult:
    rulebook = load_rulebook()
    with _cyclic_gc_paused():
        scan_input: ScanInput = collect(paths)
        context = ScanContext(target=target, current=current, rulebook=rulebook)
        findings = run_checks(scan_input.manifests, context)
    return ScanResult(
        target=target,
        current=current,
        findings=findings,
        diagnostics=sorted(scan_input.diagnostics, key=lambda d: (d.path, d.line or 0, d.message)),
        unrendered=sorted(scan_input.unrendered, key=lambda d: d.path),
        files_read=scan_input.files_read,
        objects=len(scan_input.manifests),
        data_checked=rulebook.checked,
    )


@contextmanager
def _cyclic_gc_paused():
    """Composed YAML nodes form no reference cycles, but a large tree keeps millions of them alive
    and the cyclic collector would re-walk them all on every collection: 3-4x the parse time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
