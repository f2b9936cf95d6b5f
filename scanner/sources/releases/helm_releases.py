"""What Helm has deployed, read offline from `kubectl get secrets -A -l owner=helm -o yaml`.

Helm 3+ stores each release revision in a Secret (or a ConfigMap with the configmap driver) whose
`release` key holds the release as gzipped JSON, base64-encoded by Helm (and once more by the
Secret's own encoding). The latest deployed revision of each release is what runs, whatever Git says.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import Any

from scanner.crds import as_dict, as_list
from scanner.model import Diagnostic, Manifest, Origin
from scanner.sources.files.walk import MAX_FILE_BYTES, read_file
from scanner.sources.yaml.line_map import fixed
from scanner.sources.yaml.rendered import read_output, reorigin, source_comments
from scanner.nodes import construct, key_node, mapping_get, scalar
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, read_text

_GZIP_MAGIC = b"\x1f\x8b"
# A release holds no more than a scanned file may (files.MAX_FILE_BYTES).
MAX_RELEASE_BYTES = MAX_FILE_BYTES
_TOO_BIG = f"the release decompresses to more than {MAX_RELEASE_BYTES // 1048576} MiB; not read"


@dataclass
class Revision:
    namespace: str
    name: str
    version: int
    status: str
    origin: Origin  # the Secret in the dump
    release: dict


def read_helm_releases(path: str) -> tuple[list[Manifest], list[Diagnostic], int]:
    """Objects of every release's latest deployed revision, with the releases count."""
    text, problem = read_file(path)
    if problem is not None:
        return [], [problem], 0
    try:
        items, diagnostics = read_text(text, path)
    except (DocumentProblem, TemplateSyntax) as err:
        return [], [Diagnostic(path, f"not a kubectl YAML dump: {err}".rstrip(": "))], 0
    best: dict[tuple[str, str], Revision] = {}  # only the latest deployed revision of each release is kept
    for item in items:
        revision, problem = _revision(item, path)
        if problem:
            diagnostics.append(problem)
        elif revision:
            keep_latest_deployed(best, revision)
    manifests: list[Manifest] = []
    latest = [best[key] for key in sorted(best)]
    for revision in latest:
        found, problems = _objects_of(revision, path)
        manifests.extend(found)
        diagnostics.extend(problems)
    return manifests, diagnostics, len(latest)


def keep_latest_deployed(best: dict[tuple[str, str], Revision], revision: Revision) -> None:
    """Per release: the newest revision whose status is `deployed` (releases never deployed are left out)."""
    key = (revision.namespace, revision.name)
    if revision.status == "deployed" and (key not in best or revision.version > best[key].version):
        best[key] = revision


def _revision(item: Manifest, path: str) -> tuple[Revision | None, Diagnostic | None]:
    if item.api_version != "v1" or item.kind not in ("Secret", "ConfigMap"):
        return None, None
    encoded = scalar(mapping_get(mapping_get(item.node, "data"), "release"))
    if encoded is None:
        return None, None
    try:
        release = decode_release(encoded, secret=item.kind == "Secret")
    except ValueError as err:
        where = key_node(item.node, "data")
        return None, Diagnostic(path, f"{item.kind} {item.namespace}/{item.name}: cannot decode the Helm release: "
                                      f"{err}", where.start_mark.line + 1 if where else item.origin.line)
    labels_node = mapping_get(mapping_get(item.node, "metadata"), "labels")
    labels = as_dict(construct(labels_node)) if labels_node is not None else {}
    info = as_dict(release.get("info"))
    return Revision(
        namespace=str(release.get("namespace") or item.namespace or ""),
        name=str(release.get("name") or labels.get("name") or item.name),
        version=_int(release.get("version") or labels.get("version")),
        status=str(info.get("status") or labels.get("status") or ""),
        origin=item.origin,
        release=release,
    ), None


def decode_release(encoded: str, secret: bool = True) -> dict:
    """The release JSON: base64 (the Secret's own encoding), then Helm's base64, gzip, JSON."""
    try:
        data = base64.b64decode(encoded, validate=False)
        if secret:
            data = base64.b64decode(data, validate=False)
        if data.startswith(_GZIP_MAGIC):
            data = _gunzip(data)
        if len(data) > MAX_RELEASE_BYTES:
            raise ValueError(_TOO_BIG)
        release = json.loads(data)
    except RecursionError:
        raise ValueError("the release JSON is nested too deeply") from None
    except (binascii.Error, zlib.error, ValueError) as err:  # UnicodeDecodeError, JSONDecodeError, huge ints
        raise ValueError(str(err) or type(err).__name__) from err
    if not isinstance(release, dict):
        raise ValueError("not a Helm release object")
    return release


def _gunzip(data: bytes) -> bytes:
    """Helm's gzip, decompressed no further than MAX_RELEASE_BYTES (a small dump can hold a gzip bomb)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(data, MAX_RELEASE_BYTES + 1)
    if len(out) > MAX_RELEASE_BYTES:
        raise ValueError(_TOO_BIG)
    if not inflater.eof:
        raise ValueError("truncated gzip data")
    return out


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # 1e999 reads as infinity
        return 0


def _objects_of(revision: Revision, path: str) -> tuple[list[Manifest], list[Diagnostic]]:
    release = revision.release
    chart = as_dict(as_dict(release.get("chart")).get("metadata"))
    label = (f"helm release {revision.namespace}/{revision.name} revision {revision.version}, "
             f"chart {chart.get('name', '?')} {chart.get('version', '')}").rstrip()
    hooks = [hook for hook in as_list(release.get("hooks")) if isinstance(hook, dict)]
    text = str(release.get("manifest") or "") + "".join(
        f"\n---\n# Source: {hook.get('path', '')}\n{hook.get('manifest', '')}" for hook in hooks)
    manifests, diagnostics = read_output(text, f"{path} ({label})")
    template_of = source_comments(text)

    def where(manifest: Manifest) -> Origin:
        template = template_of(manifest)
        manifest.line_map = fixed(revision.origin.line, revision.origin.column)
        return Origin(path, revision.origin.line, revision.origin.column,
                      f"{label}, {template}" if template else label)

    return reorigin(manifests, where), diagnostics
