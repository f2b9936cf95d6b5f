"""`kubehop scan` as a service: paths in, the analysis out (scanner.analysis). The CLI and the tests
call this; `plan`, `components` and `inventory` are other views of the same analysis."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from scanner import per_scan
from scanner.analysis import Analysis
from scanner.options import ScanOptions
from scanner.policy import apply_policy
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.components.pins import ClusterPin

ScanResult = Analysis  # what the reports of a scan read

__all__ = ["ScanOptions", "ScanResult", "apply_policy", "scan"]


@per_scan.scope()  # the files given are looked up in their contexts before the analysis reads the tree
def scan(paths: list[str], target: Minor, current: Minor | None = None, options: ScanOptions = ScanOptions(),
         version_file: ClusterPin | None = None, cluster: str | None = None, need_current: bool = False) -> Analysis:
    """The analysis of `paths`; of each cluster on its own where the repository declares several
    (scanner.fleet), or of `cluster` alone. A file given that belongs to a Helm chart or a kustomization
    is checked as part of it (scanner.in_context); a path given that holds nothing to check says so
    (scanner.given_paths). `need_current`: scanner.analysis.analyse's (the plan's)."""
    from scanner import given_paths, in_context
    from scanner.fleet import analyse_fleet

    selection = in_context.select(paths)
    named = tuple(os.path.realpath(p) for p in paths if p != "-" and os.path.isfile(p))
    if named:  # a file named is checked as deployed, whatever reaches it (sources/reach/unreached.py)
        options = dataclasses.replace(options, named_files=(*options.named_files, *named))
    if selection.tops:  # a context's files may name what the repository holds beyond the folder analysed
        options = dataclasses.replace(options, repository_roots=(*options.repository_roots, *selection.tops))
    analysis = selection.keep(analyse_fleet(selection.paths, target, current, options, only=cluster,
                                            version_file=version_file, need_current=need_current))
    analysis.nothing_in = given_paths.nothing_in(paths, analysis)
    analysis.notices += [given_paths.words(p, why) for p, why in analysis.nothing_in if why == given_paths.EMPTY]
    return analysis
