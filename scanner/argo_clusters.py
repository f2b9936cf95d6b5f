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
import re
from typing import Any, Iterator, Sequence
from urllib.parse import urlsplit

from scanner.clusters import Cluster, named_apart, shown
from scanner.containment import repository_root, within
from scanner.model import Manifest
from scanner.sources.argo import GROUP, folder_of, source_paths

_ARGO = GROUP
IN_CLUSTER = "in-cluster"
_IN_CLUSTER_SERVERS = ("https://kubernetes.default.svc", "https://kubernetes.default.svc:443")
_CLUSTER_SECRET = "argocd.argoproj.io/secret-type"
_PLACEHOLDER = re.compile(r"\{\{-?\s*\.?([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*-?\}\}")
_MAX_ELEMENTS = 1000  # a generator's parameter sets read, at most: a matrix multiplies them


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
            list(_application_specs(manifest, secrets, top))
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


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _is_cluster_secret(secret: Manifest) -> bool:
    labels = _mapping(_mapping(secret.body.get("metadata")).get("labels"))
    return labels.get(_CLUSTER_SECRET) == "cluster"


def _secret_fields(secret: Manifest) -> dict:
    """What Argo CD reads of a cluster Secret: `name`, `server` (stringData; data is base64, not read),
    its labels and annotations, as a `clusters` generator offers them."""
    data = _mapping(secret.body.get("stringData"))
    metadata = _mapping(secret.body.get("metadata"))
    return {"name": data.get("name"), "server": data.get("server"), "nameNormalized": data.get("name"),
            "metadata": {"labels": _mapping(metadata.get("labels")),
                         "annotations": _mapping(metadata.get("annotations"))}}


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


def _application_specs(appset: Manifest, secrets: Sequence[Manifest], top: str) -> Iterator[dict]:
    """The Application specs an ApplicationSet makes, each parameter set of its generators put into its
    template; those whose destination or paths need what the tree does not say are left out."""
    spec = _mapping(appset.body.get("spec"))
    template = _mapping(_mapping(spec.get("template")).get("spec"))
    if not template:
        return
    for generator in spec.get("generators") if isinstance(spec.get("generators"), list) else []:
        for params in _parameters(_mapping(generator), secrets, top, depth=0)[:_MAX_ELEMENTS]:
            filled = _filled(template, params)
            if filled is not None:
                yield filled


def _parameters(generator: dict, secrets: Sequence[Manifest], top: str, depth: int) -> list[dict]:
    """The parameter sets of one generator, as far as the tree says them (else none)."""
    if isinstance(generator.get("list"), dict):
        elements = generator["list"].get("elements")
        return [e for e in elements if isinstance(e, dict)] if isinstance(elements, list) else []
    if isinstance(generator.get("clusters"), dict):
        return _cluster_parameters(generator["clusters"], secrets)
    if isinstance(generator.get("git"), dict):
        return _git_directories(generator["git"], top)
    matrix = generator.get("matrix")
    if isinstance(matrix, dict) and isinstance(matrix.get("generators"), list) and depth < 2:
        children = [_parameters(_mapping(g), secrets, top, depth + 1) for g in matrix["generators"]]
        if len(children) != 2:
            return []
        return [_merged(a, b) for a in children[0] for b in children[1]][:_MAX_ELEMENTS]
    return []


def _cluster_parameters(generator: dict, secrets: Sequence[Manifest]) -> list[dict]:
    """A `clusters` generator: the cluster Secrets of the tree its selector's matchLabels select (with
    no selector, also the cluster Argo CD runs in); its `values` as `values.KEY`."""
    selector = _mapping(generator.get("selector"))
    if set(selector) - {"matchLabels"}:
        return []  # matchExpressions: not read
    wanted = _mapping(selector.get("matchLabels"))
    values = _mapping(generator.get("values"))
    found = []
    for secret in secrets:
        fields = _secret_fields(secret)
        labels = fields["metadata"]["labels"]
        if all(labels.get(k) == v for k, v in wanted.items()):
            found.append({**fields, "values": values})
    if not selector and not any(f["server"] in _IN_CLUSTER_SERVERS for f in found):
        found.append({"name": IN_CLUSTER, "server": _IN_CLUSTER_SERVERS[0], "nameNormalized": IN_CLUSTER,
                      "metadata": {"labels": {}, "annotations": {}}, "values": values})
    return found


def _git_directories(generator: dict, top: str) -> list[dict]:
    """A `git` generator's `directories` in this repository's folders (files generators: not read)."""
    directories = generator.get("directories")
    entries = [d for d in directories if isinstance(d, dict)] if isinstance(directories, list) else []
    include = [d["path"] for d in entries if isinstance(d.get("path"), str) and not d.get("exclude")]
    exclude = [d["path"] for d in entries if isinstance(d.get("path"), str) and d.get("exclude")]
    if not include:
        return []
    from scanner.sources.files.walk import SKIPPED_DIRS

    found = []
    for folder, names, _ in os.walk(top):
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS and not n.startswith("."))
        relative = os.path.relpath(folder, top).replace(os.sep, "/")
        if relative == "." or not any(_matches(relative, p) for p in include) \
                or any(_matches(relative, p) for p in exclude):
            continue
        parts = relative.split("/")
        found.append({"path": {"path": relative, "basename": parts[-1], "basenameNormalized": parts[-1],
                               "segments": parts}})
        if len(found) >= _MAX_ELEMENTS:
            break
    return found


def _matches(folder: str, pattern: str) -> bool:
    """Argo CD's directory patterns: `*` and `?` within one path segment, `**` across them."""
    parts = re.split(r"(\*\*|\*|\?)", pattern.strip("/"))
    wildcards = {"**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.fullmatch("".join(wildcards.get(p, re.escape(p)) for p in parts), folder) is not None


def _merged(first: dict, second: dict) -> dict:
    return {**first, **second}


def _filled(template: Any, params: dict) -> Any:
    """`template` with every `{{key}}` / `{{ .key }}` replaced by its parameter; None when one names a
    parameter the set does not have, or uses what a template language does beyond naming one."""
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            filled = _filled(value, params)
            if filled is None and value is not None:
                return None
            out[key] = filled
        return out
    if isinstance(template, list):
        items = [_filled(v, params) for v in template]
        return None if any(i is None and v is not None for i, v in zip(items, template)) else items
    if not isinstance(template, str) or "{{" not in template:
        return template
    missing = False

    def value(match: re.Match) -> str:
        nonlocal missing
        found = _lookup(params, match.group(1))
        if found is None:
            missing = True
            return ""
        return found

    text = _PLACEHOLDER.sub(value, template)
    return None if missing or "{{" in text else text


def _lookup(params: dict, key: str) -> str | None:
    """A parameter by its dotted name (`path.basename`, `metadata.labels.env`); a git directory's
    `path` is its path."""
    if key in params and not isinstance(params[key], dict):
        return str(params[key]) if isinstance(params[key], (str, int)) else None
    value: Any = params
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, dict):
        value = value.get("path")
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
