"""What a kustomization refers to, found before any build: every file, folder and URL kustomize would read.

Remote references are recognised as kustomize itself recognises them (a URL, an scp-like git address,
`github.com/…` even when a local folder has that name), in every field kustomize loads from, and a
catch-all finds a URL in any other field that is not plain data. Local references are followed
through bases and components, and each one must stay inside the repository the kustomization lives
in (symbolic links resolved, scanner.containment): kubehop never lets kustomize read outside it. A
`file://` (or `git::file://`) reference is a local repository kustomize would clone with
--allow-network: its folder is held to the same rule.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from scanner import per_scan
from scanner.containment import leaves
from scanner.sources.files.walk import KUSTOMIZATION_FILES, read_file
from scanner.nodes import construct, locate
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents, load_data

# Fields kustomize loads, by what they name: a folder (a kustomization) or either a file or a folder.
_FOLDER_OR_FILE = ("resources", "bases", "generators", "transformers", "validators")
_FOLDERS = ("components",)
_FILES = ("crds", "configurations")
_PATCH_LISTS = ("patches", "patchesJson6902", "replacements")  # items with a `path`
_GENERATORS = ("configMapGenerator", "secretGenerator")
# Keys of an inline generator or transformer configuration that name files kustomize loads.
_INLINE_PATH_KEYS = frozenset({"path", "paths", "files", "envs", "env", "valuesFile", "additionalValuesFiles",
                               "chartHome"})
# Fields that are data only: kustomize never loads anything they name (the catch-all skips them).
_DATA_FIELDS = frozenset({"apiVersion", "kind", "metadata", "namespace", "namePrefix", "nameSuffix", "commonLabels",
                          "labels", "commonAnnotations", "images", "imageTags", "replicas", "vars", "sortOptions",
                          "buildMetadata", "generatorOptions", "helmCharts", "helmGlobals", "openapi"})
_DATA_KEYS = frozenset({"patch", "literals", "options", "valuesInline", "target", "source", "targets"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_GIT_USER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*@")
_LOCAL_REPOSITORY = re.compile(r"^(git::)?file://", re.IGNORECASE)


@dataclass(frozen=True)
class Kustomization:
    folder: str  # as displayed
    path: str | None  # its kustomization file, None when the folder has none
    document: dict
    problem: str | None = None  # why the file could not be read
    node: Any = None  # the composed document (it knows each key's line)

    def line_of(self, *path: str | int) -> int:
        """The 1-based line of an entry of the kustomization file, 0 when it has none."""
        found = locate(self.node, path) if self.node is not None else None
        return found.start_mark.line + 1 if found is not None else 0


@dataclass(frozen=True)
class Reference:
    field: str  # e.g. "resources", "configMapGenerator.files"
    value: str
    folder_or_file: bool = True  # may name a kustomization folder (followed) as well as a file


@dataclass
class Closure:
    """A kustomization and everything it reaches locally."""

    folders: list[str] = field(default_factory=list)  # kustomization folders, the one built first
    remote: list[str] = field(default_factory=list)  # "field value" of each remote reference
    outside: list[str] = field(default_factory=list)  # local references that leave the repository
    problems: list[str] = field(default_factory=list)  # folders whose kustomization file cannot be read
    children: dict[str, list[str]] = field(default_factory=dict)  # real folder -> real folders it uses

    def reaching(self, wanted: set[str]) -> set[str]:
        """The real folders from which one of `wanted` (real folders) can be reached, those included."""
        found: set[str] = set()
        for folder in sorted(self.children, key=len):
            stack, seen = [folder], set()
            while stack:
                current = stack.pop()
                if current in wanted:
                    found.add(folder)
                    break
                seen.add(current)
                stack.extend(c for c in self.children.get(current, ()) if c not in seen)
        return found


def kustomization_file(folder: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def read_kustomization(folder: str) -> Kustomization:
    return _read(folder, os.path.realpath(folder))


@per_scan.cache(maxsize=4096)
def _read(folder: str, _real: str) -> Kustomization:
    path = kustomization_file(folder)
    if path is None:
        return Kustomization(folder, None, {}, "no kustomization file")
    text, problem = read_file(path)
    if problem is not None:
        return Kustomization(folder, path, {}, problem.message)
    try:
        nodes, _ = compose_documents(text, path)
    except (DocumentProblem, TemplateSyntax) as err:
        return Kustomization(folder, path, {}, str(err) or "holds template syntax")
    document = construct(nodes[0]) if nodes else {}
    if not isinstance(document, dict):
        return Kustomization(folder, path, {}, "is not a mapping")
    return Kustomization(folder, path, document, node=nodes[0] if nodes else None)


def is_remote(reference: str) -> bool:
    """Would kustomize fetch this (over HTTP or with git) instead of reading a local path?"""
    reference = reference.strip()
    lowered = reference.lower()
    if lowered.startswith("git::") or _URL.match(reference) or _GIT_USER.match(reference):
        return True
    return lowered.startswith(("github.com/", "github.com:"))


def local_repository(reference: str) -> str | None:
    """The folder a `file://` or `git::file://` reference names (kustomize clones it as a repository,
    its `?ref=` and `//subfolder` within); None for any other reference."""
    scheme = _LOCAL_REPOSITORY.match(reference.strip())
    return reference.strip()[scheme.end():].split("?", 1)[0] if scheme else None


def _looks_like_host(reference: str) -> bool:
    """`gitlab.example.com/org/repo//path`: a remote base written without a scheme (kustomize reads it as a
    missing local folder; kubehop lists it as remote rather than as a broken build)."""
    host = reference.split("/", 1)[0]
    return "." in host and not host.startswith(".") and "/" in reference


def references(document: dict) -> Iterator[Reference]:
    """Every path or URL the kustomization names, field by field; a name holding a NUL names no file
    (realpath refuses it), and kustomize says what it makes of it."""
    return (reference for reference in _references(document) if "\0" not in reference.value)


def _references(document: dict) -> Iterator[Reference]:
    for name in _FOLDER_OR_FILE + _FOLDERS + _FILES:
        for value in _strings(document.get(name)):
            if "\n" in value and name in ("generators", "transformers", "validators"):
                yield from _inline_config(name, value)
            else:
                yield Reference(name, value, name not in _FILES)
    for value in _strings(document.get("patchesStrategicMerge")):
        if "\n" not in value:  # otherwise an inline patch
            yield Reference("patchesStrategicMerge", value, False)
    for name in _PATCH_LISTS:
        for item in _maps(document.get(name)):
            if isinstance(item.get("path"), str):
                yield Reference(f"{name}.path", item["path"], False)
    for name in _GENERATORS:
        for item in _maps(document.get(name)):
            for value in _strings(item.get("files")):
                yield Reference(f"{name}.files", value.split("=", 1)[-1], False)
            for value in [*_strings(item.get("envs")), *_strings(item.get("env"))]:
                yield Reference(f"{name}.envs", value, False)
    openapi = document.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield Reference("openapi.path", openapi["path"], False)
    helm_globals = document.get("helmGlobals")
    if isinstance(helm_globals, dict) and isinstance(helm_globals.get("chartHome"), str):
        yield Reference("helmGlobals.chartHome", helm_globals["chartHome"], False)
    for item in _maps(document.get("helmCharts")) + _maps(document.get("helmChartInflationGenerator")):
        for key in ("valuesFile", "values"):
            if isinstance(item.get(key), str) and item[key]:
                yield Reference(f"helmCharts.{key}", item[key], False)
        for value in _strings(item.get("additionalValuesFiles")):
            yield Reference("helmCharts.additionalValuesFiles", value, False)
    yield from _catch_all(document)


def _inline_config(name: str, text: str) -> Iterator[Reference]:
    try:
        config = load_data(text, name)
    except DocumentProblem:
        return
    for key, value in _walk(config, skip=_DATA_KEYS):
        if key in _INLINE_PATH_KEYS or _URL.match(value.strip()):
            yield Reference(f"{name} (inline).{key}", value, False)


def _catch_all(document: dict) -> Iterator[Reference]:
    """A URL in any field that is not plain data: kustomize may fetch it (fields added after kubehop)."""
    known = set(_FOLDER_OR_FILE + _FOLDERS + _FILES + _PATCH_LISTS + _GENERATORS) | {"patchesStrategicMerge"}
    for name, value in document.items():
        if name in _DATA_FIELDS or name in known:
            continue
        for key, text in _walk(value, str(name)):
            if _URL.match(text.strip()):
                yield Reference(key, text, False)


def _walk(value: Any, key: str = "", skip: frozenset[str] = frozenset(), depth: int = 0) -> Iterator[tuple[str, str]]:
    """(key, string) for every string in plain data, `skip` keys left out; aliases bounded by depth."""
    if depth > 64:
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if str(k) not in skip:
                yield from _walk(v, str(k), skip, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key, skip, depth + 1)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _maps(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# --- Through bases and components -----------------------------------------------------------------

def closure(folder: str, root: str) -> Closure:
    """The kustomization at `folder` and every local one it reaches; remote references and local ones that
    leave `root` (a real path)."""
    found = Closure()
    seen: set[str] = set()
    stack = [folder]
    while stack:
        current = stack.pop()
        real = os.path.realpath(current)
        if real in seen:
            continue
        seen.add(real)
        kustomization = read_kustomization(current)
        if kustomization.problem:
            found.problems.append(current)
            continue
        found.folders.append(current)
        uses = found.children.setdefault(real, [])
        for reference in references(kustomization.document):
            value = reference.value.strip()
            if not value:
                continue
            local, repository = os.path.join(current, value), local_repository(value)
            why = leaves(value, current, root) if repository is None else (
                leaves(repository, "/", root) if os.path.isabs(repository)
                else "names a local repository by a relative path")
            if why and (repository is not None or not is_remote(value)):
                found.outside.append(f"{reference.field} {value} (in {os.path.normpath(kustomization.path)}) {why}")
                continue
            if is_remote(value) or (not os.path.lexists(local) and _looks_like_host(value)):
                found.remote.append(f"{reference.field} {value}")
                continue
            if reference.folder_or_file and os.path.isdir(local) and kustomization_file(local):
                stack.append(os.path.normpath(local))
                uses.append(os.path.realpath(local))
    return found
