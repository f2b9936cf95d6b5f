"""The Helm values a chart installation sets, as far as the tree shows them: to check a condition
the data puts on a fact (Cilium needs the Gateway API CRDs only `when: {values: gatewayAPI.enabled}`).

Each installer gives values its own way, read here in the order it merges them (the last one wins):
a Flux HelmRelease its `valuesFrom` ConfigMaps and Secrets, then `spec.values`; an Argo CD source its
`helm.values`, `helm.valuesObject`, then `helm.parameters`; a K3s HelmChart its `valuesContent`, a
HelmChartConfig of the same name, then `spec.set`; a kustomization's `helmCharts` entry its
`valuesFile` and `valuesInline` (as `valuesMerge` says), then `additionalValuesFiles`. What cannot be
read (a Secret encrypted with SOPS, a ConfigMap not in the tree, Argo CD `valueFiles`) is kept as a
layer that says why: a condition that depends on it is unknown, never taken as unset. The chart's
own defaults are not read: a condition names a value the chart leaves off by default.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import yaml
from yaml.nodes import MappingNode

from scanner.model import Manifest, Origin
from scanner.nodes import construct, mapping_get, scalar, sequence_items, value_at
from scanner.sources.files.walk import KUSTOMIZATION_FILES, read_file
from scanner.containment import leaves, repository_root
from scanner.paths import repo_path

SET, NOT_SET, UNREAD = True, False, None
_DEFAULT_VALUES_KEY = "values.yaml"
_GENERATED_SUFFIX = re.compile(r"-[a-z0-9]{10}\Z")  # kustomize's configMapGenerator name hash
_MAX_VALUES_BYTES = 4 * 1024 * 1024
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Layer:
    """One source of values: the data (a mapping), or why it could not be read."""

    where: str  # "spec.values of HelmRelease kube-system/cilium", "ConfigMap kube-system/cilium-values"
    data: Any = None
    unread: str | None = None
    typed: bool = True  # False: --set style strings, which helm reads as bools and numbers
    # (the kustomization's folder, the values file as written there, the repository's real path): the
    # file is read only when a condition asks
    file: tuple[str, str, str] | None = None
    # Where a value of it is edited: the composed node of inline values and how its object places a node
    # (Manifest.origin_at), else the object that holds the values text (a ConfigMap); None: not known.
    node: Any = field(default=None, compare=False, repr=False)
    located: Callable[[Any], Origin] | None = field(default=None, compare=False, repr=False)
    origin: Origin | None = None

    def loaded(self) -> Layer:
        return _read_file_layer(*self.file) if self.file is not None else self


@dataclass(frozen=True)
class ReleaseValues:
    """The values a release installs its chart with, as layers merged in order."""

    layers: tuple[Layer, ...] = ()  # in the order the installer merges them: the last one wins

    def setting(self, path: str) -> tuple[bool | None, str]:
        """SET when the values set `path` to something a chart template reads as true, NOT_SET when what
        the tree gives leaves it off, UNREAD when a layer that could decide it cannot be read; with what
        decided it, as a message says it."""
        for layer in reversed(self.layers):
            layer = layer.loaded()
            if layer.unread is not None:
                return UNREAD, layer.unread
            found, value = _lookup(layer.data, path.split("."))
            if not found:
                continue
            if isinstance(value, str) and "${" in value:
                return UNREAD, f"{path} is {value!r} in {layer.where}, a variable substituted at deploy time"
            on = _truthy(value if layer.typed else _parse_set(value))
            return (SET if on else NOT_SET), f"{path} is {_shown(value)} in {layer.where}"
        return NOT_SET, f"no values given to the chart set {path}" if self.layers else \
            f"the chart gets no values that set {path}"


    def value(self, keys: Sequence[str]) -> tuple[bool | None, Any, Origin | None]:
        """SET and the value the last layer that sets `keys` gives (with the line that sets it, when known);
        NOT_SET when none does; UNREAD when a layer that could cannot be read."""
        for layer in reversed(self.layers):
            layer = layer.loaded()
            if layer.unread is not None:
                return UNREAD, None, None
            found, value = _lookup(layer.data, list(keys))
            if found:
                node = value_at(layer.node, *keys) if layer.node is not None else None
                at = layer.located(node) if node is not None and layer.located is not None else layer.origin
                return SET, value, at
        return NOT_SET, None, None


def unread(reason: str) -> ReleaseValues:
    return ReleaseValues((Layer("", unread=reason),))


def _lookup(data: Any, keys: list[str]) -> tuple[bool, Any]:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return False, None
        data = data[key]
    return True, data


def _truthy(value: Any) -> bool:
    """As a Helm template's `if` reads it: false, 0, null, "" and empty collections are off."""
    return bool(value) if isinstance(value, (bool, int, float, str, list, dict)) else value is not None


def _parse_set(value: Any) -> Any:
    """A --set style value as helm's strvals types it: true/false, null, integers; else the string."""
    if not isinstance(value, str):
        return value
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    return int(value) if re.fullmatch(r"-?[0-9]+", value.strip()) else value


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()
    text = text.removesuffix("\n...").strip()
    return repr(text[:40]) if isinstance(value, str) else text[:40]


def _dotted(pairs: list[tuple[str, Any]]) -> dict:
    """--set style pairs ("gatewayAPI.enabled", "true") as nested mappings."""
    nested: dict = {}
    for name, value in pairs:
        keys = name.split(".")
        here = nested
        for key in keys[:-1]:
            here = here.setdefault(key, {}) if isinstance(here.get(key, {}), dict) else {}
        here[keys[-1]] = value
    return nested


def _text_layer(text: Any, where: str) -> Layer:
    """Values written as YAML text (Argo CD `helm.values`, K3s `valuesContent`, a ConfigMap's key)."""
    if not isinstance(text, str):
        return Layer(where, unread=f"{where} is not YAML text; not read")
    if len(text) > _MAX_VALUES_BYTES:
        return Layer(where, unread=f"{where} is over 4 MiB; not read")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return Layer(where, unread=f"{where} is not valid YAML; not read")
    return Layer(where, data if isinstance(data, dict) else {})


def _node_layer(node: Any, where: str, located: Callable[[Any], Origin] | None = None) -> Layer:
    data = construct(node) if node is not None else None
    return Layer(where, data if isinstance(data, dict) else {}, node=node, located=located)


# --- Flux -----------------------------------------------------------------------------------------

Lookup = Callable[[str, str | None, str], Manifest | None]


def flux_values(manifest: Manifest, lookup: Lookup) -> ReleaseValues:
    """A helm.toolkit.fluxcd.io HelmRelease: each `valuesFrom`, then `spec.values`."""
    spec = value_at(manifest.node, "spec")
    folder = os.path.dirname(manifest.origin.path) if manifest.line_map is None else None
    layers = [_values_layer(ref, folder, manifest.namespace, lookup) for ref in sequence_items(mapping_get(spec, "valuesFrom"))]
    layers = [layer for layer in layers if layer is not None]
    if mapping_get(spec, "values") is not None:
        layers.append(_node_layer(mapping_get(spec, "values"), f"spec.values of {manifest.object_ref}",
                                  manifest.origin_at))
    return ReleaseValues(tuple(layers))


def flux_v1_values(manifest: Manifest) -> ReleaseValues:
    """Flux v1's helm-operator HelmRelease: `spec.values`; its `valuesFrom` sources are not read."""
    spec = value_at(manifest.node, "spec")
    layers = []
    if sequence_items(mapping_get(spec, "valuesFrom")):
        layers.append(Layer("", unread=f"the valuesFrom of {manifest.object_ref} (Flux v1) are not read"))
    if mapping_get(spec, "values") is not None:
        layers.append(_node_layer(mapping_get(spec, "values"), f"spec.values of {manifest.object_ref}"))
    return ReleaseValues(tuple(layers))


def _values_from(ref: Any, namespace: str | None, lookup: Lookup) -> Layer | None:
    kind, name = scalar(mapping_get(ref, "kind")), scalar(mapping_get(ref, "name")) or ""
    key = scalar(mapping_get(ref, "valuesKey")) or _DEFAULT_VALUES_KEY
    what = f"valuesFrom {kind} {namespace + '/' if namespace else ''}{name}"
    if kind not in ("ConfigMap", "Secret"):
        return Layer(what, unread=f"{what}: not a ConfigMap or Secret; not read")
    source = lookup(kind, namespace, name)
    if source is None:
        if scalar(mapping_get(ref, "optional")) == "true":
            return None  # Flux goes on without it
        return Layer(what, unread=f"{what} is not in the tree")
    body = source.body if isinstance(source.body, dict) else {}
    if kind == "Secret" and "sops" in body:
        return Layer(what, unread=f"{what} is encrypted (SOPS)")
    text = _data_value(body, key, kind == "Secret")
    where = f"{kind} {source.object_ref.split(' ', 1)[-1]} key {key}"
    if text is None:
        return Layer(what, unread=f"{what} has no key {key}")
    target = scalar(mapping_get(ref, "targetPath"))
    if target:
        return Layer(where, _dotted([(target, text)]), typed=False, origin=source.origin)
    return dataclasses.replace(_text_layer(text, where), origin=source.origin)


def _values_layer(ref: Any, folder: str | None, namespace: str | None, lookup: Lookup) -> Layer | None:
    """A `valuesFrom` entry's values: from the file the kustomization beside the release generates them
    from, else (no such file, or one kubehop may not read) from the ConfigMap or Secret in the tree."""
    generated = _generated_values(ref, folder)
    if generated is not None:
        generated = generated.loaded()
        if generated.unread is None:
            return generated
    found = _values_from(ref, namespace, lookup)
    return generated if found is not None and found.unread is not None and generated is not None else found


def _generated_values(ref: Any, folder: str | None) -> Layer | None:
    """The values file a ConfigMap of `valuesFrom` is generated from by the kustomization beside the
    release (configMapGenerator `files`, `key=file` or `file`), read from that file: each value at its
    line there (what a person edits), and read even where the generated ConfigMap is not built."""
    if folder is None or scalar(mapping_get(ref, "kind")) != "ConfigMap" or scalar(mapping_get(ref, "targetPath")):
        return None
    name, key = scalar(mapping_get(ref, "name")), scalar(mapping_get(ref, "valuesKey")) or _DEFAULT_VALUES_KEY
    kustomization = next((os.path.join(folder, f) for f in KUSTOMIZATION_FILES
                          if os.path.isfile(os.path.join(folder, f))), None)
    text = read_file(kustomization)[0] if kustomization else None
    try:
        document = yaml.safe_load(text) if text and len(text) < _MAX_VALUES_BYTES else None
    except yaml.YAMLError:
        return None
    generators = document.get("configMapGenerator") if isinstance(document, dict) else None
    for generator in generators if isinstance(generators, list) else ():
        if not isinstance(generator, dict) or generator.get("name") != name:
            continue
        for entry in generator.get("files") or ():
            if isinstance(entry, str):
                named, _, file = entry.rpartition("=")
                if (named or os.path.basename(file)) == key:
                    return _file_layer(folder, file.strip(), repository_root(folder or ".", []))
    return None


def _data_value(body: dict, key: str, secret: bool) -> Any:
    string_data = body.get("stringData") if isinstance(body.get("stringData"), dict) else {}
    if key in string_data:
        return string_data[key]
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    value = data.get(key)
    if not secret or not isinstance(value, str):
        return value
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def generated_name(name: str, candidate: str) -> bool:
    """`candidate` is what kustomize's configMapGenerator makes of `name` (name-<hash>)."""
    return candidate.startswith(name + "-") and _GENERATED_SUFFIX.search(candidate) is not None \
        and len(candidate) == len(name) + 11


# --- Argo CD, K3s ---------------------------------------------------------------------------------

def argo_values(source: Any, what: str) -> ReleaseValues:
    """An Argo CD Application source: `helm.valueFiles` (not read), `helm.values`, `helm.valuesObject`,
    then `helm.parameters` (Argo CD's own order of precedence)."""
    helm = mapping_get(source, "helm")
    layers: list[Layer] = []
    files = [scalar(f) for f in sequence_items(mapping_get(helm, "valueFiles")) if scalar(f)]
    if files:
        layers.append(Layer("", unread=f"the valueFiles of {what} ({', '.join(files[:3])}) are read by Argo CD "
                                       "from the chart's repository; not read"))
    given = mapping_get(helm, "values")
    if isinstance(given, MappingNode):  # written as a mapping rather than text: Argo CD reads it alike
        layers.append(_node_layer(given, f"helm.values of {what}"))
    elif scalar(given) is not None:
        layers.append(_text_layer(scalar(given), f"helm.values of {what}"))
    if mapping_get(helm, "valuesObject") is not None:
        layers.append(_node_layer(mapping_get(helm, "valuesObject"), f"helm.valuesObject of {what}"))
    parameters = [(scalar(mapping_get(p, "name")), scalar(mapping_get(p, "value")) or "",
                   scalar(mapping_get(p, "forceString")) == "true")
                  for p in sequence_items(mapping_get(helm, "parameters"))]
    plain = [(name, value) for name, value, forced in parameters if name and not forced]
    strings = [(name, value) for name, value, forced in parameters if name and forced]
    if plain:
        layers.append(Layer(f"helm.parameters of {what}", _dotted(plain), typed=False))
    if strings:
        layers.append(Layer(f"helm.parameters of {what}", _dotted(strings)))
    return ReleaseValues(tuple(layers))


def k3s_values(manifest: Manifest, config: Manifest | None) -> ReleaseValues:
    """A K3s/RKE2 HelmChart: `valuesContent`, a HelmChartConfig of the same name, then `spec.set`."""
    spec = value_at(manifest.node, "spec")
    layers: list[Layer] = []
    if scalar(mapping_get(spec, "valuesContent")) is not None:
        layers.append(_text_layer(scalar(mapping_get(spec, "valuesContent")), f"valuesContent of {manifest.object_ref}"))
    if config is not None and scalar(value_at(config.node, "spec", "valuesContent")) is not None:
        layers.append(_text_layer(scalar(value_at(config.node, "spec", "valuesContent")),
                                  f"valuesContent of {config.object_ref}"))
    sets = mapping_get(spec, "set")
    pairs = [(scalar(k), scalar(v) or "") for k, v in getattr(sets, "value", ()) if scalar(k)]
    if pairs:
        layers.append(Layer(f"spec.set of {manifest.object_ref}", _dotted(pairs), typed=False))
    return ReleaseValues(tuple(layers))


# --- Kustomize helmCharts -------------------------------------------------------------------------

def kustomize_values(entry: Any, kustomization: str, scanned: Sequence[str] = ()) -> ReleaseValues:
    """A kustomization's helmCharts entry: `valuesFile` and `valuesInline` (merged as `valuesMerge`
    says), then each `additionalValuesFiles`. Files are read only inside the repository that holds the
    kustomization (its Git work tree, else the scanned folder holding it), as a scan's kustomize builds."""
    folder = os.path.dirname(kustomization)
    root = repository_root(folder or ".", list(scanned))
    named = scalar(mapping_get(entry, "valuesFile"))
    file_layer = [_file_layer(folder, named, root)] if named else []
    inline = mapping_get(entry, "valuesInline")
    inline_layer = [_node_layer(inline, f"valuesInline of {kustomization}")] if inline is not None else []
    mode = scalar(mapping_get(entry, "valuesMerge")) or "override"
    if mode == "replace" and inline_layer:
        layers = inline_layer
    elif mode == "merge":
        layers = inline_layer + file_layer
    else:
        layers = file_layer + inline_layer
    for extra in sequence_items(mapping_get(entry, "additionalValuesFiles")):
        if scalar(extra):
            layers.append(_file_layer(folder, scalar(extra), root))
    return ReleaseValues(tuple(layers))


def _file_layer(folder: str, name: str, root: str) -> Layer:
    path = os.path.normpath(os.path.join(folder, name))
    if "://" in name:
        return Layer(path, unread=f"values file {name} is remote; not read")
    return Layer(f"values file {repo_path(path)}", file=(folder, name, root))


def _read_file_layer(folder: str, name: str, root: str) -> Layer:
    path = os.path.normpath(os.path.join(folder, name))
    shown = repo_path(path)  # as every report names a file
    why = leaves(name, folder or ".", root)  # as every path the tree names (scanner.containment)
    if why:
        return Layer(path, unread=f"values file {shown} {why}; not read")
    text, problem = read_file(path)
    if text is None:
        return Layer(path, unread=f"values file {shown}: {problem.message if problem else 'not read'}")
    if len(text) > _MAX_VALUES_BYTES:
        return Layer(path, unread=f"values file {shown} is over 4 MiB; not read")
    try:  # composed, so that each value knows its line in the file
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return Layer(path, unread=f"values file {shown} is not valid YAML; not read")
    return _node_layer(node, f"values file {shown}", lambda at: Origin(path, at.start_mark.line + 1, at.start_mark.column + 1))
