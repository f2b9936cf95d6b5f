"""Exact versions in upgrade orders (v1.33.4, v1.33.4+k3s1, v1.33.4+rke2r2) and the distribution
a version string names (rules/cluster-version.yaml)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from scanner import data
from scanner.versions import Minor

_VERSION = re.compile(r"^v?(\d{1,18})\.(\d{1,18})(?:\.(\d{1,18}))?(?:-[0-9A-Za-z.-]+)?(?:\+([0-9A-Za-z.-]+))?$")
_BUILD_NUMBER = re.compile(r"(?<!\d)(\d{1,18})$")


@dataclass(frozen=True)
class OrderVersion:
    """The version an upgrade order names, as its distribution writes it (v1.33.4+k3s1)."""

    text: str  # as written
    minor: Minor
    patch: int | None  # None: only the minor is named (v1.33)
    build: int  # the distribution's rebuild of that patch: 2 for +k3s2, 0 without one

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (*self.minor, -1 if self.patch is None else self.patch, self.build)

    def same_release(self, other: OrderVersion) -> bool:
        return self.key == other.key


def parse_order_version(text: str | None) -> OrderVersion | None:
    m = _VERSION.match(str(text or "").strip())
    if not m:
        return None
    build = _BUILD_NUMBER.search(m.group(4) or "")
    return OrderVersion(str(text).strip(), Minor(int(m.group(1)), int(m.group(2))),
                        int(m.group(3)) if m.group(3) is not None else None, int(build.group(1)) if build else 0)


@functools.cache
def _distros() -> tuple[tuple[str, str], ...]:
    return tuple((d["name"], d["version_marker"]) for d in data.load("rules/cluster-version.yaml")["distros"])


def cluster_distros() -> tuple[str, ...]:
    """The distributions a cluster version string can name (k3s, rke2...)."""
    return tuple(name for name, _ in _distros())


def distro_of(version: str) -> str | None:
    """k3s for v1.31.5+k3s1, rke2 for v1.31.5+rke2r1, None for a plain Kubernetes version."""
    return next((name for name, marker in _distros() if marker in version), None)
