"""The Applications an Argo CD ApplicationSet makes, as far as the tree says them.

Its generators are read where the tree alone says their parameter sets: `list` elements, `clusters`
(the cluster Secrets the tree holds), `git` directories (the tree's folders), and a `matrix` of two
of these; each set is put into the template. A generator of any other kind, a selector by expressions,
a template naming a parameter the set lacks, or a `templatePatch` leaves the expansion incomplete:
what the ApplicationSet deploys is then more than the specs read (Expansion.complete).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from scanner.model import Manifest

IN_CLUSTER = "in-cluster"
IN_CLUSTER_SERVERS = ("https://kubernetes.default.svc", "https://kubernetes.default.svc:443")
_CLUSTER_SECRET = "argocd.argoproj.io/secret-type"
_PLACEHOLDER = re.compile(r"\{\{-?\s*\.?([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*-?\}\}")
_MAX_ELEMENTS = 1000  # a generator's parameter sets read, at most: a matrix multiplies them


@dataclass
class Expansion:
    specs: list[dict] = field(default_factory=list)  # the Application specs read
    complete: bool = True  # False: it may make Applications the tree does not say


def mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def is_cluster_secret(secret: Manifest) -> bool:
    labels = mapping(mapping(secret.body.get("metadata")).get("labels"))
    return labels.get(_CLUSTER_SECRET) == "cluster"


def secret_fields(secret: Manifest) -> dict:
    """What Argo CD reads of a cluster Secret: `name`, `server` (stringData; data is base64, not read),
    its labels and annotations, as a `clusters` generator offers them."""
    data = mapping(secret.body.get("stringData"))
    metadata = mapping(secret.body.get("metadata"))
    return {"name": data.get("name"), "server": data.get("server"), "nameNormalized": data.get("name"),
            "metadata": {"labels": mapping(metadata.get("labels")),
                         "annotations": mapping(metadata.get("annotations"))}}


def application_specs(appset: Manifest, secrets: Sequence[Manifest], top: str) -> Expansion:
    """The Application specs an ApplicationSet makes, each parameter set of its generators put into its
    template; those whose destination or paths need what the tree does not say are left out."""
    found = Expansion()
    spec = mapping(appset.body.get("spec"))
    template = mapping(mapping(spec.get("template")).get("spec"))
    generators = spec.get("generators")
    if not template or not isinstance(generators, list) or spec.get("templatePatch"):
        found.complete = False
        if not template:
            return found
    for generator in generators if isinstance(generators, list) else []:
        params = _parameters(mapping(generator), secrets, top, 0, found)
        if len(params) > _MAX_ELEMENTS:
            found.complete = False
        for one in params[:_MAX_ELEMENTS]:
            filled = _filled(template, one)
            if filled is None:
                found.complete = False
            else:
                found.specs.append(filled)
    return found


def _parameters(generator: dict, secrets: Sequence[Manifest], top: str, depth: int, found: Expansion) -> list[dict]:
    """The parameter sets of one generator, as far as the tree says them (else none, and `found` is
    told it is incomplete)."""
    if isinstance(generator.get("list"), dict):
        elements = generator["list"].get("elements")
        if generator["list"].get("elementsYaml") is not None:
            found.complete = False
        return [e for e in elements if isinstance(e, dict)] if isinstance(elements, list) else []
    if isinstance(generator.get("clusters"), dict):
        return _cluster_parameters(generator["clusters"], secrets, found)
    if isinstance(generator.get("git"), dict):
        return _git_directories(generator["git"], top, found)
    matrix = generator.get("matrix")
    if isinstance(matrix, dict) and isinstance(matrix.get("generators"), list) and depth < 2:
        children = [_parameters(mapping(g), secrets, top, depth + 1, found) for g in matrix["generators"]]
        if len(children) == 2:
            return [{**a, **b} for a in children[0] for b in children[1]][:_MAX_ELEMENTS + 1]
    found.complete = False
    return []


def _cluster_parameters(generator: dict, secrets: Sequence[Manifest], found: Expansion) -> list[dict]:
    """A `clusters` generator: the cluster Secrets of the tree its selector's matchLabels select (with
    no selector, also the cluster Argo CD runs in); its `values` as `values.KEY`."""
    selector = mapping(generator.get("selector"))
    if set(selector) - {"matchLabels"}:
        found.complete = False
        return []  # matchExpressions: not read
    wanted = mapping(selector.get("matchLabels"))
    values = mapping(generator.get("values"))
    chosen = []
    for secret in secrets:
        fields = secret_fields(secret)
        labels = fields["metadata"]["labels"]
        if all(labels.get(k) == v for k, v in wanted.items()):
            chosen.append({**fields, "values": values})
    if not selector and not any(f["server"] in IN_CLUSTER_SERVERS for f in chosen):
        chosen.append({"name": IN_CLUSTER, "server": IN_CLUSTER_SERVERS[0], "nameNormalized": IN_CLUSTER,
                       "metadata": {"labels": {}, "annotations": {}}, "values": values})
    return chosen


def _git_directories(generator: dict, top: str, found: Expansion) -> list[dict]:
    """A `git` generator's `directories` in this repository's folders (files generators: not read)."""
    directories = generator.get("directories")
    entries = [d for d in directories if isinstance(d, dict)] if isinstance(directories, list) else []
    include = [d["path"] for d in entries if isinstance(d.get("path"), str) and not d.get("exclude")]
    exclude = [d["path"] for d in entries if isinstance(d.get("path"), str) and d.get("exclude")]
    if not include or generator.get("files") is not None:
        found.complete = False
        if not include:
            return []
    from scanner.sources.files.walk import SKIPPED_DIRS

    chosen = []
    for folder, names, _ in os.walk(top):
        names[:] = sorted(n for n in names if n not in SKIPPED_DIRS and not n.startswith("."))
        relative = os.path.relpath(folder, top).replace(os.sep, "/")
        if relative == "." or not any(_matches(relative, p) for p in include) \
                or any(_matches(relative, p) for p in exclude):
            continue
        parts = relative.split("/")
        chosen.append({"path": {"path": relative, "basename": parts[-1], "basenameNormalized": parts[-1],
                                "segments": parts}})
        if len(chosen) > _MAX_ELEMENTS:
            break
    return chosen


def _matches(folder: str, pattern: str) -> bool:
    """Argo CD's directory patterns: `*` and `?` within one path segment, `**` across them."""
    parts = re.split(r"(\*\*|\*|\?)", pattern.strip("/"))
    wildcards = {"**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.fullmatch("".join(wildcards.get(p, re.escape(p)) for p in parts), folder) is not None


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
