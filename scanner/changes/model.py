"""What a window's change set holds: the files it changes, what each change is for, and what is
left to a person (with the exact command where one exists)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scanner.components.timeline import Step

if TYPE_CHECKING:
    from scanner.plan import Plan, Window


@dataclass(frozen=True)
class Edit:
    """One value the change set writes."""

    path: str
    line: int
    old: str
    new: str
    what: str  # the object or variable that holds it: "HelmRelease kube-system/cilium (chart cilium)"


@dataclass
class FileChange:
    path: str  # as the scan named it
    original: str | None  # None: a file the change set adds
    text: str
    changes: list[str] = field(default_factory=list)  # what it does, one line each
    bom: bool = False  # the file starts with a byte-order mark (the texts do not hold it; the diff does)

    @property
    def new(self) -> bool:
        return self.original is None


@dataclass(frozen=True)
class Manual:
    """A step the change set does not write, and why; `command` when one command does it."""

    what: str
    why: str
    where: str = ""  # path:line, when there is one place
    command: str | None = None


@dataclass(frozen=True)
class Move:
    """A component move the change set writes: its step, the values written, and the rest of its chain
    in this window, which lands one at a time after it (a later run of the same window writes each)."""

    step: Step
    edits: tuple[Edit, ...]
    later: tuple[Step, ...] = ()
    in_step: tuple[Edit, ...] = ()  # pins kept in step with the one the running system reads


@dataclass(frozen=True)
class Migrated:
    """An object the fix engine moves to the API version the window needs."""

    path: str
    line: int
    object: str
    old: str  # apiVersion
    new: str
    why: str  # "removed in 1.32", "before flux 2.9, which removes it"


@dataclass
class ChangeSet:
    plan: Plan
    window: Window
    files: list[FileChange] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    migrated: list[Migrated] = field(default_factory=list)
    hop: list[Edit] = field(default_factory=list)  # cluster version variables set to the hop's minor
    orders: list[str] = field(default_factory=list)  # what the written upgrade orders do
    manual: list[Manual] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    hop_waits: bool = False  # the hop is not written: other steps are left to a person first
    # In a fleet: the cluster it is made for, and a file it changes -> the other clusters that deploy it
    # too, and move with it.
    cluster: str | None = None
    shared: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Everything the window needs is written: nothing is left to a person."""
        return not self.manual

    def file(self, path: str) -> FileChange | None:
        return next((f for f in self.files if f.path == path), None)
