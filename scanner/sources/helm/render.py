"""Helm charts rendered by the real helm as a cluster of the target minor would get them.

Exact Capabilities: helm is pointed (through a generated kubeconfig) at a loopback discovery
endpoint that serves what the target minor serves (`discovery.py`), and runs in server dry-run
mode, so `.Capabilities.APIVersions` and `.Capabilities.KubeVersion` are the target's. The
rendered stream is taken by a post-renderer (`capture.py`: a plugin for helm 4, an executable
for helm 3) before helm would map its objects to served resources. A render is cached
(`tools/render_cache.py`), bounded in time, memory and output (`tools/render_limits.py`), and several run at once.
Without --allow-network, a chart whose values.schema.json files refer out of the chart renders with
helm's schema check off (`chart_schemas.py`), and helm runs where it can reach nothing but kubehop's
discovery (`tools/sandbox.py`; else with closed proxies, `tools/no_network.py`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from scanner.model import Origin
from scanner.sources.helm import chart_schemas
from scanner.sources.tools import no_network, render_cache, sandbox
from scanner.sources.helm.discovery import FakeDiscovery
from scanner.sources.files.walk import read_yaml_file
from scanner.sources.helm.capture import Capture
from scanner.sources.tools.render_limits import RenderLimits, go_runtime, pool_size, run_bounded
from scanner.sources.helm.template_branches import Capabilities
from scanner.sources.tools.find import tool_version
from scanner.versions import Minor

FILENAME_ANNOTATION = "postrenderer.helm.sh/postrender-filename"
# helm keeps discovery on disk between runs and rewrites it each time it asks again; kubehop's
# discovery lives for one scan, so a path that cannot be created keeps it in memory (half the CPU).
_NO_DISK_CACHE = os.path.join(os.devnull, "kube-cache")
# What helm itself accepts as a release name (and what a Kubernetes namespace may be): checked before
# helm is run, so that a name from the tree is never anything but a name to it.
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_RELEASE_NAME_MAX = 53
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NAMESPACE_MAX = 63
SKIP_SCHEMA = (3, 16)  # the first helm with --skip-schema-validation
# Failures that say nothing about the chart (kubehop's discovery could not be reached in time): not kept.
_TRANSIENT = re.compile(r"127\.0\.0\.1|connection|timeout|deadline|i/o", re.IGNORECASE)


@dataclass(frozen=True)
class RemoteChart:
    """A chart helm downloads (only with --allow-network): from a repository or an OCI registry."""

    chart: str  # a chart name in `repo`, or an oci:// reference
    repo: str | None
    version: str | None
    requested_at: Origin  # the object asking for it (a Flux HelmRelease): findings point there

    def helm_options(self) -> list[str]:
        """`--repo` and `--version`, each in one word: a value from the tree is never an option of its own."""
        return [*([f"--repo={self.repo}"] if self.repo else []), *([f"--version={self.version}"] if self.version else [])]

    def __str__(self) -> str:
        where = f" from {self.repo}" if self.repo else ""
        return f"{self.chart} {self.version or '(latest)'}{where}"


@dataclass(frozen=True)
class ChartRelease:
    """One chart to render, and as which release."""

    chart_dir: str  # as displayed: the scanned path joined with the chart's folder ("" for a remote chart)
    release: str
    namespace: str = "default"
    values: tuple[str, ...] = ()  # YAML texts applied last, in order (a Flux HelmRelease's values)
    via: str = ""  # how reports name it, e.g. "helm release web of chart web 3.0.0"
    remote: RemoteChart | None = None
    # The folder helm reads when it is not chart_dir: a throwaway copy (chart_copies.py).
    render_dir: str = ""

    @property
    def folder(self) -> str:
        return self.render_dir or self.chart_dir

    @property
    def where(self) -> str:
        """The path reports name for the release as a whole (its problems, not its objects)."""
        return self.remote.requested_at.path if self.remote else self.chart_dir


@dataclass
class RenderOutcome:
    release: ChartRelease
    text: str | None = None  # the rendered stream, annotated with template file names
    error: str | None = None
    cached: bool = False
    over_limit: bool = False  # stopped at one of its bounds (tools/render_limits.py), not helm's verdict on the chart
    notices: tuple[str, ...] = ()  # what kubehop changed in the render, e.g. the schema check switched off


@dataclass
class HelmSettings:
    helm: str
    target: Minor
    served: frozenset[tuple[str, str]]
    values_files: tuple[str, ...] = ()
    limits: RenderLimits = field(default_factory=RenderLimits)
    workers: int = 0  # renders at once; 0: as many as the cores and the free memory allow
    builtin: frozenset[str] = frozenset()  # the built-in group/versions of any minor (ServedApis.group_versions)
    # Else helm runs guarded (tools/sandbox.py) and follows no schema reference out of the chart.
    allow_network: bool = False

    @property
    def capabilities(self) -> Capabilities:
        """What the chart's templates see as `.Capabilities`, for reading them as text alike."""
        return Capabilities(self.target, self.served, self.builtin)


def release_problem(release: str, namespace: str) -> str | None:
    """Why helm would refuse this release name or namespace (and kubehop does not run it), or None."""
    if len(release) > _RELEASE_NAME_MAX or not _RELEASE_NAME.fullmatch(release):
        return (f"release name {release!r} is not one helm accepts (lower-case letters, digits, '-' and '.', "
                f"at most {_RELEASE_NAME_MAX} characters); not rendered")
    if len(namespace) > _NAMESPACE_MAX or not _NAMESPACE.fullmatch(namespace):
        return (f"namespace {namespace!r} is not a Kubernetes namespace name (lower-case letters, digits and '-', "
                f"at most {_NAMESPACE_MAX} characters); not rendered")
    return None


def chart_metadata(chart_dir: str) -> tuple[str, str]:
    """(name, version) from Chart.yaml; the folder name when it cannot be read."""
    meta, _ = read_yaml_file(os.path.join(chart_dir, "Chart.yaml"))  # helm reports what is wrong with it
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("name") or os.path.basename(os.path.abspath(chart_dir))), str(meta.get("version") or "")


def render_all(releases: list[ChartRelease], settings: HelmSettings, progress=None) -> list[RenderOutcome]:
    """Render every release, several at once; `progress(done, total)` after each."""
    return list(render_each(releases, settings, progress))


def render_each(releases: list[ChartRelease], settings: HelmSettings, progress=None,
                prepare: Callable[[ChartRelease], ChartRelease] | None = None) -> Iterator[RenderOutcome]:
    """The outcomes in the order of `releases`, each as soon as it and those before it are done, so
    that the caller reads one while helm renders the next ones. `prepare` (a chart's copy to render
    instead: chart_copies.py) runs in the render's own worker, so one chart is copied while others render."""
    if not releases:
        return
    guard = None if settings.allow_network else _namespace_listener()
    helper, listener = guard or (None, None)
    with FakeDiscovery(settings.target, settings.served, listener) as kubeconfig, \
            tempfile.TemporaryDirectory(prefix="kubehop-helm-") as work:
        capture = Capture(settings.helm, work)
        with ThreadPoolExecutor(max_workers=settings.workers or pool_size(settings.limits)) as pool:
            jobs = pool.map(lambda r: _render(prepare(r) if prepare else r, settings, kubeconfig, capture, work,
                                              helper), releases)
            for done, outcome in enumerate(jobs, 1):
                if progress:
                    progress(done, len(releases))
                yield outcome


def isolation(settings: HelmSettings) -> str:
    """How helm is kept from the network in these renders, as reports say it."""
    return "none (--allow-network)" if settings.allow_network else sandbox.isolation()


def _namespace_listener():
    """(the helper in its network namespace, a socket listening there for discovery), or None."""
    helper = sandbox.namespace()
    if helper is None:
        return None
    try:
        return helper, helper.listener()
    except OSError:
        return None


def _render(release: ChartRelease, settings: HelmSettings, kubeconfig: str, capture: Capture,
            work: str, helper) -> RenderOutcome:
    refused = release_problem(release.release, release.namespace)
    if refused:  # the sources refuse these first; this is the last word before an argv is built
        return RenderOutcome(release, error=refused)
    skip_schema, notices, not_followed = _schema_check(release, settings, capture)
    if not_followed:
        return RenderOutcome(release, error=not_followed)
    # A remote chart's version range may resolve to a newer chart tomorrow: never cached.
    key = _cache_key(release, settings, skip_schema) if release.remote is None else None
    cached = render_cache.load(key) if key else None
    if cached is not None:
        return RenderOutcome(release, text=cached, cached=True, notices=notices)
    failed = render_cache.load_failure(key) if key else None
    if failed is not None:
        return RenderOutcome(release, error=failed, cached=True, notices=notices)
    scratch = _scratch(work)
    stream, stdout, stderr = (os.path.join(scratch, name) for name in ("rendered.yaml", "stdout", "stderr"))
    open(stream, "wb").close()  # emptied: a chart whose templates emit nothing never calls the post-renderer
    env = {**_clean_env(), "KUBECONFIG": kubeconfig, "KUBECACHEDIR": _NO_DISK_CACHE, **capture.environment(stream)}
    if not settings.allow_network:
        env = no_network.environment(env)
    env = go_runtime(env, settings.limits)
    options = [*capture.arguments(), *(["--skip-schema-validation"] if skip_schema else [])]
    command = _helm_command(release, settings, kubeconfig, scratch, options)
    done = run_bounded(command, env, settings.limits, stdout, stderr, written=(stream,), helper=helper)
    if done.problem:
        return RenderOutcome(release, error=f"helm {done.problem}", over_limit=True, notices=notices)
    if done.returncode != 0:
        error = _helm_message(done.stderr)
        if key and done.returncode > 0 and not _TRANSIENT.search(error):  # helm's verdict on these inputs
            render_cache.store_failure(key, error)
        return RenderOutcome(release, error=error, notices=notices)
    text = capture.stream(stream, stdout) or ""
    if key:
        render_cache.store(key, text)
    return RenderOutcome(release, text=text, notices=notices)


_SCRATCH = threading.local()


def _scratch(work: str) -> str:
    """This worker thread's own folder in `work` for the files of its renders, one render after another:
    its files are emptied and written again rather than made anew (a file's creation and removal cost
    more than its bytes)."""
    folders = getattr(_SCRATCH, "folders", None)
    if folders is None:
        folders = _SCRATCH.folders = {}
    if work not in folders:
        folders[work] = tempfile.mkdtemp(dir=work)
    return folders[work]


def _schema_check(release: ChartRelease, settings: HelmSettings, capture: Capture
                  ) -> tuple[bool, tuple[str, ...], str | None]:
    """(render with the schema check off, the notice saying so, why not to render at all): references
    out of the chart's schemas that this render may not follow (`chart_schemas.py`). A remote chart is
    downloaded by helm itself (only with --allow-network) and cannot be looked at first."""
    if release.remote is not None:
        return False, (), None
    found = chart_schemas.refused(chart_schemas.remote_references(release.folder, release.chart_dir),
                                  settings.allow_network)
    if not found:
        return False, (), None
    why = chart_schemas.explain(found)
    number = capture.version.number
    if number is not None and number < SKIP_SCHEMA:
        return False, (), (f"{why}, and helm {capture.version.text} cannot be told not to (--skip-schema-validation "
                           f"is helm {SKIP_SCHEMA[0]}.{SKIP_SCHEMA[1]} and later)")
    return True, (f"{why}; rendered without its schema check (--skip-schema-validation)",), None


def _helm_command(release: ChartRelease, settings: HelmSettings, kubeconfig: str, scratch: str,
                  options: list[str]) -> list[str]:
    """Every option in `--name=value` form, then `--`, then the release and the chart: nothing from the
    tree (a name, a path, a repository URL) can be read by helm as an option."""
    command = [settings.helm, "template", f"--namespace={release.namespace}", f"--kubeconfig={kubeconfig}",
               "--disable-openapi-validation", *options]
    if release.remote:
        command += release.remote.helm_options()
    for values_file in settings.values_files:
        command.append(f"--values={values_file}")
    for number, values in enumerate(release.values):
        inline = os.path.join(scratch, f"values-{number}.yaml")
        with open(inline, "w", encoding="utf-8") as handle:
            handle.write(values)
        command.append(f"--values={inline}")
    chart = release.remote.chart if release.remote else release.folder
    return [*command, "--", release.release, chart]


def _cache_key(release: ChartRelease, settings: HelmSettings, skip_schema: bool) -> str:
    values = [_file_text(path) for path in settings.values_files]
    digest = render_cache.folder_digest(release.folder, follow_links=bool(release.render_dir))  # a copy: its links
    return render_cache.cache_key(
        "helm-render-1", tool_version(settings.helm), digest, release.release, release.namespace, *release.values,
        *values, str(settings.target), json.dumps(sorted(settings.served)), *(["skip-schema"] if skip_schema else []))


def _file_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as err:
        return f"unreadable: {err}"


def _clean_env() -> dict[str, str]:
    """The user's environment without what could point helm at a real cluster."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("HELM_KUBE", "KUBECONFIG")) and k not in ("HELM_NAMESPACE", "HELM_DRIVER")}


def _helm_message(stderr: str) -> str:
    """helm's error on one line: from its `Error:` line on, without the hint about --debug."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Error:")), max(len(lines) - 1, 0))
    kept = [line for line in lines[start:] if not line.startswith("Use --debug")]
    return " ".join(kept).removeprefix("Error:").strip() or "helm failed without a message"


def describe_chart(chart_dir: str) -> str:
    return _chart_label(*chart_metadata(chart_dir))


def _chart_label(name: str, version: str) -> str:
    return f"chart {name} {version}".rstrip()


def progress_printer(stream=sys.stderr):
    """Progress on a terminal only: nothing when stderr is a pipe or a CI log."""
    if not stream.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        stream.write(f"\rkubehop: rendered {done}/{total} charts{end}")
        stream.flush()

    return show


def releases_for(chart_dirs: Iterable[str]) -> list[ChartRelease]:
    """Each chart folder rendered once with its own values, as a release named after the chart."""
    releases = []
    for chart_dir in chart_dirs:
        name, version = chart_metadata(chart_dir)
        release = _release_name(name)
        via = f"helm release {release} of {_chart_label(name, version)}"
        releases.append(ChartRelease(chart_dir, release, via=via))
    return releases


def _release_name(chart_name: str) -> str:
    name = "".join(c if c.isalnum() or c == "-" else "-" for c in chart_name.lower()).strip("-")
    return (name or "release")[:53]
