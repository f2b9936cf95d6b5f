"""Where a Flux Kustomization's post-build variables come from, as the tree holds them: ConfigMaps and
Secrets (`substituteFrom`), those a kustomize configMapGenerator or secretGenerator makes under a fixed
name (`disableNameSuffixHash`: a hashed name is not the one `substituteFrom` names), and the inline
`substitute` map. Each value is kept with the line a person edits to change it.

As kustomize-controller reads them (fluxcd/pkg kustomize/kustomize_varsub.go): a ConfigMap's `data`, a
Secret's `data` (base64) and `stringData`, a value's line breaks dropped; a key that is no variable name
(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`) fails the whole substitution. A SOPS-encrypted Secret names its
keys in the clear: they are known to be set, their values (`ENC[...]`) are not. A value that is no string
is one the API server refuses (ConfigMap data is strings; so is `substitute`): its source is unusable.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.containment import leaves
from scanner.model import Manifest, Origin
from scanner.nodes import STD_TAG, mapping_get, value_at
from scanner.sources.files.walk import read_file
from scanner.sources.postbuild.envsubst import MAX_TEXT, UNKNOWN, Set, Value, has_expression

VARIABLE_NAME = re.compile(r"^[_A-Za-z][_A-Za-z0-9]*$")
_ENCRYPTED = "ENC["
_GENERATORS = {"configMapGenerator": "ConfigMap", "secretGenerator": "Secret"}


@dataclass
class Source:
    """One ConfigMap or Secret the tree holds: its variables, and why Flux could not use it, if so."""

    kind: str
    name: str
    namespace: str | None  # None: the file does not say (a kustomization's `namespace` may)
    where: str  # "ConfigMap flux-system/x (clusters/a/vars.yaml:3)", for notices
    values: dict[str, Value] = field(default_factory=dict)
    problem: str | None = None


def read_object(manifest: Manifest) -> Source | None:
    """A ConfigMap or Secret object read from the tree, as a source of variables."""
    if manifest.group != "" or manifest.kind not in ("ConfigMap", "Secret") or not manifest.name:
        return None
    node = manifest.node
    source = Source(manifest.kind, manifest.name, manifest.namespace,
                    f"{manifest.object_ref} ({manifest.origin.path}:{manifest.origin.line})")
    encrypted = mapping_get(node, "sops") is not None
    fields = ("data",) if manifest.kind == "ConfigMap" else ("data", "stringData")
    for name in fields:
        entries = mapping_get(node, name)
        if entries is None or _null(entries):
            continue
        if not isinstance(entries, MappingNode):
            source.problem = f"its {name} is not a mapping"
            return source
        for key, value in entries.value:
            if not isinstance(key, ScalarNode) or not (isinstance(value, ScalarNode)):
                source.problem = f"{name} holds a value that is not a string"
                return source
            if not _string(value):
                source.problem = f"{name}.{key.value} is {value.value!r}, not a string (the API server refuses it)"
                return source
            text = "" if _null(value) else value.value
            if encrypted and text.startswith(_ENCRYPTED):
                source.values[key.value] = UNKNOWN  # SOPS: set, to a value kubehop cannot read
                continue
            if name == "data" and manifest.kind == "Secret":
                try:
                    text = base64.b64decode(text, validate=True).decode("utf-8")
                except (binascii.Error, ValueError):
                    source.values[key.value] = UNKNOWN
                    continue
            source.values[key.value] = _value(text, manifest.origin_at(value))
    return source


def read_inline(manifest: Manifest) -> tuple[dict[str, Value], str | None]:
    """A Flux Kustomization's `spec.postBuild.substitute`, and why the API server would refuse it."""
    entries = value_at(manifest.node, "spec", "postBuild", "substitute")
    found: dict[str, Value] = {}
    if entries is None or _null(entries):
        return found, None
    if not isinstance(entries, MappingNode):
        return found, "spec.postBuild.substitute is not a mapping"
    for key, value in entries.value:
        if not isinstance(key, ScalarNode) or not isinstance(value, ScalarNode) or not _string(value):
            shown = key.value if isinstance(key, ScalarNode) else "?"
            return found, f"spec.postBuild.substitute.{shown} is not a string (the API server refuses it)"
        found[key.value] = _value("" if _null(value) else value.value, manifest.origin_at(value))
    return found, None


def read_generators(path: str, document: dict, node: Any, top: str) -> list[Source]:
    """The ConfigMaps and Secrets a kustomization file generates under a fixed name, with their values."""
    folder = os.path.dirname(path)
    options = document.get("generatorOptions") if isinstance(document.get("generatorOptions"), dict) else {}
    namespace = document.get("namespace") if isinstance(document.get("namespace"), str) else None
    found = []
    for field_name, kind in _GENERATORS.items():
        items = document.get(field_name)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            own = item.get("options") if isinstance(item.get("options"), dict) else {}
            if not (own.get("disableNameSuffixHash", options.get("disableNameSuffixHash")) is True):
                continue
            item_node = _item(node, field_name, index)
            space = item.get("namespace") if isinstance(item.get("namespace"), str) else namespace
            source = Source(kind, item["name"], space, f"{kind} {item['name']} ({field_name} in {path})")
            _literals(source, item, item_node, path)
            for entry in _strings(item.get("envs")) + _strings(item.get("env")):
                _env_file(source, entry, folder, top)
            for entry in _strings(item.get("files")):
                _file(source, entry, folder, top)
            found.append(source)
    return found


def _literals(source: Source, item: dict, item_node: Any, path: str) -> None:
    literals = mapping_get(item_node, "literals")
    nodes = literals.value if isinstance(literals, SequenceNode) else []
    for literal in nodes:
        if not isinstance(literal, ScalarNode) or "=" not in literal.value:
            continue
        key, _, text = literal.value.partition("=")
        column = literal.start_mark.column + 1 + (len(key) + 1 if not literal.style else 0)
        quoted = len(text) >= 2 and text[0] == text[-1] and text[0] in "'\""
        source.values[key] = _value(text[1:-1] if quoted else text, Origin(path, literal.start_mark.line + 1, column))


def _env_file(source: Source, entry: str, folder: str, top: str) -> None:
    text = _read(source, entry, folder, top)
    if text is None:
        return
    shown = os.path.normpath(os.path.join(folder, entry))
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        stripped = line.lstrip().removesuffix("\r")
        if not stripped or stripped.startswith("#"):
            continue
        key, equals, value = stripped.partition("=")
        if not equals:  # kustomize takes it from its own environment
            source.values[key] = UNKNOWN
            continue
        source.values[key] = _value(value, Origin(shown, number, len(line) - len(stripped) + len(key) + 2))


def _file(source: Source, entry: str, folder: str, top: str) -> None:
    key, _, name = entry.rpartition("=")
    key = key or os.path.basename(name)
    text = _read(source, name, folder, top)
    if text is not None:
        shown = os.path.normpath(os.path.join(folder, name))
        source.values[key] = _value(text, Origin(shown, 1, 1))


def _read(source: Source, entry: str, folder: str, top: str) -> str | None:
    """A file a generator names, if it stays in the repository and reads as text; else its source is unusable."""
    why = leaves(entry, folder, top)
    if why:
        source.problem = f"{entry} {why}"
        return None
    text, problem = read_file(os.path.join(folder, entry))
    if problem is not None or len(text) > MAX_TEXT:
        source.problem = f"{entry} cannot be read" if problem is not None else f"{entry} is too long"
        return None
    return text


def _value(text: str, origin: Origin) -> Value:
    """A variable's value, its line breaks dropped as Flux drops them. One that holds `${...}` itself is
    what the Kustomization that applies its object may have filled in: not guessed (and Flux never
    expands a value again)."""
    return UNKNOWN if has_expression(text) else Set(text.replace("\n", ""), origin)


def _item(node: Any, field_name: str, index: int) -> Any:
    items = mapping_get(node, field_name)
    return items.value[index] if isinstance(items, SequenceNode) and index < len(items.value) else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _null(node: Any) -> bool:
    return isinstance(node, ScalarNode) and node.tag == STD_TAG + "null"


def _string(node: ScalarNode) -> bool:
    return node.tag in (STD_TAG + "str", STD_TAG + "null", STD_TAG + "timestamp")
