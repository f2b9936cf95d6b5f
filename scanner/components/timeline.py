"""The component state's model: the moves, problems and migrations of each hop, and their kinds.

Built by `scanner.components.state.resolve`; read by the plan and the component checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scanner.components.catalog import Component, CrdRule, Release
from scanner.semver import parse_version
from scanner.model import Manifest, Origin
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.pins import Detection

BLOCKER, UNKNOWN, WARNING = "blocker", "unknown", "warning"
# --unknown: what an unknown fact (support nobody states, a release kubehop cannot tell) counts as.
UNKNOWN_POLICIES = ("warn", "block", "ignore")

# What a problem is about; a finding's rule is component/<name>/<kind>.
UNSUPPORTED = "unsupported"  # the pinned release's stated range excludes a hop's minor; a move fixes it
UNKNOWN_SUPPORT = "unknown-support"  # the pinned release states nothing for a hop; a release that does exists
UNVERIFIED = "unverified"  # no release states support for a hop's minor
BLOCKED = "blocked"  # no release can run on a hop's minor (or on both sides of it)
UNKNOWN_RELEASE = "unknown-release"  # which release runs cannot be told from the pins
OUTSIDE_RANGE = "outside-range"  # the cluster already runs outside the release's stated range
NEWER_THAN_CLUSTER = "newer-than-cluster"  # the release states support only from a later minor
REQUIRES = "requires"  # a release needs another component the data or the tree does not give
REQUIRED_MOVE = "required-move"  # the pinned release moves because another component's release needs it
NO_DATA = "no-data"  # the tree deploys it and no data file names it: every hop is unknown


@dataclass(frozen=True)
class Step:
    """A component's move from one release to another, before a hop."""

    component: Component
    source: Release
    target: Release
    pins: tuple[Origin, ...]  # where to edit the version
    why: str
    state: str = ""  # the key of the install that moves (ComponentState.key)

    @property
    def label(self) -> str:
        return f"{self.component.name} {self.source.version} → {self.target.version}"


@dataclass(frozen=True)
class Problem:
    """What a component's support or move says of a hop (a blocker, an unknown, a warning)."""

    severity: str  # BLOCKER, UNKNOWN or WARNING, after the --unknown policy
    component: str | None
    message: str
    kind: str = ""  # one of the kinds above
    minor: Minor | None = None  # the hop's minor it is about; None: today
    pins: tuple[Origin, ...] = ()  # where the component is pinned
    fix: tuple[str, ...] = ()  # the moves that clear it, one line each
    support: str | None = None  # the state behind it: supported, unsupported, unknown or unverified
    source: str | None = None  # where the fact behind it is stated, when not the start release's range
    state: str | None = None  # the key of the install it is about (ComponentState.key); None: the component's
    advice: str | None = None  # the move that clears it, said after the message ("move it to 1.17 before …")

    @property
    def text(self) -> str:
        """The message and its advice, as one sentence (as a finding's text says them)."""
        return f"{self.message}; {self.advice}" if self.advice else self.message


@dataclass(frozen=True)
class Migration:
    """Objects of a CRD API a component's release drops, and the move that drops it."""

    rule: CrdRule
    objects: tuple[Manifest, ...]
    # The move that crosses the release dropping the API; None: the pinned release already dropped it.
    step: Step | None = None
    hop: Minor | None = None  # the hop whose move crosses the removal (None: already, or unknown)
    # kubehop cannot tell which release of the component runs: it may have dropped the API already.
    unknown: bool = False
    # The move is one at the current minor (no hop left: Timeline.moves), not a hop's; `hop` is that minor.
    now: bool = False

    @property
    def before(self) -> str:
        """The component release that stops serving the API, e.g. "flux 2.9"."""
        return f"{self.rule.component} {self.rule.removed_in}"

    @property
    def already(self) -> bool:
        return self.step is None and not self.unknown

    @property
    def needed_by(self) -> str:
        """What needs the move that crosses the removal: "the hop to 1.34", or, with no hop left, "the
        cluster's Kubernetes 1.36" (the pinned release runs outside its range there)."""
        return f"the cluster's Kubernetes {self.hop}" if self.now else f"the hop to {self.hop}"


@dataclass
class ComponentState:
    """One install of a component: the pins of one version (components.installs), planned together."""

    component: Component
    detections: list[Detection]  # the pins the plan edits (the most trusted kind found)
    start: Release | None  # None: no known release matches the pins
    final: Release | None = None
    key: str = ""  # the component's name, or "<name>@<version>" when the tree pins it at several versions

    def __post_init__(self) -> None:
        self.key = self.key or self.component.name

    @property
    def label(self) -> str:
        """How a report names the install: the component, with its pin when it has several."""
        return self.component.name if self.key == self.component.name else \
            f"{self.component.name} {self.key.partition('@')[2]}"

    @property
    def pins(self) -> tuple[Origin, ...]:
        return tuple(d.origin for d in self.detections)

    def named(self, release: Release) -> str:
        """The component at `release`, as a message names it; the chart version as pinned when the
        release is the one the tree pins by one exact chart version (Component.named)."""
        return self.component.named(release.version, self._pinned_chart(release))

    def short(self, release: Release) -> str:
        """The release in a table cell: "0.78 (chart 66.2.2)" for the pinned start of a chart whose
        releases are an app's, "0.81 (chart 70)" for a later one (Component.short), else the version."""
        chart = self._pinned_chart(release) if self.component.release_title is not None else None
        return f"{release.version} (chart {chart})" if chart else self.component.short(release.version)

    def _pinned_chart(self, release: Release) -> str | None:
        exact = {d.pin.lstrip("v") for d in self.detections
                 if d.source == "chart" and (parsed := parse_version(d.pin)) is not None and parsed.precision == 3
                 and not d.floating}
        return exact.pop() if release is self.start and len(exact) == 1 else None


@dataclass
class Hop:
    """One hop, source → target: the moves that land before it and what stops a component there."""

    source: Minor
    target: Minor
    moves: list[Step] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Timeline:
    """Every component through every hop from `current` to `target`."""

    current: Minor
    target: Minor
    states: list[ComponentState]
    hops: list[Hop]
    problems: list[Problem]  # about today, before any hop
    migrations: list[Migration] = field(default_factory=list)
    # With no hop left (the cluster at the target): the moves on the current minor that bring a release
    # running outside its stated range back into it (with hops, the first hop's moves do).
    moves: list[Step] = field(default_factory=list)
    unknown: str = "warn"  # the --unknown policy it was resolved with

    @property
    def all_problems(self) -> list[Problem]:
        return self.problems + [p for hop in self.hops for p in hop.problems]
