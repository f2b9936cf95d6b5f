"""A file given on the command line, checked where it belongs: in its Helm chart, in its kustomization.

pre-commit passes the files a commit changed. A chart template read alone is not a manifest (helm
must render it), a values file or a `Chart.yaml` holds no object at all, and a kustomization's files
are what its build makes of them. So each file given is looked up in its context inside the
repository (the Git work tree, else the working folder), and the context is analysed instead:

- the nearest enclosing Helm chart (a vendored subchart's parent: it renders with it): every file
  under the chart folder belongs to it;
- else the nearest enclosing kustomization (a folder at or above the file whose kustomization, through
  its bases and components, names the file; a `Component` is not built alone, so the search goes on
  above it): the kustomization files of what it reaches and the files they name belong to it.

Of a context's findings, those in the changed files are kept. A file that shapes the whole context
rather than holding objects of its own -- a chart's `Chart.yaml`, values files, subchart archives; a
kustomization file, a patch, a generator's input, a component -- changes what every object of it
becomes, so with one of them changed every finding of the context is kept. Input problems at the
context itself (a render or a build that fails) are kept; those of its other files are not the
change's. Paths given whole (a folder, a file in no context) are reported as before.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from scanner import per_scan
from scanner.containment import git_top, within
from scanner.sources.files.walk import KUSTOMIZATION_FILES

# The folders of a chart that hold its objects; everything else in a chart shapes every object of it.
_OBJECT_FOLDERS = frozenset({"templates", "crds"})
# The kustomization fields that name objects of their own; every other reference shapes the build.
_RESOURCE_FIELDS = frozenset({"resources", "bases"})


@dataclass(frozen=True)
class Context:
    """The Helm chart or kustomization a file given belongs to, checked as a whole."""

    kind: str  # "Helm chart" or "kustomization"
    folder: str  # as it is analysed (the file's own spelling, up to the folder)
    real: str
    own: frozenset[str] = frozenset()  # kustomization: real paths of the files it names as objects
    shaping: frozenset[str] = frozenset()  # kustomization: its kustomization files and other references

    def holds(self, real: str) -> bool:
        return within(real, self.real) if self.kind == "Helm chart" else real in self.own or real in self.shaping

    def shaped_by(self, real: str) -> bool:
        """Does a change of `real` (one of the context's files) change every object of the context?"""
        if self.kind == "kustomization":
            return real in self.shaping and real not in self.own
        parts = os.path.relpath(real, self.real).split(os.sep)
        return not _OBJECT_FOLDERS.intersection(parts[:-1])


@dataclass
class Selection:
    """What to analyse for the paths given, and which of its findings are theirs."""

    paths: list[str]
    whole: list[str] = field(default_factory=list)  # real paths given whole
    changed: set[str] = field(default_factory=set)  # real paths of the files checked in a context
    contexts: list[Context] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    # Where the repository of each context ends (scanner.containment): what a context's files may name,
    # however small the folder analysed (a kustomization's `../../components`).
    tops: list[str] = field(default_factory=list)

    def keep(self, analysis):
        """`analysis` (of `paths`) cut to what the paths given are about; as it is without contexts."""
        if not self.contexts:
            return analysis
        shaped = [c for c in self.contexts if any(c.holds(f) and c.shaped_by(f) for f in self.changed)]
        return _cut(analysis, self, shaped)

    def mine(self, path: str, shaped: list[Context]) -> bool:
        real = _real(path)
        if real is None:
            return True  # standard input, a name the system refuses: kept as it was
        if real in self.changed or any(within(real, w) for w in self.whole):
            return True
        return any(c.holds(real) for c in shaped)

    def at_context(self, path: str) -> bool:
        """A problem of a context itself: its folder, its kustomization file, its Chart.yaml."""
        real = _real(path)
        return real is not None and any(real == c.real or os.path.dirname(real) == c.real
                                        and os.path.basename(real) in (*KUSTOMIZATION_FILES, "Chart.yaml")
                                        for c in self.contexts)


def select(paths: list[str]) -> Selection:
    """The paths to analyse: each file given that belongs to a chart or a kustomization replaced by it."""
    selection = Selection(paths=[])
    analysed: dict[str, Context] = {}
    for given in paths:
        real = _real(given)
        context = _context_of(given, real) if real is not None and os.path.isfile(given) else None
        if context is None:
            selection.paths.append(given)
            if real is not None:
                selection.whole.append(real)
            continue
        selection.changed.add(real)
        top = _top(real)
        if top not in selection.tops:
            selection.tops.append(top)
        if context.real not in analysed:
            analysed[context.real] = context
            selection.contexts.append(context)
            selection.paths.append(context.folder)
        selection.notices.append(f"{given}: checked as part of the {context.kind} in {os.path.join(context.folder, '')}")
    if not selection.contexts:
        return Selection(paths=list(paths))
    return selection


def _real(path: str) -> str | None:
    if path == "-":
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _top(real_file: str) -> str:
    """Where the search for a context stops: the Git work tree, else the working folder when it holds
    the file, else the file's own folder (no context is looked for above what the user works in)."""
    folder = os.path.dirname(real_file)
    top = git_top(folder)
    if top is not None:
        return top
    here = os.path.realpath(os.getcwd())
    return here if within(folder, here) else folder


def _context_of(given: str, real: str) -> Context | None:
    top = _top(real)
    chart = _chart_of(os.path.dirname(real), top)
    if chart is not None:
        return Context("Helm chart", _spelled(given, real, chart), chart)
    folder = os.path.dirname(real)
    while within(folder, top):
        found = _kustomization_using(folder, real, top)
        if found is not None:
            own, shaping = found
            return Context("kustomization", _spelled(given, real, folder), folder, own, shaping)
        if folder == top:
            break
        folder = os.path.dirname(folder)
    return None


def _spelled(given: str, real: str, folder: str) -> str:
    """`folder` written from `given` (`chart/templates/x.yaml` -> `chart`), as reports then name its files."""
    up = os.path.relpath(os.path.dirname(real), folder)
    levels = 0 if up == "." else len(up.split(os.sep))
    spelled = os.path.normpath(os.path.join(os.path.dirname(given) or ".", *[os.pardir] * levels))
    return spelled if os.path.realpath(spelled) == folder else folder


def _chart_of(folder: str, top: str) -> str | None:
    """The chart whose render holds files of `folder`: the nearest folder with a Chart.yaml, or the
    parent a vendored subchart (`<parent>/charts/<sub>/`) renders with."""
    chart = None
    while within(folder, top):
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            chart = folder
        elif chart is not None and not (os.path.basename(folder) == "charts" and folder == os.path.dirname(chart)):
            break
        if folder == top:
            break
        folder = os.path.dirname(folder)
    return chart


@per_scan.cache(maxsize=1024)
def _names(folder: str, top: str) -> tuple[frozenset[str], frozenset[str], bool] | None:
    """What the kustomization at `folder` builds from: the real paths its closure names as objects,
    those that shape it (its kustomization files and every other reference), and whether it is a
    Component (not built alone); None when `folder` holds no readable kustomization."""
    if not any(os.path.isfile(os.path.join(folder, name)) for name in KUSTOMIZATION_FILES):
        return None  # as read_kustomization says, without importing the kustomize source for most folders
    from scanner.sources.kustomize.refs import closure, kustomization_file, read_kustomization, references

    kustomization = read_kustomization(folder)
    if kustomization.problem == "no kustomization file":
        return None
    own: set[str] = set()
    shaping: set[str] = {os.path.realpath(kustomization_file(folder) or folder)}
    for used in closure(folder, top).folders:
        read = read_kustomization(used)
        if read.path:
            shaping.add(os.path.realpath(read.path))
        for reference in references(read.document):
            named = _real(os.path.join(used, reference.value.strip()))
            if named is not None and os.path.isfile(named):
                (own if reference.field in _RESOURCE_FIELDS else shaping).add(named)
    return frozenset(own), frozenset(shaping), kustomization.document.get("kind") == "Component"


def _kustomization_using(folder: str, real: str, top: str) -> tuple[frozenset[str], frozenset[str]] | None:
    names = _names(folder, top)
    if names is None or names[2]:
        return None
    own, shaping, _ = names
    return (own, shaping) if real in own or real in shaping else None


def _cut(analysis, selection: Selection, shaped: list[Context], top: bool = True):
    """The analysis with only the findings, problems and unrendered files of the paths given; the
    clusters of a fleet cut the same way."""
    def problem_kept(d) -> bool:
        return selection.mine(d.path, shaped) or selection.at_context(d.path)

    cut = dataclasses.replace(
        analysis,
        findings=[f for f in analysis.findings if selection.mine(f.origin.path, shaped)],
        diagnostics=[d for d in analysis.diagnostics if problem_kept(d)],
        unrendered=[d for d in analysis.unrendered if problem_kept(d)],
        notices=(selection.notices if top else []) + analysis.notices,
    )
    cut.clusters = [dataclasses.replace(view, analysis=_cut(view.analysis, selection, shaped, False))
                    for view in analysis.clusters]
    return cut
