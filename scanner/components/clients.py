"""Version variables that name a client's release, not the server a cluster runs.

`velero_version` in an Ansible role that downloads the `velero` binary for the host, or a
`cilium_cli_version`, says which command-line tool a workstation or a CI runner gets; the server
the cluster runs is pinned elsewhere (its chart, its manifests), or not at all. Such a variable is no
pin of the component.
"""

from __future__ import annotations

import os
import re

from scanner.containment import inside
from scanner.sources.files.walk import read_file

# `<name>_cli_version`, `<name>_client_version`, `<name>ctl_version`: the name says it is a client.
_CLIENT_STEM = re.compile(r"(?:[_-](?:cli|client)|ctl)$")
# What a line that fetches or installs a binary for the host holds: its platform, or where binaries go.
_HOST_BINARY = re.compile(r"linux|darwin|windows|amd64|arm64|x86_64|aarch64|ansible_architecture|ansible_system|"
                          r"/usr/(?:local/)?bin|\.exe\b")
_ROLE_VARIABLES = re.compile(r"^(.*[/\\]roles[/\\][^/\\]+)[/\\](?:defaults|vars)[/\\]")
_MAX_TASK_FILES = 64  # a role's task files read, at most, each of at most _MAX_TASK_BYTES
_MAX_TASK_BYTES = 1024 * 1024


def client_stem(stem: str) -> bool:
    """The part of `<stem>_version` before `_version` names a client: velero_cli, argocd_client, kubectl."""
    return bool(_CLIENT_STEM.search(stem))


def host_binary_only(variable: str, path: str) -> bool:
    """Whether an Ansible role's variable (`path`: its defaults/ or vars/ file) is used by the role's
    tasks only to fetch or install a binary for the host (a client). False when the role's tasks use it
    otherwise too (a chart's version, a manifest's URL), do not use it, or the file is in no role."""
    role = _ROLE_VARIABLES.match(path)
    if role is None:
        return False
    uses = [line for text in _task_texts(role.group(1)) for line in text.splitlines() if _uses(line, variable)]
    return bool(uses) and all(_HOST_BINARY.search(line) for line in uses)


def _uses(line: str, variable: str) -> bool:
    return re.search(r"\{\{[^}]*\b" + re.escape(variable) + r"\b[^}]*\}\}", line) is not None


def _task_texts(role: str) -> list[str]:
    """The role's task files: regular files in its tasks/ folder, none through a symbolic link (nothing
    outside the role is read)."""
    folder = os.path.join(role, "tasks")
    if not os.path.isdir(folder) or os.path.islink(folder) or not inside(folder, os.path.realpath(role)):
        return []
    texts: list[str] = []
    for top, folders, files in os.walk(folder):
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(top, f))]
        for name in sorted(files):
            path = os.path.join(top, name)
            if not name.endswith((".yml", ".yaml")) or os.path.islink(path) or len(texts) >= _MAX_TASK_FILES:
                continue
            try:
                if os.stat(path).st_size > _MAX_TASK_BYTES:
                    continue
            except OSError:
                continue
            text, problem = read_file(path)
            if problem is None and text is not None:
                texts.append(text)
    return texts
