"""`kubehop fix`: rewrite what has a mechanical migration, keeping every other byte.

Which migrations exist and what they change is data (rules/migrations/); `engine` applies
one to an object, `document` to a YAML document (layout kept by `layout`), `template`
handles Helm chart templates, where only a plain apiVersion line may be rewritten.
"""

from __future__ import annotations

import re
from typing import Sequence

import yaml

from scanner.fix.document import rewrite_document
from scanner.fix.migrations import load_migrations
from scanner.fix.plan import Planner
from scanner.fix.result import FileFix, FixResult, Left
from scanner.fix.template import rewrite_template
from scanner.model import Diagnostic
from scanner.sources.exclude import Exclusions
from scanner.sources.files import ManifestFile, read_file, walk

_SEPARATOR = re.compile(r"^---(?:[ \t].*)?\r?$")


def fix(paths: Sequence[str], planner: Planner, exclusions: Sequence[Exclusions] = ()) -> FixResult:
    result = FixResult()
    interesting = {v for v, _ in load_migrations()} | {v for v, _ in planner.rulebook.api_rules}
    for item in walk(list(paths)):
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
            _fix_file(item, text, planner, result, interesting)
    return result


def _mentions(text: str, api_versions: set[str]) -> bool:
    """A cheap look before any parsing: does the text name an apiVersion fix may act on?"""
    return any(version in text for version in api_versions)


def _fix_file(item: ManifestFile, text: str, planner: Planner, result: FixResult, interesting: set[str]) -> None:
    lines = text.split("\n")
    chunks = _documents(lines)
    if item.chart_template or ("{{" in text and not _parses(text)):
        migrated, left = rewrite_template(lines, chunks, item.path, planner)
        result.left.extend(left)
    else:
        chunks = [c for c in chunks if _mentions("\n".join(lines[c.start:c.stop]), interesting)]
        migrated = _fix_documents(lines, chunks, item.path, planner, result)
    if migrated:
        result.files.append(FileFix(item.path, text, "\n".join(lines), migrated))


def _fix_documents(lines: list[str], chunks: list[range], path: str, planner: Planner,
                   result: FixResult) -> int:
    """Rewrite `lines` document by document, last first so that earlier ranges stay true."""
    crlf = lines[0].endswith("\r")
    migrated = 0
    left_here: list[Left] = []
    for chunk in reversed(chunks):
        original = [lines[i].removesuffix("\r") for i in chunk]
        new, count, left, problems = rewrite_document(original, chunk.start + 1, path, planner)
        left_here[:0] = left
        result.diagnostics.extend(problems)
        if new is not None:
            lines[chunk.start:chunk.stop] = [line + "\r" if crlf else line for line in new]
            migrated += count
    result.left.extend(left_here)
    return migrated


def _documents(lines: list[str]) -> list[range]:
    """The line ranges of the documents, without their `---` lines; the file's final empty line excluded."""
    end = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    separators = [i for i in range(end) if _SEPARATOR.match(lines[i])]
    bounds = [-1] + separators + [end]
    return [range(a + 1, b) for a, b in zip(bounds, bounds[1:]) if b > a + 1]


def _parses(text: str) -> bool:
    try:
        for _ in yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            pass
    except yaml.YAMLError:
        return False
    return True
