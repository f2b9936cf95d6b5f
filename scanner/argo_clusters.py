"""The clusters an Argo CD repository deploys to: one per destination of its Applications.

An Argo CD fleet keeps the Applications of every cluster in one repository (an app-of-apps per
cluster, or an ApplicationSet whose generator lists the clusters). Applications whose
`spec.destination` (`name` or `server`) differ deploy to different clusters; the folders of this
repository their sources name (`spec.source.path`, `spec.sources[].path`) are what that cluster
deploys. ApplicationSets are read where their generator can be read from the tree alone: `list`
elements, `clusters` (the cluster Secrets the tree holds), `git` directories (the tree's folders), and
a `matrix` of two of these; a template whose values need anything else is not read.

`https://kubernetes.default.svc` and `in-cluster` are one destination, the cluster Argo CD runs in;
it is a cluster of the fleet only when what it deploys holds more than Argo CD's own objects (the
hub of a hub-and-spoke fleet holding only the spokes' Applications is not upgraded with them).
"""

from __future__ import annotations

import os
from typing import Sequence
from urllib.parse import urlsplit

from scanner.clusters import Cluster, named_apart, shown
from scanner.containment import repository_root, within
from scanner.model import Manifest
from scanner.sources.argo import GROUP, folder_of, source_paths
from scanner.sources.reach.appsets import (IN_CLUSTER, IN_CLUSTER_SERVERS as _IN_CLUSTER_SERVERS, application_specs,
                                           is_cluster_secret as _is_cluster_secret, mapping as _mapping,
                                           secret_fields as _secret_fields)

_ARGO = GROUP


def argo_clusters(manifests: Sequence[Manifest], scanned: Sequence[str]) -> list[Cluster]:
    """One cluster per destination of the Applications under `scanned`, when there are two or more."""
    if not scanned or "-" in scanned:
        return []
    top = repository_root(scanned[0], list(scanned))
    deployed, files = destinations(manifests, top)
    deployed = {d: folders for d, folders in deployed.items() if folders}  # nothing of this repository
    hub = deployed.get(IN_CLUSTER)
    if hub is not None and not _deploys_workloads(list(hub), manifests):
        del deployed[IN_CLUSTER]
    if len(deployed) < 2:
        return []
    clusters = []
    for destination, folders in sorted(deployed.items()):
        kept = [f for f in folders if not any(f != other and within(f, other) for other in folders)]
        declared = sorted(set(files[destination]))
        clusters.append(Cluster(_name(destination), tuple(shown(f, top) for f in kept),
                                f"the Argo CD Applications whose destination is {destination} "
                                f"({', '.join(shown(p, top) for p in declared[:3])}"
                                f"{', …' if len(declared) > 3 else ''})"))
    return named_apart(clusters)


def destinations(manifests: Sequence[Manifest], top: str) -> tuple[dict[str, dict[str, None]], dict[str, list[str]]]:
    """destination -> the real folders its Applications deploy (in the order read), and -> the files of
    those Applications."""
    deployed: dict[str, dict[str, None]] = {}
    files: dict[str, list[str]] = {}
    applications = [m for m in manifests if m.group == _ARGO and m.kind in ("Application", "ApplicationSet")]
    if not applications:  # a Secret's labels are read from its file again: only where they can matter
        return deployed, files
    secrets = [m for m in manifests if m.kind == "Secret" and m.group == "" and _is_cluster_secret(m)]
    names = _server_names(secrets)
    for manifest in applications:
        specs = [_mapping(manifest.body.get("spec"))] if manifest.kind == "Application" else \
            application_specs(manifest, secrets, top).specs
        for spec in specs:
            destination = _destination(_mapping(spec.get("destination")), names)
            if destination is None:
                continue
            folder = os.path.dirname(manifest.origin.path) or "."
            deployed.setdefault(destination, {})
            for path, readable in source_paths(spec):
                real = folder_of(path, folder, top) if readable else None
                if real is not None:
                    deployed[destination][real] = None
            files.setdefault(destination, []).append(manifest.origin.path)
    return deployed, files


def _server_names(secrets: Sequence[Manifest]) -> dict[str, str]:
    """server URL -> the name its cluster Secret gives it: one cluster, whichever the Application names."""
    found = {}
    for secret in secrets:
        fields = _secret_fields(secret)
        if isinstance(fields["name"], str) and isinstance(fields["server"], str):
            found[fields["server"].rstrip("/")] = fields["name"]
    return found


def _destination(destination: dict, names: dict[str, str]) -> str | None:
    """The cluster a destination names (`in-cluster` for the one Argo CD runs in), or None when the
    value is not plain text (a template left unread)."""
    name, server = destination.get("name"), destination.get("server")
    value = name if isinstance(name, str) and name else server if isinstance(server, str) and server else None
    if value is None or "{{" in value or "$" in value:
        return None
    if value is server:
        value = value.rstrip("/")
        if value in _IN_CLUSTER_SERVERS:
            return IN_CLUSTER
        return names.get(value, value)
    return value


def _name(destination: str) -> str:
    """A cluster's name from its destination: the name, or the host of a server URL."""
    if "://" in destination:
        host = urlsplit(destination).hostname
        return host or destination
    return destination


def _deploys_workloads(folders: Sequence[str], manifests: Sequence[Manifest]) -> bool:
    """Do the folders hold an object that is not Argo CD's own (an Application, an AppProject)?"""
    for manifest in manifests:
        if manifest.group in (_ARGO, "kustomize.config.k8s.io") or \
                (manifest.kind == "Secret" and manifest.group == "" and _is_cluster_secret(manifest)):
            continue
        real = os.path.realpath(manifest.origin.path)
        if any(within(real, folder) for folder in folders):
            return True
    return False
