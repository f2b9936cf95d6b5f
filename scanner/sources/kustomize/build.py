"""Kustomize folders built with `kustomize build` (or `kubectl kustomize`), objects mapped to their files.

The user's kustomization is not edited: a throwaway kustomization next to nothing but itself lists
the folder as its one resource and asks for `buildMetadata: [originAnnotations]`, so every built
object names the file it came from. Before a build, everything the kustomization reaches is read
(`refs.py`): a remote reference is listed as not rendered unless --allow-network is given,
and a local one that leaves the repository stops the build. Without --allow-network kustomize also
runs where it cannot reach the network (`tools/no_network.py`). `helmCharts` are rendered by kubehop
(`helm.py`) and the kustomization is built over what they render, in a throwaway view of
the repository (`mirror.py`). What Flux builds is built as Flux's kustomize-controller builds
it, with no load restrictor, still inside the repository (`flux.py`). A failed build is
reported once per cause, where the cause lies (`errors.py`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import yaml

from scanner.model import Diagnostic, DuplicateKey, Manifest
from scanner.sources.kustomize import mirror as kustomize_mirror
from scanner.sources.kustomize.batches import Batch, batches, failing, halves, split, without
from scanner.sources.tools import no_network
from scanner.sources.kustomize.charts import ChartEntry, entries_of
from scanner.sources.kustomize.errors import Cause, Paths, error_text, file_problem, plugin_of, read_cause
from scanner.sources.kustomize.flux import built_by_flux
from scanner.sources.kustomize.helm import EntryOutcome, HelmCharts
from scanner.sources.kustomize.origins import Origins
from scanner.containment import repository_root
from scanner.sources.kustomize.refs import Closure, closure, kustomization_file, read_kustomization, references
from scanner.sources.yaml.rendered import read_output, reorigin

NO_LOAD_RESTRICTOR = ["--load-restrictor", "LoadRestrictionsNone"]  # as Flux builds (and no plugins: kubehop runs none)
_TIMEOUT_SECONDS = 300
_NETWORK_REFUSED = ("socket: permission denied", "proxyconnect tcp", "protocol 'https' is not allowed",
                    "transport 'https' not allowed", "transport 'ssh' not allowed", "transport 'git' not allowed",
                    "transport 'file' not allowed")
_RENDERED_FILE = "kubehop-helm-charts.yaml"


@dataclass
class BuildOutcome:
    folder: str
    manifests: list[Manifest]
    diagnostics: list[Diagnostic]
    not_built: str | None = None  # why the folder was not built, when it was not
    unrendered: list[Diagnostic] = field(default_factory=list)  # parts of it not rendered (helmCharts entries)
    duplicate_keys: list[DuplicateKey] = field(default_factory=list)  # keys a render writes twice (rendered_duplicates)
    patched: dict[int, list[str]] = field(default_factory=dict)  # objects overlays patched (origins.py)
    cause: tuple[str, str, str] | None = None  # a failed build: (real folder, key, name) of its cause (_once)


@dataclass
class _Plan:
    folder: str
    root: str  # the repository's real path: nothing outside it is read
    unrestricted: bool = False  # built with no load restrictor: Flux builds it (flux.py), or the configuration says so
    reach: Closure | None = None
    decided: BuildOutcome | None = None  # not built, and why
    entries: list[ChartEntry] = field(default_factory=list)  # every helmCharts entry it reaches


def build_all(folders: list[str], command: list[str], allow_network: bool, workers: int,
              charts: HelmCharts | None = None, scanned: list[str] | None = None,
              flux_paths: frozenset[str] = frozenset(), read: list[Manifest] | None = None,
              unrestricted: bool = False) -> list[BuildOutcome]:
    """Build every folder; `flux_paths` are real paths Flux Kustomizations point at, `read` what the scan
    has read already (an object read from its own file is not returned again); `unrestricted`: every
    folder is built with no load restrictor, as the repository's own builds are."""
    charts = charts or HelmCharts(None, "helm is not used")
    origins = Origins(read or [], charts)
    plans = [_plan(folder, scanned or [folder], allow_network) for folder in folders]
    by_flux = built_by_flux(flux_paths, {os.path.realpath(p.folder): p.reach for p in plans if p.reach})
    for plan in plans:
        plan.unrestricted = unrestricted or os.path.realpath(plan.folder) in by_flux
    with tempfile.TemporaryDirectory(prefix="kubehop-kustomize-") as scratch:
        work = {(e.kustomization, e.index): (e, _entry_line(e), p.root) for p in plans for e in p.entries}
        rendered = charts.render(list(work.values()), scratch) if work else {}
        together, alone = batches(plans, lambda plan: plan.decided is None and not plan.entries)
        built: dict[int, BuildOutcome] = {}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            jobs = [pool.submit(_build_together, batch, command, allow_network, origins, rendered, scratch)
                    for batch in together]
            for plan, outcome in zip(alone, pool.map(
                    lambda p: _build(p, command, allow_network, origins, rendered, scratch), alone)):
                built[id(plan)] = outcome
            for batch, job in zip(together, jobs):
                built.update((id(plan), outcome) for plan, outcome in zip(batch.plans, job.result()))
        outcomes = _once([built[id(plan)] for plan in plans])  # in the order of the folders, as built one by one
    outcomes.extend(BuildOutcome(o.entry.folder, o.as_text, o.diagnostics, duplicate_keys=o.duplicate_keys,
                                 unrendered=[Diagnostic(o.entry.kustomization, o.not_rendered, level="notice")]
                                 if o.not_rendered else []) for o in rendered.values())
    return outcomes


def _plan(folder: str, scanned: list[str], allow_network: bool) -> _Plan:
    plan = _Plan(folder, repository_root(folder, scanned))
    kustomization = read_kustomization(folder)
    if kustomization.problem:
        plan.decided = _unreadable(folder, folder, _paths(plan), kustomization.problem)
        return plan
    if kustomization.document.get("kind") == "Component":
        plan.decided = BuildOutcome(folder, [], [])  # built only as part of the kustomizations that use it
        return plan
    plan.reach = reach = closure(folder, plan.root)
    if reach.problems:
        broken = reach.problems[0]
        plan.decided = _unreadable(folder, broken, _paths(plan), read_kustomization(broken).problem or "")
    elif reach.outside:
        plan.decided = _failed(folder, f"refers to {reach.outside[0]}; not built (kubehop reads nothing outside "
                                       "the repository)")
    elif reach.remote and not allow_network:
        plan.decided = BuildOutcome(folder, [], [], f"uses remote {reach.remote[0]}; not built "
                                                    "(--allow-network fetches it)")
    else:
        for member in reach.folders:
            found = read_kustomization(member)
            plan.entries.extend(entries_of(member, found.path, found.document))
    return plan


def _entry_line(entry: ChartEntry) -> int:
    return read_kustomization(entry.folder).line_of("helmCharts", entry.index)


def _build(plan: _Plan, command: list[str], allow_network: bool, origins: Origins,
           rendered: dict[tuple[str, int], EntryOutcome], scratch: str) -> BuildOutcome:
    if plan.decided is not None:
        return plan.decided
    command = [*command, *(NO_LOAD_RESTRICTOR if plan.unrestricted else [])]
    with tempfile.TemporaryDirectory(dir=scratch) as work:
        if plan.entries:
            outcomes = [rendered[(e.kustomization, e.index)] for e in plan.entries]
            top = os.path.join(work, "tree")
            _lay_out_view(plan, outcomes, top)
            target, view = kustomize_mirror.in_view(plan.folder, plan.root, top), top
        else:
            outcomes, target, view = [], os.path.abspath(plan.folder), None
        wrapper = _wrapper(work, [target])
        done = _run([*command, "--", wrapper], allow_network)
        if isinstance(done, str):
            return _failed(plan.folder, done)
        if done.returncode != 0:
            return _build_failed(plan.folder, error_text(done.stderr), [o for o in outcomes if not o.rendered],
                                 _paths(plan, view, wrapper))
        return _built(plan, origins, wrapper, view, done.stdout)


def _build_together(batch: Batch, command: list[str], allow_network: bool, origins: Origins,
                    rendered: dict[tuple[str, int], EntryOutcome], scratch: str) -> list[BuildOutcome]:
    """The batch's kustomizations in one kustomize run (batches.py); in halves where it fails, each on its
    own where its output cannot be told apart."""
    with tempfile.TemporaryDirectory(dir=scratch) as work:
        wrapper = _wrapper(work, [os.path.abspath(plan.folder) for plan in batch.plans])
        done = _run([*command, *(NO_LOAD_RESTRICTOR if batch.plans[0].unrestricted else []), "--", wrapper],
                    allow_network)
        failed = not isinstance(done, str) and done.returncode != 0  # a run that timed out is not run again
        parts = split(done.stdout, batch, wrapper) if not isinstance(done, str) and not failed else None
        if parts is not None:
            return [_built(plan, origins, wrapper, None, part) for plan, part in zip(batch.plans, parts)]
    culprit = failing(done.stderr, batch, wrapper) if failed and len(batch.plans) > 2 else None
    if culprit is not None:
        outcomes = _build_together(without(batch, culprit), command, allow_network, origins, rendered, scratch)
        outcomes.insert(culprit, _build(batch.plans[culprit], command, allow_network, origins, rendered, scratch))
        return outcomes
    if failed and len(batch.plans) > 2:
        return [outcome for half in halves(batch)
                for outcome in _build_together(half, command, allow_network, origins, rendered, scratch)]
    return [_build(plan, command, allow_network, origins, rendered, scratch) for plan in batch.plans]


def _wrapper(work: str, targets: list[str]) -> str:
    """A throwaway kustomization listing `targets` as its resources, asking for every object's origin."""
    wrapper = os.path.join(work, "wrapper")
    os.mkdir(wrapper)
    with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump({"resources": [os.path.relpath(target, wrapper) for target in targets],
                        "buildMetadata": ["originAnnotations", "transformerAnnotations"]}, handle)
    return wrapper


def _built(plan: _Plan, origins: Origins, wrapper: str, view: str | None, stdout: str) -> BuildOutcome:
    places = origins.for_build(plan.folder, plan.root, wrapper, view)
    output = places.new_documents(stdout)
    manifests, diagnostics = read_output(output, f"{plan.folder} (built)")
    return BuildOutcome(plan.folder, reorigin(manifests, places.finder(output)), diagnostics,
                        patched=places.patched)


def _lay_out_view(plan: _Plan, outcomes: list[EntryOutcome], top: str) -> None:
    """The repository as kustomize must see it: each kustomization with helmCharts rewritten to list what
    they rendered, and every kustomization that leads to one materialised."""
    holding = {os.path.realpath(o.entry.folder) for o in outcomes}
    replaced: dict[str, dict[str, str]] = {}
    copied: set[str] = set()
    leading = plan.reach.reaching(holding)
    for folder in plan.reach.folders:
        real = os.path.realpath(folder)
        if real not in leading or real in replaced:
            continue
        kustomization = read_kustomization(folder)
        document = dict(kustomization.document)
        mine = [o for o in outcomes if os.path.realpath(o.entry.folder) == real]
        files = {}
        if mine:
            for key in ("helmCharts", "helmGlobals", "helmChartInflationGenerator"):
                document.pop(key, None)
            text = "---\n".join(o.text for o in mine if o.text)
            if text:
                name = _free_name(real)
                files[name] = text
                resources = document.get("resources")
                document["resources"] = [*(resources if isinstance(resources, list) else []), name]
        files["kustomization.yaml"] = yaml.safe_dump(document, sort_keys=False)
        replaced[real] = files
        copied.update(_files_read(folder, kustomization.document, real))
    kustomize_mirror.build_view(plan.root, top, replaced, copied)


def _free_name(folder: str) -> str:
    name, number = _RENDERED_FILE, 1
    while os.path.lexists(os.path.join(folder, name)):
        number += 1
        name = f"kubehop-helm-charts-{number}.yaml"
    return name


def _files_read(folder: str, document: dict, real_folder: str) -> set[str]:
    """Files in the kustomization's own folder tree that it reads (they are copied into the view)."""
    found = set()
    for reference in references(document):
        path = os.path.realpath(os.path.join(folder, reference.value.strip()))
        if path.startswith(os.path.join(real_folder, "")) and os.path.isfile(path):
            found.add(path)
    return found


def _run(command: list[str], allow_network: bool) -> subprocess.CompletedProcess | str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        if not allow_network:
            return no_network.run(command, env, _TIMEOUT_SECONDS)
        return subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return f"kustomize did not finish within {_TIMEOUT_SECONDS} s"
    except OSError as err:
        return f"cannot run kustomize: {err}"


def _failed(folder: str, message: str) -> BuildOutcome:
    return BuildOutcome(folder, [], [Diagnostic(folder, f"kustomize build failed: {message}")],
                        "kustomize build failed (see input problems)")


def _build_failed(folder: str, message: str, skipped: list[EntryOutcome], paths: Paths) -> BuildOutcome:
    if any(sign in message for sign in _NETWORK_REFUSED):  # a remote reference kubehop's reading missed
        return BuildOutcome(folder, [], [], f"kustomize tried to reach the network ({message}); not built "
                                            "(--allow-network lets it)")
    plugin = plugin_of(message)
    if plugin is not None:  # a plugin is a program from the tree: kubehop runs none (nor does Flux)
        return BuildOutcome(folder, [], [], f"needs the kustomize plugin {paths.scrub(plugin)!r}, which kubehop "
                                            "does not run; not built")
    if skipped:  # its patches may need the objects of charts kubehop could not render
        names = ", ".join(o.entry.name for o in skipped)
        if message.endswith("is empty"):  # nothing but helmCharts
            return BuildOutcome(folder, [], [], f"not built: it holds only Helm charts ({names}), not rendered")
        return BuildOutcome(folder, [], [], f"not built without its Helm charts ({names}), which were not "
                                            f"rendered: {paths.scrub(message)}")
    return _caused(folder, read_cause(message, os.path.realpath(folder), paths), paths)


def _paths(plan: _Plan, view: str | None = None, wrapper: str | None = None) -> Paths:
    shown = os.path.normpath(os.path.join(plan.folder, os.path.relpath(plan.root, os.path.realpath(plan.folder))))
    return Paths(plan.root, shown, view, wrapper)


def _unreadable(folder: str, broken: str, paths: Paths, problem: str) -> BuildOutcome:
    """`folder` not built because the kustomization file of `broken` (itself or one it uses) is unreadable."""
    real = os.path.realpath(broken)
    name = paths.show(kustomization_file(broken) or os.path.join(broken, "kustomization.yaml"))
    return _caused(folder, Cause(real, file_problem(name, problem), "file"), paths)


def _caused(folder: str, cause: Cause, paths: Paths) -> BuildOutcome:
    """A failed build, its input problem at the kustomization file where the cause lies."""
    where = paths.display(cause.file or cause.folder)
    problem = Diagnostic(where if cause.file else kustomization_file(where) or where, cause.message, cause.line)
    return BuildOutcome(folder, [], [problem], "kustomize build failed (see input problems)",
                        cause=(cause.folder, cause.key, paths.show(cause.folder)))


def _once(outcomes: list[BuildOutcome]) -> list[BuildOutcome]:
    """One input problem per cause: a kustomization that fails only because one it uses fails is not
    built "because" of that one, and the cause is reported once, however many kustomizations reach it."""
    reported: set[tuple[str, str]] = set()
    for outcome in outcomes:
        if outcome.cause is None:
            continue
        folder, key, name = outcome.cause
        if os.path.realpath(outcome.folder) != folder:
            outcome.not_built = f"not built because {name} could not be built (see input problems)"
        if (folder, key) in reported:
            outcome.diagnostics = []
        reported.add((folder, key))
    return outcomes
