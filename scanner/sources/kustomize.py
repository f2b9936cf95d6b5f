"""Kustomize folders built with `kustomize build` (or `kubectl kustomize`), objects mapped to their files.

The user's kustomization is not edited: a throwaway kustomization next to nothing but itself lists
the folder as its one resource and asks for `buildMetadata: [originAnnotations]`, so every built
object names the file it came from. Remote bases are fetched only with --allow-network.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import yaml

from scanner.crds import as_list
from scanner.model import Diagnostic, Manifest, Origin
from scanner.sources.files import KUSTOMIZATION_FILES, read_file, read_yaml_file
from scanner.sources.line_map import aligned
from scanner.sources.rendered import annotation, drop_annotation, read_output, reorigin
from scanner.sources.yamldoc import DocumentProblem, TemplateSyntax, load_data, read_text

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
_REFERENCE_FIELDS = ("resources", "bases", "components")
_TIMEOUT_SECONDS = 300
_KLOG_ERROR = re.compile(r'^[EFWI]\d{4} [\d:.]+\s+\d+ \S+\] "[^"]*" err="(.*)"$')


@dataclass
class BuildOutcome:
    folder: str
    manifests: list[Manifest]
    diagnostics: list[Diagnostic]
    not_built: str | None = None  # why the folder was not built, when it was not


def kustomization_file(folder: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def build_all(folders: list[str], command: list[str], allow_network: bool, workers: int) -> list[BuildOutcome]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda folder: build(folder, command, allow_network), folders))


def build(folder: str, command: list[str], allow_network: bool) -> BuildOutcome:
    if _is_component(folder):
        return BuildOutcome(folder, [], [])  # built only as part of the kustomizations that use it
    if not allow_network:
        remote = remote_references(folder)
        if remote:
            return BuildOutcome(folder, [], [], f"uses remote {remote[0]}; not built (--allow-network fetches it)")
    with tempfile.TemporaryDirectory(prefix="kubehop-kustomize-") as wrapper:
        resource = os.path.relpath(os.path.abspath(folder), wrapper)
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            yaml.safe_dump({"resources": [resource], "buildMetadata": ["originAnnotations"]}, handle)
        try:
            done = subprocess.run([*command, wrapper], capture_output=True, text=True, timeout=_TIMEOUT_SECONDS,
                                  stdin=subprocess.DEVNULL, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        except subprocess.TimeoutExpired:
            return _failed(folder, f"kustomize did not finish within {_TIMEOUT_SECONDS} s")
        except OSError as err:
            return _failed(folder, f"cannot run kustomize: {err}")
        if done.returncode != 0:
            return _failed(folder, _message(done.stderr))
        manifests, diagnostics = read_output(done.stdout, f"{folder} (built)")
        return BuildOutcome(folder, reorigin(manifests, _origin_finder(folder, wrapper, done.stdout)), diagnostics)


def _failed(folder: str, message: str) -> BuildOutcome:
    return BuildOutcome(folder, [], [Diagnostic(folder, f"kustomize build failed: {message}")],
                        "kustomize build failed (see input problems)")


def _message(stderr: str) -> str:
    """The tool's error on one line; kubectl's log prefix (`E1130 21:02:52.4 5713 run.go:72] "command
    failed" err="..."`) is reduced to the error itself."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    first = lines[0] if lines else "no message"
    logged = _KLOG_ERROR.match(first)
    if logged:
        try:
            first = json.loads(f'"{logged.group(1)}"')
        except ValueError:
            first = logged.group(1)
    return first.removeprefix("Error:").strip()


def _origin_finder(folder: str, wrapper: str, built: str):
    via = f"kustomize build {folder}"
    output = built.split("\n")

    def where(manifest: Manifest) -> Origin:
        try:
            origin = load_data(annotation(manifest, ORIGIN_ANNOTATION) or "null", manifest.origin.path)
        except DocumentProblem:
            origin = None
        drop_annotation(manifest, ORIGIN_ANNOTATION)
        if not isinstance(origin, dict) or origin.get("repo"):
            return Origin(manifest.origin.path, manifest.origin.line, manifest.origin.column, via)
        relative = origin.get("path") or origin.get("configuredIn")
        path = _display_path(folder, os.path.normpath(os.path.join(wrapper, str(relative))))
        line, column = locate_object(path, manifest) if origin.get("path") else (0, 0)
        node = manifest.node
        manifest.line_map = aligned(output, node.start_mark.line + 1, node.end_mark.line + 1, path, line)
        return Origin(path, line, column, via)

    return where


def _display_path(folder: str, absolute: str) -> str:
    """The path as the user would see it: relative to where they pointed, like the file walker's."""
    return os.path.normpath(os.path.join(folder, os.path.relpath(absolute, os.path.abspath(folder))))


def locate_object(path: str, built: Manifest) -> tuple[int, int]:
    """The apiVersion line of the object in `path` that kustomize turned into `built`.

    Kustomize may have prefixed or suffixed the name: the source object's name is inside the built one.
    """
    candidates = [m for m in _objects_in(path) if m[1] == built.kind]
    named = [m for m in candidates if m[2] and built.name and m[2] in built.name]
    for group in ([m for m in named if m[0] == built.api_version], named, candidates):
        if group:
            return group[0][3], group[0][4]
    return 0, 0


@functools.lru_cache(maxsize=1024)
def _objects_in(path: str) -> tuple[tuple[str, str, str | None, int, int], ...]:
    text, problem = read_file(path)
    if problem is not None:
        return ()
    try:
        manifests, _ = read_text(text, path)
    except (DocumentProblem, TemplateSyntax):
        return ()
    return tuple((m.api_version, m.kind, m.name, m.origin.line, m.origin.column) for m in manifests)


# --- What a kustomization refers to ---------------------------------------------------------------

def _kustomization(folder: str) -> dict:
    path = kustomization_file(folder)
    document, _ = read_yaml_file(path) if path else (None, None)  # kustomize reports what is wrong with it
    return document if isinstance(document, dict) else {}


def _is_component(folder: str) -> bool:
    return _kustomization(folder).get("kind") == "Component"


def remote_references(folder: str, _seen: set[str] | None = None) -> list[str]:
    """Remote resources, bases, components or Helm charts of a kustomization, its local bases included."""
    seen = _seen if _seen is not None else set()
    real = os.path.realpath(folder)
    if real in seen:
        return []
    seen.add(real)
    document = _kustomization(folder)
    found = [f"Helm chart {chart.get('name')}" for chart in as_list(document.get("helmCharts"))
             if isinstance(chart, dict)]
    for reference in (r for field in _REFERENCE_FIELDS for r in as_list(document.get(field))):
        reference = str(reference)
        local = os.path.join(folder, reference)
        if os.path.isdir(local) and kustomization_file(local):
            found.extend(remote_references(local, seen))
        elif not os.path.exists(local) and _is_remote(reference):
            found.append(reference)
    return found



def _is_remote(reference: str) -> bool:
    """A URL, an scp-like git address, or a host name first (github.com/org/repo//path)."""
    host = reference.split("/", 1)[0]
    return "://" in reference or "@" in host or ("." in host and not host.startswith(".") and "/" in reference)
