"""Which folders of the repository an Argo CD Application deploys: its sources' paths (`spec.source.path`,
`spec.sources[].path`), read from the repository's top as Argo CD reads them, or from the nearest folder
above the Application that holds them."""

from __future__ import annotations

import os
import posixpath
from typing import Iterator

from scanner.containment import leaves, within

GROUP = "argoproj.io"


def source_paths(spec: dict) -> Iterator[tuple[str, bool]]:
    """(path, readable) of each source of the repository (a Helm chart from a chart repository names no
    path); a path holding a template (`{{path}}` of an ApplicationSet) is not readable."""
    sources = spec.get("sources")
    for source in [spec.get("source"), *(sources if isinstance(sources, list) else [])]:
        source = source if isinstance(source, dict) else {}
        path = source.get("path")
        if isinstance(path, str) and path and not source.get("chart"):
            yield path, "{{" not in path


def folder_of(path: str, folder: str, top: str) -> str | None:
    """The real folder of the repository `path` names, or None (it leaves the repository, or names no folder)."""
    from scanner.sources.kustomize.flux import source_path  # a one-file scan imports no kustomize

    path = posixpath.normpath(path.lstrip("/")) if path.strip("./") else "."
    if leaves(path, top, top):
        return None
    real = source_path(folder, path, top)
    return real if os.path.isdir(real) and within(real, top) else None
