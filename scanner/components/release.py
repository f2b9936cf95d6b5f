"""A component release as the data states it: its Kubernetes range, patches that widen it, and what
it requires. Read from compat-matrix/ by scanner.components.catalog."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from scanner import data
from scanner.components.ranges import SUPPORTED, UNKNOWN, UNSUPPORTED, PatchRange, Range, Requirement
from scanner.semver import parse_version
from scanner.versions import Minor


def release_key(version: str) -> tuple[int, int]:
    """(major, minor) of a component version: "v1.2.1" and "1.2" are both (1, 2)."""
    parsed = parse_version(version)
    if parsed is None:
        raise data.DataError(f"not a component version: {version!r}")
    major, minor, _ = parsed.floor
    return major, minor


def placeholder(version: str) -> bool:
    """0.0.0 or 0.0.1: the version a chart or a template carries before anyone versions it, never a
    release (a project's own 0.0.x line, Reloader's v0.0.118, is one)."""
    parsed = parse_version(version)
    return parsed is not None and parsed.precision >= 2 and parsed.floor in ((0, 0, 0), (0, 0, 1))


@dataclass(frozen=True)
class Release:
    """One release of a component and the Kubernetes minors it supports, as its source states them."""

    version: str
    released: str | None
    min: Minor | None  # of the .0 release; None: the project states no bound (unknown, not "any")
    max: Minor | None
    source: str
    open_ended: bool = False  # the project states every minor from `min` on ("1.34+")
    source_kind: str = "primary"
    through: Minor | None = None  # open-ended: the newest minor out when the data was checked (ranges.Range)
    requires: tuple[Requirement, ...] = ()
    note: str | None = None
    patches: tuple[PatchRange, ...] = ()  # later patches that restate the range, oldest first
    listed: bool = True  # False: a release the tree pins that the data does not list (range unknown)
    constraint: str | None = None  # a chart version's kubeVersion as written, when the range is read from it
    # The pin names this minor but not the patch that runs (a chart version of its own numbering, whose app
    # patch the data does not map): where the minor's patches disagree, support is unknown.
    patch_unknown: bool = False

    # Computed once per release (a component may list thousands: Renovate's minors, each compared
    # at every hop of every pin); the fields they are read from never change.
    @functools.cached_property
    def key(self) -> tuple[int, int]:
        return release_key(self.version)

    @functools.cached_property
    def order(self) -> tuple[int, int, int]:
        """(major, minor, patch): a patch that restates the range sorts after its minor's .0."""
        parsed = parse_version(self.version)
        return parsed.floor if parsed is not None else (*self.key, 0)

    def at_patch(self, version: str) -> Release:
        """This minor as its patch `version` runs it: the range stated from the last restating patch
        at or before it ("1.7.5" runs with what 1.7.3 states), labelled with `version`."""
        parsed = parse_version(version)
        if parsed is None or parsed.precision < 3 or release_key(version) != self.key or not self.patches:
            return self
        stated = self.range_at(version)
        return dataclasses.replace(self, version=".".join(map(str, parsed.floor)), min=stated.min, max=stated.max,
                                   open_ended=stated.open_ended, through=stated.through, patches=tuple(
                                       p for p in self.patches if parse_version(p.first).floor > parsed.floor))

    def effective(self) -> tuple[Release, ...]:
        """The .0 release, then each later patch that restates the range, as a release of its own."""
        return (dataclasses.replace(self, patches=(), patch_unknown=False), *(dataclasses.replace(
            self, version=p.first, min=p.range.min, max=p.range.max, open_ended=p.range.open_ended,
            through=p.range.through, source=p.source, note=p.note, patches=(), patch_unknown=False)
            for p in self.patches))

    def support(self, minor: Minor) -> str:
        """SUPPORTED, UNSUPPORTED or UNKNOWN for `minor`, as the .0 release states it."""
        return {True: SUPPORTED, False: UNSUPPORTED, None: UNKNOWN}[self.supports(minor)]

    @property
    def range(self) -> Range:
        return Range(self.min, self.max, self.open_ended, self.through)

    def supports(self, minor: Minor) -> bool | None:
        """What the .0 release states: True or False when the data says so; None when it does not know.
        Later patches may say otherwise: `patch_supporting`. With `patch_unknown`, what every patch states
        alike, else None."""
        if self.patch_unknown and self.patches:
            stated = {r.range.supports(minor) for r in self.effective()}
            return stated.pop() if len(stated) == 1 else None
        return self.range.supports(minor)

    def range_at(self, version: str) -> Range:
        """The range stated for a patch of this minor ("1.7.5" -> what 1.7.3 states, when 1.7.3 restated it)."""
        parsed = parse_version(version)
        if parsed is None:
            return self.range
        found = [p.range for p in self.patches if parse_version(p.first).floor <= parsed.floor]
        return found[-1] if found else self.range

    def patch_supporting(self, minor: Minor) -> str | None:
        """The oldest patch of this minor stated to support `minor` ("1.7" for the .0 release, "1.7.3"), or None."""
        if self.supports(minor):
            return self.version
        return next((p.first for p in self.patches if p.range.supports(minor)), None)

    @property
    def support_text(self) -> str:
        text = self.range.text
        if self.constraint is not None:
            text += f' (kubeVersion "{self.constraint}")'
        return "; ".join([text] + [f"from {p.first}: {p.range.text}" for p in self.patches])
