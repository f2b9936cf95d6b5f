"""What Helm has deployed, as `collect` asks for it (--helm-releases): each release's stored
manifest, read offline from a dump of Helm's release Secrets (helm_releases.py)."""

from __future__ import annotations

from scanner.sources.releases.helm_releases import read_helm_releases
from scanner.sources.scan_input import ScanInput
from scanner.words import count


def read_releases(dump: str) -> ScanInput:
    manifests, diagnostics, releases = read_helm_releases(dump)
    return ScanInput(manifests=manifests, diagnostics=diagnostics, files_read=1,
                     notices=[f"{dump}: {count(releases, 'deployed Helm release')} scanned"])
