"""Where the chart of a Kustomize `helmCharts` entry is, and the values kustomize would give helm.

As kustomize's HelmChartInflationGenerator finds them: the chart in `helmGlobals.chartHome` (default
`charts/`, and `<name>-<version>/` below it when the entry names a repo and a version), else in
helm's local repository cache (a `.tgz`, or an unpacked folder), else in the remote repository,
downloaded by `helm pull` into a throwaway folder with --allow-network only. Values: `valuesFile`
(default: the chart's own values.yaml), merged with `valuesInline` as `valuesMerge` says (override,
merge or replace, with kyaml's merge rules), then each `additionalValuesFiles`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from typing import Any

import yaml

from scanner.containment import inside
from scanner.paths import repo_path
from scanner.sources.files.walk import read_file
from scanner.sources.helm.render import release_problem
from scanner.nodes import construct
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

_MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
_PULL_TIMEOUT_SECONDS = 300
_MERGE_MODES = ("override", "merge", "replace")
# A chart's name as kustomize joins it to chartHome and helm pulls it: one path segment, never an option.
_CHART_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class ChartEntry:
    """One `helmCharts` item of one kustomization, as read from it."""

    kustomization: str  # the kustomization file, as displayed
    folder: str  # its folder, as displayed
    index: int
    spec: dict
    globals: dict

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def version(self) -> str:
        return str(self.spec.get("version") or "")

    @property
    def repo(self) -> str:
        return str(self.spec.get("repo") or "")

    @property
    def release(self) -> str:
        return str(self.spec.get("releaseName") or self.name)

    @property
    def namespace(self) -> str:
        return str(self.spec.get("namespace") or "default")

    @property
    def title(self) -> str:
        """How a problem at the kustomization file names the entry."""
        version = f" {self.version}" if self.version else ""
        return f"helmCharts entry {self.index + 1} (chart {self.name}{version})"

    @property
    def label(self) -> str:
        """How an object's `via` names it."""
        return f"helmCharts entry {self.index + 1} of {repo_path(self.kustomization)}"

    def chart_home(self) -> str:
        home = str(self.globals.get("chartHome") or "charts")
        home = home if os.path.isabs(home) else os.path.normpath(os.path.join(self.folder, home))
        if self.version and self.repo:
            return os.path.join(home, f"{self.name}-{self.version}")
        return home


@dataclass
class LocatedChart:
    chart_dir: str | None = None  # a folder helm can render
    in_tree: bool = False  # the chart's files are the user's (findings point at its templates)
    not_rendered: str | None = None  # why it is not rendered (not the user's to fix)
    problem: str | None = None  # why it cannot be rendered (the user's input is wrong)


def entries_of(folder: str, kustomization: str, document: dict) -> list[ChartEntry]:
    globals_ = document.get("helmGlobals") if isinstance(document.get("helmGlobals"), dict) else {}
    charts = document.get("helmCharts") if isinstance(document.get("helmCharts"), list) else []
    return [ChartEntry(kustomization, folder, i, spec, globals_) for i, spec in enumerate(charts)
            if isinstance(spec, dict)]


def locate(entry: ChartEntry, root: str, scratch: str, helm: str | None, allow_network: bool) -> LocatedChart:
    if not entry.name:
        return LocatedChart(problem="chart name cannot be empty")
    if not _CHART_NAME.fullmatch(entry.name):  # it becomes a folder name and a helm argument
        return LocatedChart(problem=f"chart name {entry.name!r} is not a chart name (letters, digits, '-', '_' "
                                    "and '.', not starting with '-' or '.')")
    refused = release_problem(entry.release, entry.namespace)
    if refused:
        return LocatedChart(problem=refused)
    local = os.path.join(entry.chart_home(), entry.name)
    if os.path.isfile(os.path.join(local, "Chart.yaml")):
        if not inside(local, root):
            return LocatedChart(not_rendered=f"chart folder {local} is outside the repository; not read")
        return LocatedChart(local, in_tree=True)
    cached = _in_helm_cache(entry, scratch)
    if cached:
        return LocatedChart(cached)
    if not entry.repo:
        return LocatedChart(problem=f"no chart found at {local}, and no repo to pull it from")
    if not allow_network:
        return LocatedChart(not_rendered=f"chart {entry.name} {entry.version or '(latest)'} is only in remote "
                                         f"repository {entry.repo}; not downloaded without --allow-network")
    if helm is None:
        return LocatedChart(not_rendered="helm was not found to download the chart")
    return _pull(entry, helm, scratch)


def local_charts(folders: list[str]) -> set[str]:
    """Real paths of the chart folders in chartHome that these kustomizations' helmCharts name."""
    from scanner.sources.kustomize.refs import read_kustomization

    found = set()
    for folder in folders:
        kustomization = read_kustomization(folder)
        for entry in entries_of(folder, kustomization.path or folder, kustomization.document):
            chart = os.path.join(entry.chart_home(), entry.name)
            if entry.name and os.path.isfile(os.path.join(chart, "Chart.yaml")):
                found.add(os.path.realpath(chart))
    return found


def helm_cache_dir() -> str:
    explicit = os.environ.get("HELM_REPOSITORY_CACHE")
    if explicit:
        return explicit
    if os.environ.get("HELM_CACHE_HOME"):
        return os.path.join(os.environ["HELM_CACHE_HOME"], "repository")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/helm/repository")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "helm", "repository")


def _in_helm_cache(entry: ChartEntry, scratch: str) -> str | None:
    """A chart of exactly this version in helm's local repository cache (only a pinned version is matched)."""
    if not entry.version:
        return None
    cache = helm_cache_dir()
    for version in dict.fromkeys([entry.version, entry.version.removeprefix("v")]):
        stem = os.path.join(cache, f"{entry.name}-{version}")
        for unpacked in (os.path.join(stem, entry.name), stem):
            if os.path.isfile(os.path.join(unpacked, "Chart.yaml")):
                return unpacked
        if os.path.isfile(stem + ".tgz"):
            return _unpack(stem + ".tgz", entry.name, scratch)
    return None


def _unpack(archive: str, name: str, scratch: str) -> str | None:
    """A chart archive unpacked into `scratch`: regular files and folders only, nothing outside it."""
    target = tempfile.mkdtemp(prefix="chart-", dir=scratch)
    total = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                parts = member.name.replace("\\", "/").split("/")
                if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
                    continue
                total += member.size
                if total > _MAX_ARCHIVE_BYTES:
                    return None
                path = os.path.join(target, *parts)
                if member.isdir():
                    os.makedirs(path, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with tar.extractfile(member) as source, open(path, "wb") as handle:
                    handle.write(source.read())
    except (OSError, tarfile.TarError, EOFError):
        return None
    chart = os.path.join(target, name)
    return chart if os.path.isfile(os.path.join(chart, "Chart.yaml")) else None


def _pull(entry: ChartEntry, helm: str, scratch: str) -> LocatedChart:
    target = tempfile.mkdtemp(prefix="pull-", dir=scratch)
    oci = entry.repo.startswith("oci://")
    chart = f"{entry.repo.rstrip('/')}/{entry.name}" if oci else entry.name
    command = [helm, "pull", "--untar", f"--untardir={target}", *([] if oci else [f"--repo={entry.repo}"]),
               *([f"--version={entry.version}"] if entry.version else []), "--", chart]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELM_KUBE", "KUBECONFIG"))}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PULL_TIMEOUT_SECONDS,
                              stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.SubprocessError) as err:
        return LocatedChart(not_rendered=f"helm pull failed: {err}")
    chart_dir = os.path.join(target, entry.name)
    if done.returncode != 0 or not os.path.isfile(os.path.join(chart_dir, "Chart.yaml")):
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        return LocatedChart(not_rendered=f"helm pull failed: {lines[-1] if lines else 'no chart'}")
    return LocatedChart(chart_dir)


# --- Values ---------------------------------------------------------------------------------------

def values_of(entry: ChartEntry, chart: LocatedChart, root: str) -> tuple[tuple[str, ...], str | None]:
    """The values texts helm gets, in order, or why kustomize would refuse them."""
    spec = entry.spec
    mode = str(spec.get("valuesMerge") or "override")
    if mode not in _MERGE_MODES:
        return (), f"valuesMerge must be one of {list(_MERGE_MODES)}, not {mode!r}"
    named = spec.get("valuesFile")
    values_file = os.path.join(entry.folder, str(named)) if named else os.path.join(chart.chart_dir, "values.yaml")
    inline = spec.get("valuesInline") if isinstance(spec.get("valuesInline"), dict) else {}
    texts: list[str] = []
    if inline and mode == "replace":
        texts.append(yaml.safe_dump(inline))
    else:
        # The chart's own values.yaml is read where the chart is (checked already, or a throwaway copy).
        text, problem = _values_file(values_file, root if named or chart.in_tree else None, required=bool(named))
        if problem:
            return (), problem
        if inline:
            base = _mapping(text or "")
            merged = merge(inline, base) if mode == "override" else merge(base, inline)
            texts.append(yaml.safe_dump(merged))
        elif text:
            texts.append(text)
    for extra in spec.get("additionalValuesFiles") or []:
        text, problem = _values_file(os.path.join(entry.folder, str(extra)), root, required=True)
        if problem:
            return (), f"could not load additionalValuesFile: {problem}"
        texts.append(text or "")
    return tuple(texts), None


def _values_file(path: str, root: str | None, required: bool) -> tuple[str | None, str | None]:
    if root is not None and not inside(path, root):
        return None, f"values file {path} is outside the repository; not read"
    if not os.path.exists(path) and not required:
        return None, None  # a chart without values.yaml: helm's defaults are nothing
    text, problem = read_file(path)
    if problem is not None and problem.level != "notice":
        return None, f"values file {path}: {problem.message}"
    return text or "", None


def _mapping(text: str) -> dict:
    try:
        nodes, _ = compose_documents(text, "values")
    except (DocumentProblem, TemplateSyntax):
        return {}
    value = construct(nodes[0]) if nodes else {}
    return value if isinstance(value, dict) else {}


def merge(src: Any, dest: Any) -> Any:
    """kyaml's merge2.Merge(src, dest) for values (no schema): maps merge key by key, src wins for
    scalars and lists, a null in src removes the key, `$patch: replace|delete` are honoured."""
    if not isinstance(src, dict) or not isinstance(dest, dict):
        return src
    directive = src.get("$patch")
    if directive == "replace":
        return {k: v for k, v in src.items() if k != "$patch"}
    merged = dict(dest)
    for key, value in src.items():
        if key == "$patch":
            continue
        if value is None or (isinstance(value, dict) and value.get("$patch") == "delete"):
            merged.pop(key, None)
        elif key in dest:
            merged[key] = merge(value, dest[key])
        else:
            merged[key] = value
    return merged
