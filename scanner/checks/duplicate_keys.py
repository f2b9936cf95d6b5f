"""Keys that helm's output writes twice: a warning at the template line, naming the value kept.

The sources find them as they read a render (sources/helm/rendered_duplicates.py: ScanContext.duplicate_keys);
this check words them. A template that writes a key twice still installs: helm turns each object
into JSON, which keeps one value per key, and the API server persists the one rules/helm.yaml says.
"""

from __future__ import annotations

import functools
from typing import Iterable, Sequence

from scanner import data
from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.model import DuplicateKey, Finding, Manifest

SCOPE = TREE


@functools.cache
def _facts() -> dict:
    return data.load("rules/helm.yaml")["duplicate_keys"]


def _rules(_rulebook) -> dict[str, RuleInfo]:
    facts = _facts()
    return {facts["name"]: RuleInfo(
        "a key written twice in what a chart's template renders",
        f"Helm installs the object with one value per key, and the API server keeps the {facts['kept']} one: the "
        "other is lost without a word, and tools that read YAML strictly refuse the output. Write the key once, "
        "in the template or the helper that also writes it.", "warning", facts["source"])}


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    return [_finding(duplicate) for duplicate in context.duplicate_keys]


def _finding(duplicate: DuplicateKey) -> Finding:
    facts, manifest, at = _facts(), duplicate.manifest, duplicate.kept_at
    dropped_line = duplicate.dropped_at.line
    also = f"also at line {dropped_line}" if dropped_line != at.line else "both from this line"
    if duplicate.same:
        outcome = f"both are {duplicate.kept}, so nothing is lost, but tools that read YAML strictly refuse it"
    else:
        outcome = f"the API server keeps the {facts['kept']} value ({duplicate.kept}) and drops {duplicate.dropped}"
    message = f"{duplicate.where}: key written twice in what the template renders ({also}); {outcome}"
    return Finding(rule_id=facts["name"], severity="warning", message=message, origin=at,
                   api_version=manifest.api_version, kind=manifest.kind, name=manifest.name,
                   namespace=manifest.namespace, source_url=facts["source"],
                   remediation=(f"Write {duplicate.key} once in the template (or the helper that also writes it).",))
