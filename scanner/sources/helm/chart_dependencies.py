"""Umbrella charts: the dependencies a Chart.yaml names, and those charts/ does not hold.

helm refuses to render a chart whose dependencies are not in its charts/ folder ("found in
Chart.yaml, but missing in charts/ directory"), which is how umbrella charts are committed: the
dependencies are fetched at deploy time. kubehop renders a throwaway copy instead
(`chart_copies.py`); this module says what is missing, where helm's own local cache already holds
an archive of the pinned version (helm 4's content cache, helm 3's repository cache), and the line
of each pin (findings from a dependency's templates point there: no file of it is in the tree).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import tarfile
import threading
from dataclasses import dataclass
from typing import Any

from scanner import per_scan
from scanner.semver import parse_pin, parse_version
from scanner.model import Origin
from scanner.sources.files.walk import read_file
from scanner.sources.tools.find import remembered
from scanner.nodes import mapping_get, scalar
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents, load_data

_MAX_CACHED_ARCHIVES = 5000  # archives looked into in helm's cache, at most
_MAX_METADATA_BYTES = 1 << 20
_INDEX_LOCK = threading.Lock()
_ENV_LINE = re.compile(r'^(HELM_[A-Z_]+)="(.*)"$')
# Where helm finds the home and cache folders when no HELM_* or XDG_* variable names them.
_HOME_VARIABLES = ("HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP", "TMPDIR")


@dataclass(frozen=True)
class Dependency:
    name: str
    version: str  # as pinned; "" when the entry pins none
    repository: str
    alias: str
    condition: str
    pin: Origin  # the line of the pin in Chart.yaml (requirements.yaml for a Helm 2 chart)

    @property
    def folder(self) -> str:
        """The name helm gives the subchart (its alias, when it has one)."""
        return self.alias or self.name

    def __str__(self) -> str:
        where = f" from {self.repository}" if self.repository else ""
        return f"{self.name} {self.version or '(any version)'}{where}"


def dependencies_file(chart_dir: str) -> str:
    """The file listing the dependencies: Chart.yaml, or requirements.yaml for an apiVersion v1 chart."""
    for name in ("requirements.yaml", "requirements.yml"):
        if os.path.isfile(os.path.join(chart_dir, name)):
            return os.path.join(chart_dir, name)
    return os.path.join(chart_dir, "Chart.yaml")


def declared(chart_dir: str) -> list[Dependency]:
    """The dependencies a chart names, in order; none when the file cannot be read."""
    path = dependencies_file(chart_dir)
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return []
    return list(_declared(path, stamp))


@functools.lru_cache(maxsize=512)
def _declared(path: str, _stamp: int) -> tuple[Dependency, ...]:
    text, problem = read_file(path)
    if problem is not None or text is None:
        return ()
    try:
        nodes, _ = compose_documents(text, path)
    except (DocumentProblem, TemplateSyntax):
        return ()
    entries = mapping_get(nodes[0], "dependencies") if nodes else None
    found = []
    for entry in getattr(entries, "value", None) or []:
        name = scalar(mapping_get(entry, "name"))
        if not name or not isinstance(entry.value, list):
            continue
        version = mapping_get(entry, "version")
        mark = (version if version is not None else entry).start_mark
        found.append(Dependency(name, scalar(version) or "", scalar(mapping_get(entry, "repository")) or "",
                                scalar(mapping_get(entry, "alias")) or "", scalar(mapping_get(entry, "condition")) or "",
                                Origin(path, mark.line + 1, mark.column + 1)))
    return tuple(found)


def missing(chart_dir: str, dependencies: list[Dependency]) -> list[Dependency]:
    """The dependencies charts/ holds no chart of (helm matches them by chart name, not version)."""
    if not dependencies:
        return []
    vendored = _vendored_names(os.path.join(chart_dir, "charts"))
    return [d for d in dependencies if d.name not in vendored]


def _vendored_names(folder: str) -> set[str]:
    names: set[str] = set()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return names
    for entry in entries:
        if entry.is_dir():
            meta = _metadata_text(os.path.join(entry.path, "Chart.yaml"))
            name = _name_version(meta)[0] if meta else None
            names.add(name or entry.name)
        elif entry.name.endswith(".tgz"):
            name = _archive_metadata(entry.path)[0]
            if name:
                names.add(name)
    return names


def switched_off_by_default(chart_dir: str, dependency: Dependency) -> bool:
    """Is the dependency's `condition` false in the chart's own values.yaml?"""
    if not dependency.condition:
        return False
    values = read_data(os.path.join(chart_dir, "values.yaml"))
    for condition in dependency.condition.split(","):  # helm takes the first path that resolves
        value: Any = values
        for part in condition.strip().split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, bool):
            return not value
    return False


# --- helm's local cache ---------------------------------------------------------------------------

def cached_archive(dependency: Dependency, helm: str) -> str | None:
    """An archive of a version the pin admits, in helm's local cache (the newest such), or None."""
    with _INDEX_LOCK:  # charts are prepared from several threads; helm's cache is looked into once
        candidates = _cache_index(helm).get(dependency.name, [])
    if not candidates:
        return None
    wanted = dependency.version.strip()
    exact = [path for version, path in candidates if version.lstrip("vV") == wanted.lstrip("vV")]
    if exact:
        return exact[0]
    intervals = parse_pin(wanted) if wanted else None
    admitted = []
    for version, path in candidates:
        parsed = parse_version(version)
        if intervals and parsed is not None and parsed.precision == 3 and \
                any(i.low <= parsed.floor < i.high for i in intervals):
            admitted.append((parsed.floor, path))
    return max(admitted)[1] if admitted else None


@per_scan.cache()
def _cache_index(helm: str) -> dict[str, list[tuple[str, str]]]:
    """Chart name -> [(version, archive)] of what helm has downloaded before."""
    index: dict[str, list[tuple[str, str]]] = {}
    seen = 0
    for folder, pattern in _cache_folders(helm):
        for path in _archives(folder, pattern):
            seen += 1
            if seen > _MAX_CACHED_ARCHIVES:
                return index
            name, version = _archive_metadata(path)
            if name and version:
                index.setdefault(name, []).append((version, path))
    return index


def _cache_folders(helm: str) -> list[tuple[str, str]]:
    """helm 4 keeps downloaded charts by digest in its content cache; helm 3 as name-version.tgz in
    its repository cache. The folders come from `helm env`, which reads them from the environment
    alone (HELM_*, XDG_*, the home folder): kept per binary and those variables (`find.remembered`)."""
    asked = {name: value for name, value in os.environ.items()
             if name.startswith(("HELM_", "XDG_")) or name in _HOME_VARIABLES}
    answer = remembered(helm, "env " + json.dumps(asked, sort_keys=True), lambda: _ask_cache_folders(helm))
    try:
        settings = json.loads(answer) if answer else {}
    except ValueError:
        settings = {}
    folders = []
    if settings.get("HELM_CONTENT_CACHE"):
        folders.append((settings["HELM_CONTENT_CACHE"], ".chart"))
    if settings.get("HELM_REPOSITORY_CACHE"):
        folders.append((settings["HELM_REPOSITORY_CACHE"], ".tgz"))
    return folders


def _ask_cache_folders(helm: str) -> str | None:
    try:
        done = subprocess.run([helm, "env"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    settings = dict(m.groups() for line in done.stdout.splitlines() if (m := _ENV_LINE.match(line.strip())))
    return json.dumps({name: settings.get(name, "") for name in ("HELM_CONTENT_CACHE", "HELM_REPOSITORY_CACHE")})


def _archives(folder: str, suffix: str) -> list[str]:
    found = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        found.extend(os.path.join(top, name) for name in sorted(files) if name.endswith(suffix))
    return found


def _archive_metadata(path: str) -> tuple[str | None, str | None]:
    """(name, version) from the Chart.yaml at the top of a chart archive."""
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                parts = member.name.strip("/").split("/")
                if len(parts) == 2 and parts[1] == "Chart.yaml" and member.isfile() \
                        and member.size <= _MAX_METADATA_BYTES:
                    handle = archive.extractfile(member)
                    return _name_version(handle.read().decode("utf-8", "replace")) if handle else (None, None)
    except (OSError, EOFError, tarfile.TarError, ValueError):
        pass
    return None, None


def _metadata_text(path: str) -> str | None:
    text, problem = read_file(path)
    return text if problem is None else None


def read_data(path: str) -> Any:
    """A chart's own YAML file (values.yaml, Chart.yaml) as plain data, read with the guards every file
    of the tree gets (only a regular file, no alias bomb, no bad timestamp escaping); None if it cannot be."""
    text, problem = read_file(path)
    if problem is not None or text is None:
        return None
    try:
        return load_data(text, path)
    except DocumentProblem:
        return None


def _name_version(text: str) -> tuple[str | None, str | None]:
    try:
        meta = load_data(text, "Chart.yaml")
    except DocumentProblem:
        return None, None
    if not isinstance(meta, dict):
        return None, None
    name, version = meta.get("name"), meta.get("version")
    return (str(name) if name else None), (str(version) if version is not None else None)


def pin_of(chart_dir: str, subchart: str) -> Dependency | None:
    """The dependency entry helm rendered as `charts/<subchart>` (by alias or name)."""
    return next((d for d in declared(chart_dir) if d.folder == subchart), None)


def local_chart(chart_dir: str, dependency: Dependency) -> str | None:
    """The folder a `file://` dependency names, relative to the chart; None for any other repository."""
    if not dependency.repository.startswith("file://"):
        return None
    return os.path.normpath(os.path.join(chart_dir, dependency.repository[len("file://"):]))


def file_in_tree(chart_dir: str, parts: list[str]) -> tuple[str | None, Dependency | None]:
    """Where a file helm read as `charts/<dependency>/<rest>` (parts of a path inside the chart) is in the
    tree, when charts/ does not hold it: in the folder of a local (file://) dependency; else
    (a fetched or cached archive) no file, and the dependency whose pin stands for it."""
    if len(parts) < 3 or parts[0] != "charts":
        return None, None
    dependency = pin_of(chart_dir, parts[1])
    if dependency is None:
        return None, None
    local = local_chart(chart_dir, dependency)
    if local is not None:
        path = os.path.join(local, *parts[2:])
        if os.path.isfile(path):
            return path, dependency
    return None, dependency


def dependency_file(chart_dir: str, source: str) -> tuple[str | None, Dependency | None]:
    """For a template helm names `<chart>/charts/<dependency>/...` that charts/ does not hold: its file in
    a local dependency's folder, or the dependency it came from (fetched or from helm's cache)."""
    return file_in_tree(chart_dir, source.split("/")[1:])
