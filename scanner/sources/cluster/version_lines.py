"""What files kubehop reads as lines, not as YAML, say of the cluster: an env file's
`KUBERNETES_VERSION=v1.34.0` that a Renovate comment tracks as the kubelet's release, and in a Talos
machine-configuration template (`machineconfig.yaml.j2`, `control-plane.yaml.tftpl`, which the
repository's own task renders before talosctl applies it, so it is no YAML kubehop can parse) the
kubelet image's tag and the manifest URLs Talos applies (cluster.extraManifests).

Which keys, images and file names count is data (rules/cluster-version.yaml `env`,
`machine_config_templates`; rules/cluster-config/config-sources.yaml `talos.extra_manifests`).
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from scanner import data
from scanner.model import Origin
from scanner.sources.cluster.tfvars import VersionAssignment

_ENV = re.compile(r'^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=["\']?(v?\d+\.\d+\.\d+[0-9A-Za-z.+-]*)["\']?\s*(?:#.*)?$')
_URL = re.compile(r'https?://[^\s"\'#{}]+')
_IMAGE = re.compile(r'^\s*(?:-\s+)?image:\s*["\']?([^\s"\'#:]+(?::\d+)?/[^\s"\'#:]+):(v?\d+\.\d+\.\d+[0-9A-Za-z.+-]*)["\']?\s*(?:#.*)?$')


@functools.cache
def _rules() -> tuple[dict[str, tuple[str, ...]], frozenset[str], str | None]:
    """(env key -> what tracks it, kubelet images, the extraManifests key). Which files are templates:
    tool_pins.is_template."""
    rules = data.load("rules/cluster-version.yaml")
    env = {entry["name"]: tuple(entry["tracked_by"]) for entry in rules.get("env", ())}
    templates = rules.get("machine_config_templates") or {}
    manifests = data.load("rules/cluster-config/config-sources.yaml")["talos"].get("extra_manifests")
    return (env, frozenset(templates.get("kubelet_images", ())), manifests.rpartition(".")[2] if manifests else None)


def env_versions(path: str, text: str) -> list[VersionAssignment]:
    """The cluster versions an env file's tracked KEY=VALUE lines set."""
    keys, found = _rules()[0], []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = _ENV.match(line)
        if match and match.group(1) in keys and renovate_tracks(lines, number, keys[match.group(1)]):
            found.append(VersionAssignment(match.group(2), Origin(path, number + 1, match.start(2) + 1),
                                           f"variable {match.group(1)}"))
    return found


def template_versions(path: str, text: str) -> list[VersionAssignment]:
    """The kubelet versions a machine-configuration template's image lines give, as written."""
    images, found = _rules()[1], []
    for number, line in enumerate(text.splitlines(), 1):
        match = _IMAGE.match(line) if "image:" in line else None
        if match and match.group(1) in images:
            found.append(VersionAssignment(match.group(2), Origin(path, number, match.start(2) + 1),
                                           f"kubelet image {match.group(1)}"))
    return found


def template_manifest_urls(path: str, text: str) -> list[tuple[str, Origin]]:
    """The URLs a machine-configuration template lists under its extraManifests key, each where it is
    written: the lines indented under the key, a list item's URL on its own line or after a comment line
    (`- # renovate: ...` then the URL). Template tags and comments are stepped over."""
    key = _rules()[2]
    if not key or key not in text:
        return []
    found: list[tuple[str, Origin]] = []
    indent: int | None = None  # the key's, while inside its block
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "{%", "{#")):
            continue
        depth = len(line) - len(line.lstrip())
        if indent is not None and (depth < indent or (depth == indent and not stripped.startswith("- "))):
            indent = None  # the block ended (YAML lets its items sit at the key's own indent)
        if indent is None:
            if stripped.rstrip() == f"{key}:" or stripped.startswith(f"{key}: "):
                indent = depth
            continue
        body = "" if stripped.startswith("- #") else stripped.partition(" #")[0]
        match = _URL.search(body)
        if match:
            found.append((match.group(0), Origin(path, number, line.index(match.group(0)) + 1)))
    return found


def renovate_tracks(lines: Sequence[str], line: int, names: Sequence[str]) -> bool:
    """A Renovate comment on line `line` (0-based: the key's) or the one above names one of `names` as
    what it tracks (`depName=ghcr.io/siderolabs/kubelet`, `github-releases=kubernetes/kubernetes`)."""
    for text in lines[max(line - 1, 0):line + 1]:
        comment = text.partition("#")[2] if "renovate:" in text.partition("#")[2] else ""
        if any(re.search(rf"(?:^|[=\s]){re.escape(name)}(?:$|[\s\"'])", comment) for name in names):
            return True
    return False
