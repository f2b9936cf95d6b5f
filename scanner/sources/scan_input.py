"""What the sources give: the objects read, with everything a later stage needs to know of how.

Every source (sources/__init__.py `collect` and the sources beside it) returns a ScanInput; one
input's parts join another's with `extend`, in the order they were read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from scanner.model import Diagnostic, DuplicateKey, Manifest
from scanner.suppress import Suppression


@dataclass
class ScanInput:
    """What the sources read from the paths given: the manifests and everything found beside them."""

    manifests: list[Manifest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Charts, kustomizations and files holding template syntax that were not rendered, with the reason.
    unrendered: list[Diagnostic] = field(default_factory=list)
    # `# kubehop: ignore[...]` comments (scanner.suppress), applied once the checks have run.
    suppressions: list[Suppression] = field(default_factory=list)
    files_read: int = 0
    notices: list[str] = field(default_factory=list)
    # (path, root node) of the documents that may pin a component or cluster version without being a
    # Kubernetes object: Chart.yaml, kustomizations, `*_version:` variables (scanner.components.file_pins).
    documents: list[tuple[str, Any]] = field(default_factory=list)
    # Keys a render writes twice (helm/rendered_duplicates.py): facts for the checks (checks/duplicate_keys.py).
    duplicate_keys: list[DuplicateKey] = field(default_factory=list)
    # The `via` of objects read from templates a chart's values switch off: their findings are warnings.
    latent: set[str] = field(default_factory=set)
    # The tools that rendered part of the input, and their versions, e.g. {"helm": "v4.1.4+g05fa379"}.
    rendered_with: dict[str, str] = field(default_factory=dict)
    # How each tool that ran was kept from the network (tools/sandbox.py, tools/no_network.py),
    # e.g. {"helm": "network namespace ..."}.
    isolation: dict[str, str] = field(default_factory=dict)
    # Files the exclusions (`exclude` in the configuration, --exclude) left out: reports count them.
    excluded: int = 0
    # The paths scanned: what a file the tree names may be read from (kustomize/refs.py repository_root).
    scanned: list[str] = field(default_factory=list)
    # What the plain files configure the cluster's components with, and the client tools they pin
    # (sources/cluster/: scanner.cluster_config's Settings and ToolPins).
    cluster_config: list[Any] = field(default_factory=list)
    tool_pins: list[Any] = field(default_factory=list)
    # Objects read from their own file that an overlay's build gives another chart version
    # (kustomize/overlays.py Overlaid): their pins are the overlay's, their findings the file's.
    overlaid: list[Any] = field(default_factory=list)
    # Plain files in a kustomization's folder that no kustomization lists (kustomize/unreferenced.py):
    # path -> the kustomization file that governs it. Not deployed: findings notices, pins not the tree's.
    unreferenced: dict[str, str] = field(default_factory=dict)
    # Plain files no root of the tree reaches (sources/reach/unreached.py): path -> why, in words.
    # Not deployed either: findings notices, pins not the tree's.
    unreached: dict[str, str] = field(default_factory=dict)

    def __reduce__(self):
        """The fields that differ from a new one's (a worker process sends one for each file it reads,
        most of it empty: sources/files/parallel.py)."""
        empty = _empty()
        return (_rebuilt, ({name: value for name, value in vars(self).items() if value != getattr(empty, name)},))

    def extend(self, other: "ScanInput") -> None:
        self.manifests.extend(other.manifests)
        self.duplicate_keys.extend(other.duplicate_keys)
        self.latent.update(other.latent)
        self.documents.extend(other.documents)
        self.cluster_config.extend(other.cluster_config)
        self.tool_pins.extend(other.tool_pins)
        self.overlaid.extend(other.overlaid)
        self.unreferenced.update(other.unreferenced)
        self.unreached.update(other.unreached)
        self.diagnostics.extend(other.diagnostics)
        self.unrendered.extend(other.unrendered)
        self.suppressions.extend(other.suppressions)
        self.files_read += other.files_read
        self.excluded += other.excluded
        self.notices.extend(other.notices)
        self.rendered_with.update(other.rendered_with)
        self.isolation.update(other.isolation)


@functools.cache
def _empty() -> ScanInput:
    return ScanInput()


def _rebuilt(fields: dict[str, Any]) -> ScanInput:
    return ScanInput(**fields)
