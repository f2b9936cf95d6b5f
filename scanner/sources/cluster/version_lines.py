"""The cluster's Kubernetes version in files kubehop reads as lines, not as YAML: an env file's
`KUBERNETES_VERSION=v1.34.0` that a Renovate comment tracks as the kubelet's release, and the kubelet
image of a Talos machine-configuration template (`machineconfig.yaml.j2`, which the repository's own
task renders before talosctl applies it, so it is no YAML kubehop can parse).

Which keys, images and file names count is data (rules/cluster-version.yaml `env`, `template_images`).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Sequence

from scanner import data
from scanner.model import Origin
from scanner.sources.cluster.tfvars import VersionAssignment

_ENV = re.compile(r'^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=["\']?(v?\d+\.\d+\.\d+[0-9A-Za-z.+-]*)["\']?\s*(?:#.*)?$')
_IMAGE = re.compile(r'^\s*(?:-\s+)?image:\s*["\']?([^\s"\'#:]+(?::\d+)?/[^\s"\'#:]+):(v?\d+\.\d+\.\d+[0-9A-Za-z.+-]*)["\']?\s*(?:#.*)?$')


@functools.cache
def _rules() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(env key -> what tracks it, image -> the file-name patterns it is read in)."""
    rules = data.load("rules/cluster-version.yaml")
    env = {entry["name"]: tuple(entry["tracked_by"]) for entry in rules.get("env", ())}
    images = {entry["image"]: tuple(entry["files"]) for entry in rules.get("template_images", ())}
    return env, images


def is_template(name: str) -> bool:
    """Is a file of this name a machine-configuration template whose kubelet image the data reads?"""
    return any(fnmatch.fnmatchcase(name, pattern) for patterns in _rules()[1].values() for pattern in patterns)


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


def template_versions(path: str, name: str, text: str) -> list[VersionAssignment]:
    """The kubelet versions a machine-configuration template's image lines give, as written."""
    images = {image for image, patterns in _rules()[1].items()
              if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)}
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _IMAGE.match(line) if "image:" in line else None
        if match and match.group(1) in images:
            found.append(VersionAssignment(match.group(2), Origin(path, number, match.start(2) + 1),
                                           f"kubelet image {match.group(1)}"))
    return found


def renovate_tracks(lines: Sequence[str], line: int, names: Sequence[str]) -> bool:
    """A Renovate comment on line `line` (0-based: the key's) or the one above names one of `names` as
    what it tracks (`depName=ghcr.io/siderolabs/kubelet`, `github-releases=kubernetes/kubernetes`)."""
    for text in lines[max(line - 1, 0):line + 1]:
        comment = text.partition("#")[2] if "renovate:" in text.partition("#")[2] else ""
        if any(re.search(rf"(?:^|[=\s]){re.escape(name)}(?:$|[\s\"'])", comment) for name in names):
            return True
    return False
