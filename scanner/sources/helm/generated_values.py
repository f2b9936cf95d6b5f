"""ConfigMaps and Secrets a kustomization generates, for the `valuesFrom` of a Flux HelmRelease beside it.

kubehop renders a HelmRelease from its own file, before kustomize builds anything, so a ConfigMap the
kustomization next to it generates (`configMapGenerator`, `secretGenerator`) is no object yet. It is
made here as kustomize makes it: each `files` entry (`key=path`, or `path` keyed by the file's name),
each `literals` entry (`KEY=VALUE`), each `KEY=VALUE` line of an `envs` file (a bare `KEY`, which
kustomize takes from its own environment, is not read: kubehop reads no environment for the tree).

It is the release's when the kustomization in the release's folder lists the release's file in
`resources`, and the release finds it under the name it gives: `disableNameSuffixHash` (the
generator's `options` or the kustomization's `generatorOptions`) keeps the name, or `configurations`
(where Flux's documented nameReference for `spec/valuesFrom/name` lives) rewrites the release's
reference along with the hashed name. A generated name with a hash and no configuration is not the one
the release names: Flux would not find it either, and the notice says so. Files are read only inside
the repository holding the kustomization (scanner.containment), never a folder, never outside.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from yaml.nodes import MappingNode

from scanner.containment import leaves, repository_root
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.sources.files.walk import KUSTOMIZATION_FILES, read_file

_GENERATORS = {"ConfigMap": "configMapGenerator", "Secret": "secretGenerator"}


@dataclass(frozen=True)
class Generated:
    """What a kustomization generates under one name: its keys, or why they are not read."""

    where: str  # the kustomization
    data: dict[str, str] | None
    why: str | None = None


class GeneratedValues:
    """The kustomizations of a scan, by folder, looked up only for a valuesFrom missing from the tree."""

    def __init__(self, documents: Iterable[tuple[str, Any]], scanned: Sequence[str] = ()) -> None:
        self.scanned = list(scanned)
        self.by_folder: dict[str, tuple[str, MappingNode]] = {}
        for path, node in documents:
            if isinstance(node, MappingNode) and os.path.basename(path) in KUSTOMIZATION_FILES:
                self.by_folder.setdefault(os.path.normpath(os.path.dirname(path) or "."), (path, node))

    def lookup(self, kind: str | None, name: str | None, release_path: str) -> Generated | None:
        """What the kustomization beside the release at `release_path` generates as `kind` `name`."""
        folder = os.path.normpath(os.path.dirname(release_path) or ".")
        found = self.by_folder.get(folder)
        if found is None or kind not in _GENERATORS or not name:
            return None
        path, node = found
        listed = {os.path.normpath(os.path.join(folder, scalar(r) or ""))
                  for r in sequence_items(mapping_get(node, "resources"))}
        if os.path.normpath(release_path) not in listed:
            return None
        entries = [g for g in sequence_items(mapping_get(node, _GENERATORS[kind]))
                   if scalar(mapping_get(g, "name")) == name]
        if not entries:
            return None
        if len(entries) > 1:
            return Generated(path, None, f"generates {kind} {name} twice; not read")
        return self._generated(path, folder, node, entries[0], kind, name)

    def _generated(self, path: str, folder: str, node: MappingNode, entry: Any, kind: str, name: str) -> Generated:
        behavior = scalar(mapping_get(entry, "behavior")) or "create"
        if behavior == "merge":
            return Generated(path, None, f"merges {kind} {name} into a base's; not read")
        if not (_no_hash(entry, node) or sequence_items(mapping_get(node, "configurations"))):
            return Generated(path, None, f"generates {kind} {name} with a name hash and no configurations to "
                                         "rewrite the release's reference (nameReference): Flux finds no "
                                         f"{kind} {name} either")
        root = repository_root(folder, self.scanned)
        data: dict[str, str] = {}
        for item in sequence_items(mapping_get(entry, "literals")):
            key, sep, value = (scalar(item) or "").partition("=")
            if sep and key:
                data[key.strip()] = value
        for item in sequence_items(mapping_get(entry, "files")):
            key, sep, file = (scalar(item) or "").partition("=")
            key, file = (key, file) if sep else (os.path.basename(key), key)
            text, why = _read(folder, file, root)
            if why:
                return Generated(path, None, f"file {file} of {kind} {name} {why}")
            data[key] = text or ""
        for item in [*sequence_items(mapping_get(entry, "envs")), mapping_get(entry, "env")]:
            file = scalar(item)
            if not file:
                continue
            text, why = _read(folder, file, root)
            if why:
                return Generated(path, None, f"env file {file} of {kind} {name} {why}")
            data.update(_env_lines(text or ""))
        return Generated(path, data)


def _no_hash(entry: Any, kustomization: MappingNode) -> bool:
    own = scalar(mapping_get(mapping_get(entry, "options"), "disableNameSuffixHash"))
    if own is not None:
        return own == "true"
    return scalar(mapping_get(mapping_get(kustomization, "generatorOptions"), "disableNameSuffixHash")) == "true"


def _read(folder: str, file: str, root: str) -> tuple[str | None, str | None]:
    """A generator's file, read only inside `root`: its text, or why not ("leaves the repository...")."""
    if not file or "://" in file:
        return None, "is not a file in the repository; not read"
    why = leaves(file, folder, root)
    if why:
        return None, f"{why}; not read"
    path = os.path.normpath(os.path.join(folder, file))
    if os.path.isdir(path):
        return None, "is a folder; not read"
    text, problem = read_file(path)
    if text is None:
        return None, f"({problem.message if problem else 'not readable'}); not read"
    return text, None


def _env_lines(text: str) -> dict[str, str]:
    """KEY=VALUE lines as kustomize reads an env file; comments, blank lines and a bare KEY are left out."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        key, sep, value = line.partition("=")
        if line and not line.startswith("#") and sep and key.strip():
            found[key.strip()] = value
    return found
