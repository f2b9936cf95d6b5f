"""What Helm has deployed, as `collect` asks for it (--helm-releases): each release's stored
manifest, read offline from a dump of Helm's release Secrets (helm_releases.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.sources.releases.helm_releases import read_helm_releases
from scanner.sources.scan_input import ScanInput
from scanner.words import count

if TYPE_CHECKING:
    from scanner.sources.registry import Reading


def read(dumps: list[str], so_far: ScanInput, reading: "Reading") -> ScanInput:
    """Each dump given with --helm-releases (`collect` hands them one at a time)."""
    result = ScanInput()
    for dump in dumps:
        result.extend(read_releases(dump))
    return result


def read_releases(dump: str) -> ScanInput:
    manifests, diagnostics, releases = read_helm_releases(dump)
    return ScanInput(manifests=manifests, diagnostics=diagnostics, files_read=1,
                     notices=[f"{dump}: {count(releases, 'deployed Helm release')} scanned"])
