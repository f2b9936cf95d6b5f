"""`kubehop fix`: rewrite what has a mechanical migration, keeping every other byte.

Which migrations exist and what they change is data (rules/migrations/); `engine` applies
one to an object, `text_edits` to a YAML document by editing its lines where it can (most
documents, in time linear in the file), `document` with ruamel.yaml where it cannot (layout
kept by `layout`), `template` handles Helm chart templates, where only a plain apiVersion line
may be rewritten; report/patch.py writes the diff from what changed.
"""

from __future__ import annotations

import bisect
import gc
import os
import re
from typing import Any, Iterator, Sequence

from scanner.fix.document import rewrite_document
from scanner.fix.migrations import Migration, load_migrations
from scanner.fix.plan import Planner
from scanner.fix.result import FileFix, FixResult, Left
from scanner.fix.template import rewrite_template
from scanner.fix.text_edits import Declined, rewrite_document_text
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest, object_ref
from scanner.exclusions import Exclusions
from scanner.sources.files.walk import SKIPPED_DIRS, ChartFolder, KustomizeFolder, ManifestFile, read_file, walk
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, cyclic_gc_paused, read_text
from scanner.suppress import MARKER, Suppression, read_suppressions, rule_matches

_BOM = "\ufeff"
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?\r?$")
# YAML or JSON; the value may be tagged or anchored (`!!str Ingress`), quoted, or a block scalar.
_KIND = re.compile(r"""\bkind["']?[ \t]*:\s*(?:[!&]\S*\s+){0,2}"""  # tag, anchor
                   r"""(?:[|>][-+0-9]*[ \t]*(?:#.*)?\n\s*)?["']?([A-Za-z0-9]+)""")  # block scalar, quotes


def fix(paths: Sequence[str], planner: Planner, exclusions: Sequence[Exclusions] = ()) -> FixResult:
    result = FixResult()
    interesting: dict[str, set[str]] = {}  # kind -> the apiVersions of it fix may act on
    for version, kind in (*load_migrations(), *planner.rulebook.api_rules):
        interesting.setdefault(kind, set()).add(version)
    for item in _files(paths):
        if any(e.matches(item.path) for e in exclusions):
            continue
        if isinstance(item, Diagnostic):
            result.diagnostics.append(item)
            continue
        text, problem = read_file(item.path)
        if problem is not None:
            if problem.level == "error":
                result.diagnostics.append(problem)
            continue
        if _mentions(text, interesting):
            try:
                with cyclic_gc_paused():  # composing is most of it, as in a scan
                    _fix_file(item, text, planner, result)
            except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
                result.diagnostics.append(unexpected(item.path, err))
    result.left.sort(key=lambda left: (left.path, left.line))
    return result


def fix_text(path: str, text: str, planner: Planner, chart_template: bool = False) -> FixResult:
    """What `fix` makes of one file whose text is `text` (another change to it made first: a change set's)."""
    result = FixResult()
    try:
        _fix_file(ManifestFile(path, chart_template=chart_template), text, planner, result)
    except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
        result.diagnostics.append(unexpected(path, err))
    return result


def _files(paths: Sequence[str]) -> Iterator[ManifestFile | Diagnostic]:
    """The files to look at, a chart's templates (and its subcharts') included; a kustomization's
    files are listed on their own."""
    for item in walk(list(paths)):
        if isinstance(item, ChartFolder):
            for folder, subfolders, _ in os.walk(item.path):
                subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_DIRS)
                if os.path.basename(folder) == "templates" and os.path.isfile(os.path.join(folder, "..", "Chart.yaml")):
                    yield from (f for f in walk([folder]) if not isinstance(f, (ChartFolder, KustomizeFolder)))
        elif not isinstance(item, KustomizeFolder):
            yield item


def _mentions(text: str, interesting: dict[str, set[str]]) -> bool:
    """A cheap look before any parsing: does the text declare a kind, and name one of its apiVersions,
    that fix may act on? (An apiVersion alone lets every file through: v1 Endpoints has a rule.)"""
    return any(version in text for kind in set(_KIND.findall(text)) for version in interesting.get(kind, ()))


def _fix_file(item: ManifestFile, text: str, planner: Planner, result: FixResult) -> None:
    lines = text.split("\n")
    chunks = _documents(lines)
    roots: list[Any] = []
    try:
        manifests, problems = ([], []) if item.chart_template else read_text(text, item.path, roots)
    except DocumentProblem as problem:
        result.diagnostics.append(Diagnostic(item.path, str(problem), problem.line))
        return
    except TemplateSyntax:
        manifests, problems = [], []
        item = ManifestFile(item.path, chart_template=True)
    if item.chart_template:
        before = list(lines)
        migrated, left = rewrite_template(lines, chunks, item.path, planner)  # one line for one line
        pieces = [(i, i + 1, i, i + 1, [(0, 1, 0, 1)]) for i, (a, b) in enumerate(zip(before, lines)) if a != b]
        result.left.extend(left)
    else:
        # Documents that could not be parsed were not fixed; other remarks are the scan's business.
        result.diagnostics.extend(d for d in problems if d.message.startswith("invalid YAML"))
        silenced = read_suppressions(text, item.path)[0] if MARKER in text else []
        wanted = [m for m in manifests if not _silenced(m, planner, silenced)]
        pieces = []
        migrated = _fix_documents(lines, chunks, _roots(chunks, roots), _plan(wanted, planner, result), item.path,
                                  result, pieces)
    if migrated:
        bom = _BOM if _has_bom(item.path) else ""  # read_file drops it; the diff and the file keep it
        result.files.append(FileFix(item.path, bom + text, bom + "\n".join(lines), migrated, tuple(pieces)))


def _has_bom(path: str) -> bool:
    try:  # non-blocking, as read_file opens it: a file swapped for a FIFO meanwhile must not hang fix
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(descriptor, 3) == _BOM.encode()
    except OSError:
        return False
    finally:
        os.close(descriptor)


def _silenced(manifest: Manifest, planner: Planner, suppressions: list[Suppression]) -> bool:
    """Objects whose finding the project silenced (`ignore` in the configuration, or a
    `# kubehop: ignore` comment) are left as they are."""
    rule_ids = planner.rule_ids(manifest.api_version, manifest.kind)
    return any(rule_matches(rule_id, planner.ignore) or any(
        s.silences(rule_id, manifest.origin.path, manifest.origin.line) for s in suppressions)
        for rule_id in rule_ids)


def _plan(manifests: list[Manifest], planner: Planner, result: FixResult) -> dict[int, tuple[str, Migration]]:
    """apiVersion line -> (object, migration) for what can move; what needs a person goes to `result`."""
    todo: dict[int, tuple[str, Migration]] = {}
    for manifest in manifests:
        decision = planner.decide(manifest.api_version, manifest.kind)
        name = object_ref(manifest.kind, manifest.namespace, manifest.name)
        if isinstance(decision, Migration):
            todo[manifest.origin.line] = (name, decision)
        elif decision is not None:
            result.left.append(Left(manifest.origin.path, manifest.origin.line, name, decision))
    return todo


def _fix_documents(lines: list[str], chunks: list[range], roots: dict[int, Any], todo: dict[int, tuple[str, Migration]],
                   path: str, result: FixResult, pieces: list) -> int:
    """Rewrite `lines` document by document, noting the changed documents in `pieces` (FileFix). The
    new lines are gathered in one pass: a large file's thousands of documents must not each move the
    rest of the list."""
    crlf = lines[0].endswith("\r")
    migrated, out, copied = 0, [], 0  # copied: lines of `lines` already in `out` or replaced
    for chunk in chunks:
        mine = {line: todo[line] for line in range(chunk.start + 1, chunk.stop + 1) if line in todo}
        if not mine:
            continue
        original = [lines[i].removesuffix("\r") for i in chunk]
        new, count, left, changes = _rewrite(original, chunk, roots.get(chunk.start), mine, path)
        result.left.extend(left)
        if new is not None:
            out.extend(lines[copied:chunk.start])
            pieces.append((chunk.start, chunk.stop, len(out), len(out) + len(new), changes))
            out.extend(line + "\r" if crlf else line for line in new)
            copied = chunk.stop
            migrated += count
    lines[:] = out + lines[copied:]
    return migrated


def _rewrite(lines: list[str], chunk: range, root: Any, todo: dict[int, tuple[str, Migration]], path: str) \
        -> tuple[list[str] | None, int, list[Left], list[tuple[int, int, int, int]] | None]:
    """As text edits where they are sure (text_edits.py), else with ruamel.yaml (document.py)."""
    if root is not None:
        try:
            return rewrite_document_text(lines, chunk.start, root, todo, path)
        except Declined:
            pass
    paused = not gc.isenabled()
    gc.enable()  # ruamel.yaml's objects do hold reference cycles: they are collected as it goes
    try:
        return (*rewrite_document(lines, chunk.start + 1, path, todo), None)
    finally:
        if paused:
            gc.disable()


def _roots(chunks: list[range], roots: list[Any]) -> dict[int, Any]:
    """The first line of a document -> its composed root, for documents that hold exactly one."""
    starts = [chunk.start for chunk in chunks]
    found: dict[int, list[Any]] = {}
    for root in roots:
        index = bisect.bisect_right(starts, root.start_mark.line) - 1
        if index >= 0 and root.start_mark.line < chunks[index].stop:
            found.setdefault(starts[index], []).append(root)
    return {start: nodes[0] for start, nodes in found.items() if len(nodes) == 1}


def _documents(lines: list[str]) -> list[range]:
    """The line ranges of the documents, without their `---` lines; the file's final empty line excluded."""
    end = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    separators = [i for i in range(end) if _SEPARATOR.match(lines[i])]
    bounds = [-1] + separators + [end]
    return [range(a + 1, b) for a, b in zip(bounds, bounds[1:]) if b > a + 1]
