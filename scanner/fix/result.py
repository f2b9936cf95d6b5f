"""What `kubehop fix` did and did not do."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.model import Diagnostic


@dataclass(frozen=True)
class Left:
    """An object kubehop fix did not migrate, and why."""

    path: str
    line: int
    object: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.object}: {self.reason}"


# A changed document: (first, last + 1) line of it in the original text, the same in the fixed
# text, and the blocks of its lines that differ (relative to it, old then new), or None where not
# known (ruamel.yaml rewrote it: the diff compares its lines).
Piece = tuple[int, int, int, int, "list[tuple[int, int, int, int]] | None"]


@dataclass(frozen=True)
class FileFix:
    path: str
    original: str  # byte-order mark included: what the file holds, decoded
    fixed: str
    migrated: int  # objects
    pieces: tuple[Piece, ...] = ()  # the documents that changed, for the diff (report/patch.py)


@dataclass
class FixResult:
    files: list[FileFix] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
