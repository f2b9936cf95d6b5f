"""The newest patch of each minor the data knows, per distribution (rules/distro-releases.yaml)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scanner import data
from scanner.versions import Minor, parse_minor


@dataclass(frozen=True)
class PatchRelease:
    version: str  # v1.32.13+k3s1
    source: str


@functools.cache
def _releases() -> dict[tuple[str, Minor], PatchRelease]:
    document = data.load("rules/distro-releases.yaml")
    return {(d["name"], parse_minor(r["minor"])): PatchRelease(r["version"], r["source"])
            for d in document["distros"] for r in d["releases"]}


def newest_patch(distro: str, minor: Minor) -> PatchRelease | None:
    """The exact version to write for `minor`; None when the data knows no release of it."""
    return _releases().get((distro, minor))
