"""Baselines: record today's findings, then fail only on new ones.

A finding is recognised by its rule, file and object (kind, namespace, name), not by its
line, so edits that shift lines do not make old findings new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Sequence

from scanner.model import Finding

SCHEMA = "rules/schema/baseline.schema.json"
FORMAT_VERSION = 1

Fingerprint = tuple[str, str, str, str | None, str | None]


class BaselineError(Exception):
    """A baseline file that cannot be read or written."""


def fingerprint(finding: Finding, folder: str) -> Fingerprint:
    path = finding.origin.path
    if os.path.exists(path):  # "<stdin>" and rendered sources keep their name
        path = os.path.relpath(os.path.abspath(path), os.path.abspath(folder)).replace(os.sep, "/")
    return finding.rule_id, path, finding.kind, finding.namespace, finding.name


def write(path: str, findings: Sequence[Finding]) -> None:
    counts = Counter(fingerprint(f, _folder(path)) for f in findings)
    document = {"kubehop_baseline": FORMAT_VERSION, "findings": [
        {"rule": rule, "file": file, "kind": kind, "namespace": namespace, "name": name, "count": count}
        for (rule, file, kind, namespace, name), count in sorted(counts.items(), key=lambda i: str(i[0]))]}
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
    except OSError as err:
        raise BaselineError(f"{path}: cannot write the baseline: {err.strerror or err}") from None


def read(path: str) -> Counter[Fingerprint]:
    from scanner.data import DataError, validate

    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        validate(document, SCHEMA, f"{path}: not a kubehop baseline")
    except OSError as err:
        raise BaselineError(f"{path}: cannot read the baseline ({err.strerror or err}); "
                            f"create it with --write-baseline") from None
    except ValueError as err:
        raise BaselineError(f"{path}: not a kubehop baseline: {err}") from None
    except DataError as err:
        raise BaselineError(str(err)) from None
    return Counter({(e["rule"], e["file"], e["kind"], e["namespace"], e["name"]): e["count"]
                    for e in document["findings"]})


def apply(path: str, findings: Sequence[Finding]) -> tuple[list[Finding], list[str]]:
    """The findings the baseline does not record, and notices about what it hid or no longer sees."""
    accepted = read(path)
    new: list[Finding] = []
    for finding in findings:
        key = fingerprint(finding, _folder(path))
        if accepted[key] > 0:
            accepted[key] -= 1
        else:
            new.append(finding)
    notices = []
    if len(new) < len(findings):
        notices.append(f"findings recorded in the baseline {path}, not shown: {len(findings) - len(new)}")
    gone = sum(accepted.values())
    if gone:
        notices.append(f"findings recorded in the baseline {path} but no longer found: {gone} "
                       f"(refresh it with --write-baseline {path})")
    return new, notices


def _folder(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))
