"""The Applications an Argo CD ApplicationSet makes, as far as the tree says them.

Its generators are read where the tree alone says their parameter sets: `list` elements, `clusters`
(the cluster Secrets the tree holds), `git` directories (the tree's folders), a `matrix` of two of
these and a `merge` of them (a base set overridden by the later generators' sets whose mergeKeys
match); each set is put into the template. A generator of any other kind, a selector by expressions,
a template naming a parameter the set lacks, or a `templatePatch` leaves the expansion incomplete:
what the ApplicationSet deploys is then more than the specs read (Expansion.complete).

What a template's chart pins (components.detect) needs only the parameters the ApplicationSet itself
writes: `parameter_sets` reads each generator loosely, a `clusters` generator whose clusters the tree
does not list as its `values` alone (they are the same for every cluster it selects), any other as a
set the tree says nothing of, and a merge whose keys are unknown as every override that may match.
Each value it writes is an `At`, which knows where in the object it is set.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from scanner.model import Manifest

IN_CLUSTER = "in-cluster"
IN_CLUSTER_SERVERS = ("https://kubernetes.default.svc", "https://kubernetes.default.svc:443")
_CLUSTER_SECRET = "argocd.argoproj.io/secret-type"
_PLACEHOLDER = re.compile(r"\{\{-?\s*\.?([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*-?\}\}")
_EXPRESSION = re.compile(r"\{\{.*?\}\}")
_MAX_ELEMENTS = 1000  # a generator's parameter sets read, at most: a matrix multiplies them


class At(str):
    """A parameter's value as the tree writes it, with its key path in the object that holds it: the
    ApplicationSet (spec, generators, 0, merge, generators, 1, clusters, values, addonChartVersion), or
    `owner`, a cluster Secret (metadata, annotations, cert_manager_version)."""

    path: tuple
    owner: Manifest | None

    def __new__(cls, value: str, path: tuple, owner: Manifest | None = None) -> "At":
        made = super().__new__(cls, value)
        made.path, made.owner = path, owner
        return made


@dataclass
class Expansion:
    specs: list[dict] = field(default_factory=list)  # the Application specs read
    complete: bool = True  # False: it may make Applications the tree does not say


@dataclass
class _Reading:
    secrets: Sequence[Manifest]
    top: str | None  # the tree's top folder (git directories); None: not read
    found: Expansion
    loose: bool = False  # parameter_sets: what the ApplicationSet writes, the rest unknown


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
    reading = _Reading(secrets, top, found)
    for number, generator in enumerate(generators if isinstance(generators, list) else []):
        params = _parameters(mapping(generator), reading, 0, ("spec", "generators", number))
        if len(params) > _MAX_ELEMENTS:
            found.complete = False
        for one in params[:_MAX_ELEMENTS]:
            filled = _filled(template, one)
            if filled is None:
                found.complete = False
            else:
                found.specs.append(filled)
    return found


def parameter_sets(appset: Manifest, secrets: Sequence[Manifest]) -> list[dict]:
    """Every parameter set the ApplicationSet's generators may give, as far as it writes them itself
    (read loosely: a parameter of a cluster the tree does not list, or of a generator that asks an
    outside service, is absent). At most _MAX_ELEMENTS sets."""
    spec = mapping(appset.body.get("spec"))
    generators = spec.get("generators")
    reading = _Reading(secrets, None, Expansion(), loose=True)
    found: list[dict] = []
    for number, generator in enumerate(generators if isinstance(generators, list) else []):
        found.extend(_parameters(mapping(generator), reading, 0, ("spec", "generators", number)))
    return found[:_MAX_ELEMENTS]


def _written(value: Any, path: tuple, owner: Manifest | None = None) -> Any:
    """A value the tree writes, each text (or number) in it an At of its path."""
    if isinstance(value, dict):
        return {k: _written(v, (*path, k), owner) for k, v in value.items()}
    if isinstance(value, list):
        return [_written(v, (*path, i), owner) for i, v in enumerate(value)]
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return At(str(value), path, owner)
    return value


def _parameters(generator: dict, reading: _Reading, depth: int, path: tuple) -> list[dict]:
    """The parameter sets of one generator, as far as the tree says them (else none, and the reading
    is told it is incomplete; read loosely, one set of nothing known)."""
    unknown = [{}] if reading.loose else []
    if isinstance(generator.get("list"), dict):
        elements = generator["list"].get("elements")
        if generator["list"].get("elementsYaml") is not None:
            reading.found.complete = False
        return [_written(e, (*path, "list", "elements", i)) for i, e in enumerate(elements)
                if isinstance(e, dict)] if isinstance(elements, list) else unknown
    if isinstance(generator.get("clusters"), dict):
        return _cluster_parameters(generator["clusters"], reading, (*path, "clusters"))
    if isinstance(generator.get("git"), dict) and reading.top is not None:
        return _git_directories(generator["git"], reading.top, reading.found)
    nested = next((k for k in ("matrix", "merge") if isinstance(generator.get(k), dict)), None)
    children = mapping(generator.get(nested)).get("generators") if nested else None
    if isinstance(children, list) and depth < 2:
        sets = [_parameters(mapping(g), reading, depth + 1, (*path, nested, "generators", i))
                for i, g in enumerate(children)]
        if nested == "matrix" and len(sets) == 2:
            return list(itertools.islice((_merged(a, b) for a in sets[0] for b in sets[1]), _MAX_ELEMENTS + 1))
        if nested == "merge" and sets:
            keys = generator["merge"].get("mergeKeys")
            return _merge(sets, [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else [],
                          reading)
    reading.found.complete = False
    return unknown


def _cluster_parameters(generator: dict, reading: _Reading, path: tuple) -> list[dict]:
    """A `clusters` generator: the cluster Secrets of the tree its selector's matchLabels select (with
    no selector, also the cluster Argo CD runs in); its `values` as `values.KEY`. Read loosely, when
    the tree lists none of its clusters: one set of its `values` alone."""
    selector = mapping(generator.get("selector"))
    values = _written(mapping(generator.get("values")), (*path, "values"))
    if set(selector) - {"matchLabels"}:
        reading.found.complete = False
        return [{"values": values}] if reading.loose else []  # matchExpressions: not read
    wanted = mapping(selector.get("matchLabels"))
    chosen = []
    for secret in reading.secrets:
        fields = secret_fields(secret)
        labels = fields["metadata"]["labels"]
        if all(labels.get(k) == v for k, v in wanted.items()):
            name = _written(fields["name"], ("stringData", "name"), secret)
            chosen.append({"name": name, "server": _written(fields["server"], ("stringData", "server"), secret),
                           "nameNormalized": name, "metadata": _written(fields["metadata"], ("metadata",), secret),
                           "values": values})
    if reading.loose:
        return chosen or [{"values": values}]
    if not selector and not any(f["server"] in IN_CLUSTER_SERVERS for f in chosen):
        chosen.append({"name": IN_CLUSTER, "server": IN_CLUSTER_SERVERS[0], "nameNormalized": IN_CLUSTER,
                       "metadata": {"labels": {}, "annotations": {}}, "values": values})
    return chosen


def _merge(sets: list[list[dict]], keys: list[str], reading: _Reading) -> list[dict]:
    """Argo CD's merge: each set of the first generator, overridden in turn by the later generators' set
    whose mergeKeys have its values (the others are dropped). Read loosely, an override whose keys are
    not known may match or not: the set is kept as it is and with each such override alone over it."""
    if len(sets) < 2 or not keys:
        reading.found.complete = False  # Argo CD makes nothing of it (two generators and a key are required)
        return []
    results: list[dict] = []
    budget = _MAX_ELEMENTS * 10  # comparisons of a base set with an override, at most (hostile input)
    for base in sets[0]:
        merged, maybe = base, []
        for overrides in sets[1:]:
            budget -= len(overrides)
            matches = [(o, _same(base, o, keys, reading.loose)) for o in overrides] if budget >= 0 else []
            sure = next((o for o, same in matches if same is True), None)
            merged = _merged(merged, sure) if sure is not None else merged
            maybe.extend(o for o, same in matches if same is None)
        results.append(merged)
        results.extend(_merged(merged, o) for o in maybe)
        if budget < 0 or len(results) > _MAX_ELEMENTS:
            reading.found.complete = False
            break
    return results[:_MAX_ELEMENTS + 1]


def _same(base: dict, override: dict, keys: list[str], loose: bool) -> bool | None:
    """Do two sets have the same mergeKeys values? None: not known (read loosely, one lacks a key)."""
    for key in keys:
        mine, theirs = _value(base, key), _value(override, key)
        if (mine is None or theirs is None) and loose:
            return None
        if mine != theirs:
            return False
    return True


def _merged(base: dict, override: dict) -> dict:
    """`base` with `override`'s parameters over it, key by key within nested parameters (`values.*`)."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merged(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


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


@dataclass(frozen=True)
class Text:
    """One text of a template with a parameter set put in."""

    text: str | None  # None: it names a parameter the set does not have
    at: At | None = None  # the value put in, where the tree writes it (the last one, if several)
    unfilled: str | None = None  # the parameter (or template expression) the set does not fill


def fill_text(text: str, params: dict, depth: int = 0) -> Text:
    """`text` with every `{{key}}` / `{{ .key }}` replaced by its parameter (a value that is itself a
    template, as a `clusters` generator's values may be, filled in from the same set)."""
    if "{{" not in text:
        return Text(text)
    at: At | None = None
    unfilled: str | None = None

    def value(match: re.Match) -> str:
        nonlocal at, unfilled
        found = _value(params, match.group(1))
        if found is None or (depth and "{{" in str(found)):
            unfilled = unfilled or match.group(1)
            return match.group(0)
        at = found if isinstance(found, At) else at
        if "{{" not in str(found):
            return str(found)
        inner = fill_text(str(found), params, depth + 1)
        unfilled = unfilled or inner.unfilled
        return inner.text or match.group(0)

    filled = _PLACEHOLDER.sub(value, text)
    if unfilled is None and "{{" in filled:  # a template function: not evaluated
        expression = _EXPRESSION.search(filled)
        unfilled = expression.group(0) if expression else filled
    return Text(None, at, unfilled) if unfilled is not None else Text(filled, at)


def _lookup(params: dict, key: str) -> str | None:
    found = _value(params, key)
    return None if found is None else str(found)


def _value(params: dict, key: str) -> Any:
    """A parameter by its dotted name (`path.basename`, `metadata.labels.env`), as the set holds it (an
    At where the ApplicationSet writes it); a git directory's `path` is its path."""
    if key in params and not isinstance(params[key], dict):
        return params[key] if isinstance(params[key], (str, int)) and not isinstance(params[key], bool) else None
    value: Any = params
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, dict):
        value = value.get("path")
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None
