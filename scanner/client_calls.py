"""Clients that still call deprecated APIs, as a cluster dump tells it (`--cluster-state`):

  kubectl get --raw /metrics > metrics.txt   apiserver_requested_deprecated_apis{group, version, resource,
                                             removed_release}
  an audit log (JSON lines, audit.k8s.io/v1)    events annotated k8s.io/deprecated, k8s.io/removed-release,
                                                with the caller's user agent and user

The metric names every API something requested since the API server started; an audit event names
the caller too. Both are read for what they hold: other metrics, and lines that are neither, are
passed over (the lines of the deprecated-API metric kubehop cannot read are counted in a notice).
What the names mean is data: rules/lifecycle/api-calls.yaml.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field

from scanner import data
from scanner.model import Diagnostic, Origin
from scanner.versions import Minor, parse_minor

_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\S+)?\s*$')
_MAX_CLIENTS = 5  # callers named per API in a finding; the rest are counted
# In a folder given to --cluster-state, beside the YAML and JSON dumps: metrics and audit logs.
DUMP_SUFFIXES = (".txt", ".prom", ".metrics", ".log", ".jsonl")


@dataclass
class ApiCall:
    """Requests to one deprecated API (group, version, resource), from a dump."""

    group: str
    version: str
    resource: str
    removed_in: Minor | None
    origin: Origin  # the first line that names it
    said_by: str  # "the API server's metrics" or "the audit log"
    requests: int = 0
    clients: dict[str, int] = field(default_factory=dict)  # "user agent (user)" -> requests

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@functools.cache
def _names() -> dict:
    return data.load("rules/lifecycle/api-calls.yaml")


def text_dumps(paths: list[str]) -> list[str]:
    """The metrics and audit-log files in the folders of `paths` (not their YAML and JSON: the dump
    walk reads those), in a stable order; symbolic links are not followed."""
    found = []
    for top in paths:
        if not os.path.isdir(top):
            continue
        for directory, folders, files in os.walk(top):
            folders[:] = sorted(f for f in folders if not os.path.islink(os.path.join(directory, f)))
            found += [os.path.join(directory, name) for name in sorted(files) if name.endswith(DUMP_SUFFIXES)
                      and not os.path.islink(os.path.join(directory, name))]
    return found


def calls_source() -> str:
    """Where Kubernetes documents how to find the callers of deprecated APIs."""
    return _names()["source"]


def is_metrics(text: str) -> bool:
    """Prometheus text (what /metrics serves), not YAML that merely names the metric (an alert rule)."""
    if "apiVersion" in text:
        return False
    metric = _names()["metric"]["name"]
    return text.lstrip().startswith(("# HELP ", "# TYPE ")) or re.search(
        rf"^{re.escape(metric)}[{{ ]", text, re.MULTILINE) is not None


def is_audit_log(text: str) -> bool:
    first = text.lstrip()[:2000]
    return first.startswith("{") and ("audit.k8s.io" in first or '"auditID"' in first)


def read_metrics(path: str, text: str) -> tuple[list[ApiCall], list[Diagnostic]]:
    names = _names()["metric"]
    metric, labels = names["name"], names["labels"]
    calls: dict[tuple[str, str, str], ApiCall] = {}
    unread = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith(metric):
            continue  # another metric, a comment, a blank line: not ours
        sample = _SAMPLE.match(line)
        if sample is None or sample.group(1) != metric:
            unread += sample is None
            continue
        values = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(sample.group(2) or "")}
        try:
            count = float(sample.group(3))
        except ValueError:
            unread += 1
            continue
        if not values.get(labels["version"]) or not values.get(labels["resource"]) or count <= 0:
            unread += not (values.get(labels["version"]) and values.get(labels["resource"]))
            continue
        key = (values.get(labels["group"], ""), values[labels["version"]], values[labels["resource"]])
        call = calls.setdefault(key, ApiCall(*key, _minor(values.get(labels["removed_release"])), Origin(path, number),
                                             "the API server's metrics"))
        call.requests += 1
    problems = []
    if unread:
        problems.append(Diagnostic(path, f"{unread} {metric} line{'s' if unread != 1 else ''} kubehop could not "
                                         "read; the others were", level="notice"))
    if not calls and metric not in text:
        problems.append(Diagnostic(path, f"a metrics dump without {metric}: no deprecated API was requested "
                                         "since the API server started, or the dump is not the API server's "
                                         "(kubectl get --raw /metrics)", level="notice"))
    return list(calls.values()), problems


def read_audit_log(path: str, text: str) -> tuple[list[ApiCall], list[Diagnostic]]:
    names = _names()["audit"]
    calls: dict[tuple[str, str, str], ApiCall] = {}
    unread = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            unread += 1
            continue
        annotations = event.get("annotations") if isinstance(event, dict) else None
        if not isinstance(annotations, dict) or str(annotations.get(names["deprecated"])).lower() != "true":
            continue
        ref = event.get("objectRef") if isinstance(event.get("objectRef"), dict) else {}
        version, resource = str(ref.get("apiVersion") or ""), str(ref.get("resource") or "")
        if not version or not resource:
            continue
        key = (str(ref.get("apiGroup") or ""), version, resource)
        call = calls.setdefault(key, ApiCall(*key, _minor(annotations.get(names["removed_release"])),
                                             Origin(path, number), "the audit log"))
        call.requests += 1
        user = event.get("user") if isinstance(event.get("user"), dict) else {}
        agent, username = _printable(event.get("userAgent")), _printable(user.get("username"))
        client = f"{agent or 'an unnamed client'} ({username or '?'})"
        call.clients[client] = call.clients.get(client, 0) + 1
    problems = [Diagnostic(path, f"{unread} line{'s' if unread != 1 else ''} of the audit log "
                                 f"{'are not JSON events' if unread != 1 else 'is not a JSON event'}; the others "
                                 "were read", level="notice")] if unread else []
    return list(calls.values()), problems


def clients_text(call: ApiCall) -> str:
    """The callers, busiest first, for a person."""
    ranked = sorted(call.clients.items(), key=lambda item: (-item[1], item[0]))
    named = ", ".join(f"{client}: {count} request{'s' if count != 1 else ''}"
                      for client, count in ranked[:_MAX_CLIENTS])
    more = len(ranked) - _MAX_CLIENTS
    return named + (f", and {more} more" if more > 0 else "")


def _minor(value: object) -> Minor | None:
    try:
        return parse_minor(str(value)) if value else None
    except ValueError:
        return None


def _printable(value: object) -> str:
    """A value from the dump, safe to print: no control characters, bounded."""
    text = str(value) if isinstance(value, (str, int)) else ""
    return "".join(c if c.isprintable() else "?" for c in text)[:120]
