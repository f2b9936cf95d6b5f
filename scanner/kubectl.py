"""kubectl commands for remediations, with the real resource and object names filled in.

The names come from the tree or a cluster dump, and a person pastes the command into a shell: each
is shell-quoted (`shlex.quote`: a plain name stays as it is), so `x; curl … | sh` stays one argument.
"""

from __future__ import annotations

import json
from shlex import quote

from scanner.crds import Crd
from scanner.model import Manifest

EMPTY_MERGE_PATCH = "--type=merge -p '{}'"


def _target(crd: Crd, obj: Manifest) -> str:
    namespace = f"-n {quote(obj.namespace)} " if crd.namespaced and obj.namespace else ""
    return f"kubectl {namespace}patch {quote(crd.name)} {quote(obj.name)}"


def rewrite(crd: Crd, obj: Manifest) -> str:
    """An empty merge patch: a write, so the object is stored again at the storage version."""
    return f"{_target(crd, obj)} {EMPTY_MERGE_PATCH}"


def rewrite_all(crd: Crd) -> str:
    """The same for every object of the resource, in every namespace."""
    if not crd.namespaced:  # not xargs -I{}: it would replace the {} of the patch too
        return f"kubectl get {quote(crd.name)} -o name | while read -r name; do kubectl patch \"$name\" {EMPTY_MERGE_PATCH}; done"
    listing = "'{range .items[*]}{.metadata.namespace}{\" \"}{.metadata.name}{\"\\n\"}{end}'"
    return (f"kubectl get {quote(crd.name)} -A -o jsonpath={listing} | while read -r ns name; do "
            f"kubectl -n \"$ns\" patch {quote(crd.name)} \"$name\" {EMPTY_MERGE_PATCH}; done")


def set_stored_versions(crd: Crd, versions: list[str]) -> str:
    patch = json.dumps({"status": {"storedVersions": versions}}, separators=(",", ":"))
    return f"kubectl patch crd {quote(crd.name)} --subresource=status --type=merge -p {quote(patch)}"


def clear_managed_fields(crd: Crd, obj: Manifest) -> str:
    """A managedFields list of one empty entry resets field ownership (server-side apply docs)."""
    patch = json.dumps([{"op": "replace", "path": "/metadata/managedFields", "value": [{}]}],
                       separators=(",", ":"))
    return f"{_target(crd, obj)} --type=json -p {quote(patch)}"


def delete_all(crd: Crd, namespaces: list[str]) -> list[str]:
    if not crd.namespaced:
        return [f"kubectl delete {quote(crd.name)} --all"]
    if not namespaces:
        return [f"kubectl delete {quote(crd.name)} -A --all"]
    return [f"kubectl delete {quote(crd.name)} -n {quote(namespace)} --all" for namespace in namespaces]


def numbered(steps: list[tuple[str, list[str]]], start: int | None = 1) -> tuple[str, ...]:
    """Remediation lines: each step (numbered from `start`, unless None), its commands indented."""
    lines: list[str] = []
    for index, (text, commands) in enumerate(steps):
        lines.append(text if start is None else f"{start + index}. {text}")
        lines.extend(f"   {command}" for command in commands)
    return tuple(lines)
