"""What the paths a user gives hold, said plainly.

A wrong path in a CI job must not pass as green: a path that does not exist is an input problem
(exit code 3) that says so, and a folder given explicitly that holds no Kubernetes object (no
manifest, no chart, no kustomization) and nothing else kubehop checks (no component or cluster
version pin, no client tool pin, no cluster configuration) is named in a notice, and in the
verdict when nothing at all was checked. A file given that holds no object (a values file, a CI configuration: what pre-commit
passes along with manifests) is not: it is quiet, as before.
"""

from __future__ import annotations

import os

from scanner.containment import within

MISSING, EMPTY = "missing", "empty"


def words(path: str, why: str) -> str:
    """What `nothing_in` found, in words; `path` as the format writes it."""
    return f"{path} does not exist" if why == MISSING else f"no Kubernetes objects found in {path}"


def nothing_in(paths: list[str], analysis) -> list[tuple[str, str]]:
    """Each path given that gave nothing to check, and why: (path, MISSING) for one that does not
    exist, (folder, EMPTY) for a folder that holds no Kubernetes object."""
    said = [(p, MISSING) for p in paths if p != "-" and not os.path.lexists(p)]
    folders = [p for p in paths if p != "-" and os.path.isdir(p)]
    if not folders or analysis.silenced.get("excluded"):  # the verdict names what `exclude` left out
        return said
    read = {os.path.abspath(path) for path in _paths_read(analysis)}
    for folder in folders:
        top = os.path.abspath(folder)
        if not any(within(path, top) for path in read) and not _holds_chart_or_kustomization(folder):
            said.append((folder, EMPTY))
    return said


def _paths_read(analysis):
    """The files that gave something to check: objects, and what the tree pins or configures without
    one (a component's version variable, a .tool-versions, a kubelet flag in a K3s config)."""
    views = [analysis, *(view.analysis for view in analysis.clusters)]
    for view in views:
        yield from dict.fromkeys(m.origin.path for m in view.manifests)
        yield from (f.origin.path for f in view.findings)
        yield from (d.path for d in view.diagnostics)
        yield from (read.origin.path for read in (*view.cluster_config, *view.tool_pins))
        if view.tree is not None:
            yield from (pin.origin.path for pin in (*view.tree.detections, *view.tree.cluster))


def _holds_chart_or_kustomization(folder: str) -> bool:
    from scanner.sources.files.walk import ChartFolder, KustomizeFolder, walk

    return any(isinstance(item, (ChartFolder, KustomizeFolder)) for item in walk([folder]))
