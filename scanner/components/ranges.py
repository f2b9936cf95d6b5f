"""What a release's Kubernetes range says: the three states of a (release, minor), a patch that
restates the range, another component a release requires.

An open-ended statement ("1.34+", "compatible with >= 1.33") speaks for the minors that were out
when it was read, no further: `Range.through` is the newest minor out on the day its file was last
checked (scanner.minor_releases), and a later minor is unknown for it, not supported.
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.versions import Minor

# The three states of a (release, minor): a source states support, a stated range excludes it, or neither.
SUPPORTED, UNSUPPORTED, UNKNOWN = "supported", "unsupported", "unknown"


@dataclass(frozen=True)
class Range:
    """The Kubernetes minors a project states a release supports."""

    min: Minor | None  # None: the project states no bound (unknown, not "any")
    max: Minor | None
    open_ended: bool = False  # the project states every minor from `min` on ("1.34+")
    through: Minor | None = None  # open-ended: the newest minor out when it was read; None: no limit known

    def supports(self, minor: Minor) -> bool | None:
        """True or False when the data says so; None when it does not know."""
        if self.min is not None and minor < self.min:
            return False
        if self.max is not None and minor > self.max:
            return False
        if self.min is None or (self.max is None and not self.open_ended):
            return None
        if self.open_ended and self.through is not None and minor > self.through:
            return None  # stated before that minor was out: it cannot speak for it
        return True

    @property
    def text(self) -> str:
        if self.min is None and self.max is None:
            return "unknown"
        low = str(self.min) if self.min else "?"
        if self.open_ended:
            return f"{low} and later" + (f" (read when {self.through} was the newest)" if self.through else "")
        high = str(self.max) if self.max else "? (no stated maximum)"
        return f"{low}–{high}"


@dataclass(frozen=True)
class Requirement:
    """Another component a release needs, at a minor of its own; `when_values`: only when the
    release's Helm values set that path (Cilium needs the Gateway API CRDs when gatewayAPI.enabled)."""

    component: str
    version: str
    when_values: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class PatchRange:
    """A later patch of a minor that states another range (Longhorn 1.7.3 lists newer Kubernetes than 1.7.0)."""

    first: str  # "1.7.3": the range holds from this patch on, until the next PatchRange
    range: Range
    source: str
    note: str | None = None
