"""The minor the cluster runs today: one answer for every command, and where it was read.

Precedence, the first that gives a minor winning:
1. the user's word: `--from`, else `from:` in the configuration;
2. the cluster's own word: `--cluster-version-file` (`kubectl version -o json`), else the API server
   version in a `--cluster-state` dump;
3. the tree's upgrade orders (system-upgrade Plans, ...): the oldest cluster they move, as a node
   upgrades one minor at a time;
4. the tree's version variables (Ansible vars, talhelper's talconfig.yaml): the oldest, where an
   Ansible role's default gives way to the same variable set anywhere else (Ansible's own precedence).
With none of these the current minor is unknown: `scan` reports without one, `plan` needs one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.paths import where
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.cluster_state import ClusterState
    from scanner.options import ScanOptions
    from scanner.components.pins import ClusterPin

# Where the current minor was read, as the reports name it (JSON `from_source`).
FLAG, CONFIGURATION, VERSION_FILE, CLUSTER = "flag", "configuration", "version-file", "cluster-state"
ORDERS, VARIABLES = "upgrade-orders", "version-variables"


@dataclass(frozen=True)
class CurrentMinor:
    """The minor the cluster runs today, and who said it (a flag, the configuration, the tree, a dump)."""

    minor: Minor | None
    source: str | None = None  # one of the constants above; None: nothing said
    pin: ClusterPin | None = None  # the pin it was read from, when the tree or a dump gave it
    said_by: str = ""  # where, for a person: "--from", ".kubehop.yaml", "k3s_version at group_vars/all.yml:3"
    notices: tuple[str, ...] = ()

    @property
    def from_tree(self) -> bool:
        """Read from the tree itself: its upgrade orders must not be judged against their own reading."""
        return self.source in (ORDERS, VARIABLES)


def given_by(options: ScanOptions) -> str:
    """How a person names what gave the current minor the user gave: the flag, or the configuration file."""
    if options.from_source == CONFIGURATION and options.configuration:
        return f"from: in {options.configuration}"
    return "--from"


def resolve_current(target: Minor, given: Minor | None = None, given_by: str = "--from",
                    version_file: ClusterPin | None = None, cluster: ClusterState | None = None,
                    pins: Sequence[ClusterPin] = ()) -> CurrentMinor:
    """The current minor by the precedence above; `given_by` names the flag or the configuration file,
    `pins` are the tree's (scanner.components.tree.TreeComponents.cluster)."""
    server = _server(version_file, cluster)
    if given is not None:
        notices = ()
        if server is not None and server.minor != given:
            skew = "; node skew is checked from the dump" if server.pin is None else ""
            notices = (f"{given_by} {given} differs from the API server in {server.name} ({server.minor}){skew}",)
        source = FLAG if given_by == "--from" else CONFIGURATION
        return CurrentMinor(given, source, None, given_by, notices)
    if server is not None:
        if server.minor > target:
            return CurrentMinor(None, notices=(f"the API server in {server.name} ({server.minor}) is newer than "
                                               f"--target {target}",))
        said_by = f"{server.name} ({server.detail})"
        source = CLUSTER if server.pin is None else VERSION_FILE
        return CurrentMinor(server.minor, source, server.pin, said_by, (f"--from {server.minor} taken from {said_by}",))
    orders = [p for p in pins if not p.is_variable]
    variables = _overriding(p for p in pins if p.is_variable)
    for source, found, what in ((ORDERS, orders, "the tree's upgrade orders"),
                                (VARIABLES, variables, "the tree's version variables")):
        if not found:
            continue
        pin = min(found, key=lambda p: (p.minor, p.origin.path, p.origin.line or 0))
        said_by = f"{pin.what} {pin.version} at {where(pin.origin.path, pin.origin.line)}"
        if pin.minor > target:
            return CurrentMinor(None, notices=(f"{what} put the cluster at {pin.minor} ({said_by}), past "
                                               f"--target {target}",))
        return CurrentMinor(pin.minor, source, pin, said_by, (f"--from {pin.minor} taken from {what}: {said_by}",))
    return CurrentMinor(None)


@dataclass(frozen=True)
class _Server:
    """An API server's version, as a dump or a --cluster-version-file gives it."""

    minor: Minor
    name: str  # where its version was read
    detail: str
    pin: ClusterPin | None  # None: a --cluster-state dump


def _server(version_file: ClusterPin | None, cluster: ClusterState | None) -> _Server | None:
    if version_file is not None:
        return _Server(version_file.minor, where(version_file.origin.path, version_file.origin.line),
                       f"serverVersion {version_file.version}", version_file)
    if cluster is not None and cluster.server is not None:
        return _Server(cluster.server, "the cluster dump", f"API server {cluster.server_version}", None)
    return None


def _overriding(pins: Iterable[ClusterPin]) -> list[ClusterPin]:
    """The variable pins Ansible would use: a role's default (roles/NAME/defaults/) is dropped where
    the same variable is set in any other file."""
    pins = list(pins)
    set_elsewhere = {p.what for p in pins if not _role_default(p.origin.path)}
    return [p for p in pins if not (_role_default(p.origin.path) and p.what in set_elsewhere)]


def _role_default(path: str) -> bool:
    parts = os.path.normpath(path).split(os.sep)
    return any(parts[i] == "roles" and parts[i + 2] == "defaults" for i in range(len(parts) - 2))
