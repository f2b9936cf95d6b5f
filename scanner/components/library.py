"""Library charts: a chart whose Chart.yaml says `type: library` deploys nothing of its own.

Helm refuses to install a library chart; a chart that depends on one (bjw-s's `common`, under a
local chart of the tree's own) renders the library's templates as its own objects, which kubehop
checks where they render. So a library chart is no component: not a chart judged by its kubeVersion,
not a component with no data. It is told by its own Chart.yaml wherever kubehop sees one (a chart kept
in the tree, a copy vendored under the umbrella's charts/, helm's cache, a repository index), else by
name and repository from rules/helm.yaml (`library_charts`).
"""

from __future__ import annotations

import functools
import os
from typing import Any, Iterable

from yaml.nodes import MappingNode

from scanner import data
from scanner.components.repositories import lists, readable
from scanner.nodes import mapping_get, scalar


@functools.lru_cache(maxsize=1)
def _facts() -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    facts = data.load("rules/helm.yaml")
    known = tuple((entry["name"], tuple(entry["repositories"])) for entry in facts["library_charts"])
    return facts["library_type"]["name"], known


def library_type(value: Any) -> bool:
    """Whether a Chart.yaml `type` (as read: a string, or anything else) says library."""
    return isinstance(value, str) and value.strip() == _facts()[0]


def known_library(chart: str | None, repository: str | None) -> bool:
    """A library chart rules/helm.yaml names, at one of its repositories (compared as components.repositories
    compares a component's)."""
    return bool(chart) and readable(repository) and any(
        name == chart and lists(repositories, repository, chart) for name, repositories in _facts()[1])


def library_charts_in_tree(documents: Iterable[tuple[str, Any]]) -> set[tuple[str, str]]:
    """(folder, name) of each Chart.yaml in the tree that says `type: library`."""
    found = set()
    for path, node in documents:
        if isinstance(node, MappingNode) and os.path.basename(path) == "Chart.yaml" \
                and library_type(scalar(mapping_get(node, "type"))):
            name = scalar(mapping_get(node, "name"))
            if name:
                found.add((os.path.dirname(path), name))
    return found


def vendored_library(umbrella: str, chart: str, libraries: set[tuple[str, str]]) -> bool:
    """A dependency `chart` of the Chart.yaml at `umbrella` whose copy under its charts/ is a library."""
    under = os.path.join(os.path.dirname(umbrella), "charts") + os.sep
    return any(name == chart and (folder + os.sep).startswith(under) for folder, name in libraries)
