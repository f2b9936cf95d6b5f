"""Files no tool is handed: those holding a document kubehop refused as an alias bomb, a recursive
alias or absurd nesting. kubehop's own reader stops at its limits; helm and kustomize expand what
they are given (a recursive alias took kustomize 12 s and a gigabyte of stack before it crashed).
A chart or kustomization that would read such a file is not rendered or built, with a notice; the
file itself is already an input problem."""

from __future__ import annotations

import os
from typing import Callable, Iterable

from scanner.model import Diagnostic
from scanner.sources.yaml.yamlcheck import HAZARDS


def hazardous_files(diagnostics: Iterable[Diagnostic]) -> frozenset[str]:
    """The real paths of the files the diagnostics refuse as hazards."""
    return frozenset(os.path.realpath(d.path) for d in diagnostics
                     if d.level == "error" and any(mark in d.message for mark in HAZARDS))


def under(folder: str, hazards: frozenset[str]) -> str | None:
    """A hazardous file inside `folder` (helm reads every file of a chart), or None."""
    top = os.path.join(os.path.realpath(folder), "")
    return next((path for path in sorted(hazards) if path.startswith(top)), None)


def read_by_kustomization(folder: str, hazards: frozenset[str], root: str) -> str | None:
    """A hazardous file the kustomization at `folder`, or one it reaches, would read; or None."""
    from scanner.sources.kustomize.refs import closure, read_kustomization, references

    for member in closure(folder, root).folders:
        document = read_kustomization(member).document
        for reference in references(document):
            path = os.path.realpath(os.path.join(member, reference.value.strip()))
            if path in hazards:
                return path
    return None


def in_chart(folder: str, hazards: frozenset[str], scanned: list[str]) -> str | None:
    """A hazardous file the chart at `folder` would hand helm."""
    return under(folder, hazards)


def in_kustomization(folder: str, hazards: frozenset[str], scanned: list[str]) -> str | None:
    """A hazardous file the kustomization at `folder` would hand kustomize."""
    from scanner.containment import repository_root

    return read_by_kustomization(folder, hazards, repository_root(folder, scanned))


def held_back(folders: list, hazard_in: Callable[[str, frozenset[str], list[str]], str | None], what: str,
              hazards: frozenset[str], scanned: list[str]) -> tuple[list, list[Diagnostic]]:
    """The folders (walked items) that may be handed to their tool, and a notice for each of the others."""
    kept, notices = [], []
    for folder in folders:
        hazard = hazard_in(folder.path, hazards, scanned)
        if hazard is None:
            kept.append(folder)
        else:
            notices.append(Diagnostic(folder.path, f"{what}: {os.path.relpath(hazard)} holds an alias bomb, a "
                                                   "recursive alias or absurd nesting, which it would expand (see "
                                                   "input problems)", level="notice"))
    return kept, notices
