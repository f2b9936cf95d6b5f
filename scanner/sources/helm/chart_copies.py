"""Throwaway copies of charts, so that helm reads neither more nor less than it should.

helm reads a chart folder whole and follows its symbolic links. kubehop hands it (and its own text
reading) the chart as it is, unless:
- it holds symbolic links out of the scanned tree (or things that are not regular files): a copy
  without them, with a notice, so `.Files.Get` or a linked template can never bring outside content
  into a report;
- its Chart.yaml names dependencies charts/ does not hold (an umbrella chart): a copy with them
  added -- fetched by `helm dependency build` with --allow-network, else the archives of the pinned
  versions already in helm's local cache -- and those still missing switched off, each listed as
  not rendered with its pin (`chart_dependencies.py`).
The user's tree is never written to; the copies live as long as the `with` block. A chart is prepared
by the render that needs it (`prepared`, from the render pool's threads: one chart is copied while others
render), once for all its releases.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from typing import Iterable

import yaml

from scanner.containment import git_top, within
from scanner.model import Diagnostic
from scanner.sources.helm import chart_dependencies as deps
from scanner.sources.helm.render import ChartRelease

_TIMEOUT_SECONDS = 300


@dataclasses.dataclass
class Preparation:
    """What preparing the releases found: not-rendered dependencies, notices about left-out links."""

    unrendered: list[Diagnostic] = dataclasses.field(default_factory=list)
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Chart:
    """One chart folder's preparation: done once, waited for by its other releases."""

    found: Preparation = dataclasses.field(default_factory=Preparation)
    folder: str | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)


class ChartCopies:
    """`with ChartCopies(paths, helm, allow_network) as copies:` then `copies.prepared(release)` for each
    release (from any thread) and `copies.collect(releases, found)`; `copies.folder_for` for one chart."""

    def __init__(self, paths: Iterable[str], helm: str | None, allow_network: bool):
        self.roots = [os.path.realpath(p) for p in paths if p != "-" and os.path.isdir(p)]
        self.helm = helm  # None: the charts are read as text, nothing is fetched or looked up
        self.allow_network = allow_network
        self._work: tempfile.TemporaryDirectory | None = None
        self._lock = threading.Lock()
        self._charts: dict[str, _Chart] = {}
        self._copies = 0
        self._fetching = threading.Lock()  # `helm dependency build` one at a time: helm's repository cache is shared

    def __enter__(self) -> "ChartCopies":
        self._work = tempfile.TemporaryDirectory(prefix="kubehop-charts-")
        return self

    def __exit__(self, *exc) -> None:
        self._work.cleanup()

    def prepared(self, release: ChartRelease) -> ChartRelease:
        """The release pointing at the folder helm is to read. Safe from several threads at once: a chart
        is prepared once, by the first of its releases to ask, and the others wait for it."""
        if release.remote is not None:
            return release
        with self._lock:
            chart = self._charts.get(release.chart_dir)
            mine = chart is None
            if mine:
                chart = self._charts[release.chart_dir] = _Chart()
        if mine:
            try:
                chart.folder = self.folder_for(release.chart_dir, chart.found)
            finally:
                chart.done.set()
        else:
            chart.done.wait()
        folder = chart.folder or release.chart_dir  # None: its preparation failed, and says so where it ran
        return release if folder == release.chart_dir else dataclasses.replace(release, render_dir=folder)

    def collect(self, releases: list[ChartRelease], found: Preparation) -> None:
        """What preparing `releases` left out, into `found`, in the order of the releases: as though they
        had been prepared one after another."""
        for chart_dir in dict.fromkeys(r.chart_dir for r in releases if r.remote is None):
            chart = self._charts.get(chart_dir)
            if chart is not None:
                found.unrendered.extend(chart.found.unrendered)
                found.diagnostics.extend(chart.found.diagnostics)

    def folder_for(self, chart_dir: str, found: Preparation) -> str:
        """The chart itself, or a copy of it made to be read instead."""
        files, left_out = _readable_files(chart_dir, self._root_of(chart_dir))
        missing = deps.missing(chart_dir, deps.declared(chart_dir))
        if left_out:
            found.diagnostics.append(_left_out(chart_dir, left_out))
        if not left_out and not missing:
            return chart_dir
        with self._lock:
            self._copies += 1
            number = self._copies - 1
        copy = os.path.join(self._work.name, str(number), os.path.basename(os.path.abspath(chart_dir)) or "chart")
        if left_out or self.allow_network:  # leaving files out; or `helm dependency build` writes in the copy
            _copy(files, copy)
        else:
            _mirror(chart_dir, files, copy)
        if missing:
            self._add_dependencies(chart_dir, copy, missing, found)
        return copy

    def _root_of(self, chart_dir: str) -> str:
        """The scanned tree a chart belongs to: the scanned folder holding it, else (a chart a Flux
        HelmRelease names from outside the scanned paths) its repository, else the chart itself."""
        real = os.path.realpath(chart_dir)
        holding = [r for r in self.roots if within(real, r)]
        if holding:
            return max(holding, key=len)
        return git_top(real) or real

    def _add_dependencies(self, chart_dir: str, copy: str, missing: list[deps.Dependency], found: Preparation) -> None:
        missing = self._add_local(chart_dir, copy, missing, found)
        if not missing:
            return
        if self.helm is None:
            found.unrendered.extend(_not_rendered(chart_dir, d, "is not in charts/; not read (the chart was read "
                                                  "as text)") for d in missing)
            return
        if self.allow_network:
            with self._fetching:
                error = _fetch(self.helm, copy)
            if error is None:
                return
            reason = f"could not be fetched ({error}); not rendered, the chart was rendered without it"
            _switch_off(copy, missing)
            found.unrendered.extend(_not_rendered(chart_dir, d, reason) for d in missing)
            return
        absent = []
        for dependency in missing:
            archive = deps.cached_archive(dependency, self.helm)
            if archive is None:
                absent.append(dependency)
                continue
            charts = os.path.join(copy, "charts")
            os.makedirs(charts, exist_ok=True)
            target = os.path.join(charts, f"{dependency.name}-from-helm-cache.tgz")
            if os.path.lexists(target):  # copied from the chart's own charts/: replaced, never written through
                os.remove(target)
            shutil.copyfile(archive, target)
        _switch_off(copy, absent)
        found.unrendered.extend(_not_rendered(
            chart_dir, d, "is neither in charts/ nor in helm's local cache: not rendered (--allow-network fetches "
                          "it into a throwaway copy); the chart was rendered without it") for d in absent)


    def _add_local(self, chart_dir: str, copy: str, missing: list[deps.Dependency], found: Preparation) -> list:
        """Dependencies on a chart folder of the tree (`repository: file://../common`) are copied in
        (helm would resolve the path from the copy); the others are returned."""
        root = self._root_of(chart_dir)
        remote = []
        for dependency in missing:
            source = deps.local_chart(chart_dir, dependency)
            if source is None:
                remote.append(dependency)
            elif not within(os.path.realpath(source), root) or not os.path.isfile(os.path.join(source, "Chart.yaml")):
                found.unrendered.append(_not_rendered(chart_dir, dependency, "is not a chart folder in the scanned "
                                                      "tree: not read; the chart was rendered without it"))
                _switch_off(copy, [dependency])
            else:
                files, left_out = _readable_files(source, root)
                _copy(files, os.path.join(copy, "charts", dependency.name))
                if left_out:
                    found.diagnostics.append(_left_out(source, left_out))
        return remote


def _copy(files: list[tuple[str, str]], folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    for relative, real in files:
        target = os.path.join(folder, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(real, target)


# What a copy's own files are, never links: the files the dependencies are edited in, and charts/, where they
# are added.
_EDITED = frozenset({"Chart.yaml", "requirements.yaml", "requirements.yml", "Chart.lock", "requirements.lock"})


def _mirror(chart_dir: str, files: list[tuple[str, str]], copy: str) -> None:
    """A copy of a chart that leaves nothing out, for dependencies to be added or switched off: links to the
    chart's own top-level entries, which helm follows (and so do kubehop's readers of a copy, where the
    chart itself is read as it is), but for the dependency and lock files and charts/, copied. A new
    file costs more than its bytes: a handful of links instead of every file of the chart."""
    os.makedirs(copy)
    top = os.path.realpath(chart_dir)
    for entry in sorted(os.scandir(top), key=lambda e: e.name):
        if entry.name not in _EDITED and entry.name != "charts":
            os.symlink(os.path.join(top, entry.name), os.path.join(copy, entry.name))
    _copy([(relative, real) for relative, real in files if relative.split(os.sep, 1)[0] in _EDITED | {"charts"}], copy)


def file_in_tree(chart_dir: str, copy: str, path: str) -> str | None:
    """The file of the tree a file of a chart's copy stands for (one in a local dependency's folder
    for its charts/ entry); None when it has none (a dependency fetched or taken from helm's cache)."""
    relative = os.path.relpath(path, copy)
    mirrored = os.path.join(chart_dir, relative)
    if os.path.lexists(mirrored):
        return mirrored
    return deps.file_in_tree(chart_dir, relative.split(os.sep))[0]


def _left_out(chart_dir: str, left_out: list[str]) -> Diagnostic:
    shown = ", ".join(sorted(left_out)[:5]) + (", ..." if len(left_out) > 5 else "")
    return Diagnostic(chart_dir, f"{len(left_out)} file(s) of the chart left unread, by helm and by kubehop: {shown} "
                                 "(symbolic links out of the scanned tree, or not regular files)", level="notice")


def _not_rendered(chart_dir: str, dependency: deps.Dependency, why: str) -> Diagnostic:
    off = (f" (its condition {dependency.condition} is off in the chart's values)"
           if deps.switched_off_by_default(chart_dir, dependency) else "")
    return Diagnostic(dependency.pin.path, f"dependency {dependency} {why}{off}", dependency.pin.line, level="notice")


def _readable_files(chart_dir: str, root: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(path in the chart, real file) of every regular file helm would read, following links that stay
    in `root`; and the paths left out: links out of `root`, broken links, loops, FIFOs and the like."""
    files: list[tuple[str, str]] = []
    left_out: list[str] = []
    stack = [("", os.path.realpath(chart_dir))]
    visited: set[str] = set()
    while stack:
        relative, folder = stack.pop()
        if folder in visited:
            left_out.append(relative)  # a link back to a folder already read: helm would loop
            continue
        visited.add(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            left_out.append(relative or ".")
            continue
        for entry in entries:
            path = os.path.join(relative, entry.name)
            real = entry.path
            if entry.is_symlink():
                try:
                    real = os.path.realpath(entry.path, strict=True)
                except OSError:
                    left_out.append(path)
                    continue
                if not within(real, root):
                    left_out.append(path)
                    continue
            if os.path.isdir(real):
                stack.append((path, real))
            elif _regular(real):
                files.append((path, real))
            else:
                left_out.append(path)
    return files, left_out


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _switch_off(copy: str, dependencies: list[deps.Dependency]) -> None:
    """Drop `dependencies` from the copy's dependency list, so helm renders the chart without them."""
    if not dependencies:
        return
    names = {d.name for d in dependencies}
    path = deps.dependencies_file(copy)
    if os.path.islink(path):  # a copy's dependency file is its own (_EDITED); never written through a link
        return
    document = deps.read_data(path)
    try:
        document["dependencies"] = [d for d in document.get("dependencies") or []
                                    if not (isinstance(d, dict) and d.get("name") in names)]
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(document, handle, sort_keys=False)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, TypeError):
        pass  # helm then says what is missing, and the chart is read as text
    lock = os.path.join(copy, "Chart.lock" if path.endswith("Chart.yaml") else "requirements.lock")
    if os.path.exists(lock):
        os.remove(lock)


def _fetch(helm: str, copy: str) -> str | None:
    """`helm dependency build` in the copy (the lock file's versions), else `update`; helm's error, or None."""
    error = None
    for verb in ("build", "update"):
        try:
            done = subprocess.run([helm, "dependency", verb, "--", copy], capture_output=True, text=True,
                                  timeout=_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL,
                                  env={k: v for k, v in os.environ.items() if not k.startswith("KUBE")})
        except subprocess.TimeoutExpired:
            return f"helm dependency {verb} did not finish within {_TIMEOUT_SECONDS} s"
        except OSError as err:
            return f"cannot run helm: {err}"
        if done.returncode == 0:
            return None
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        error = (lines[-1] if lines else "helm failed without a message").removeprefix("Error:").strip()
    return error
