"""Flux's side of the reach: the folders Flux is bootstrapped into, and where each Flux Kustomization points.

- A folder Flux is bootstrapped into holds `flux-system/gotk-components.yaml` or `gotk-sync.yaml`, as
  `flux bootstrap` writes them; a `flux-system` Kustomization (bootstrap's sync, written by hand or by
  Terraform into the tree) and a FluxInstance's `spec.sync` (the Flux Operator) name the folder synced.
- A Flux Kustomization builds `spec.path` (`./` when left out) of its `sourceRef`, read from the source's
  top (scanner.sources.kustomize.flux.source_path). Its source is this repository when it is the
  bootstrap's (`flux-system`, as the Flux CLI and Operator name it), or one whose URL is this
  repository's (the bootstrap source's, a FluxInstance's, a Kustomization's that builds itself); it is
  another one when the tree holds it with another URL (a tenant's repository, Flux's own manifests as an
  OCI artifact): nothing of this tree. Any other source (not in the tree, a `${VAR}` URL) may be this
  repository: its path is read in this tree, so that nothing it may deploy is taken as undeployed.
- A path holding `${VAR}` (postBuild substitution of the Kustomization that applies it) names any folder
  its other parts match (Target.pattern).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from scanner.containment import leaves
from scanner.model import Manifest

FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io"
FLUX_OPERATOR = "fluxcd.controlplane.io"
_SOURCE_GROUP = "source.toolkit.fluxcd.io"
_SOURCE_KINDS = ("GitRepository", "OCIRepository", "Bucket")
_BOOTSTRAP_FILES = ("gotk-components.yaml", "gotk-sync.yaml")
ARTIFACTS = "source.extensions.fluxcd.io"
BOOTSTRAP_NAME = "flux-system"
_PLACEHOLDERS = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*?\}\}|<<.*?>>")
THIS, OTHER, UNKNOWN = "this", "other", "unknown"


@dataclass(frozen=True)
class Target:
    """What a pointer (a Flux path, an Argo CD path) names in this tree: one real folder, or the folders
    a pattern matches (a path holding a variable); neither when it names nothing of this tree."""

    folder: str | None = None
    pattern: str | None = None  # a regular expression over a folder's path from the top


NOTHING = Target()


def bootstrap_folders(scanned: Iterable[str]) -> list[str]:
    """Folders holding `flux-system/gotk-*.yaml` (what `flux bootstrap` writes), under the scanned paths."""
    from scanner.sources.files.walk import SKIPPED_DIRS

    found = []
    for path in scanned:
        if not os.path.isdir(path):
            continue
        for folder, names, files in os.walk(path):
            names[:] = sorted(n for n in names if n not in SKIPPED_DIRS and not n.startswith("."))
            if os.path.basename(folder) == BOOTSTRAP_NAME and any(f in files for f in _BOOTSTRAP_FILES):
                found.append(os.path.dirname(folder))
                names[:] = []
    return found


def is_sync(kustomization: Manifest) -> bool:
    """Is it the bootstrap's own sync (the `flux-system` Kustomization)?"""
    return kustomization.name == BOOTSTRAP_NAME and kustomization.namespace in (None, BOOTSTRAP_NAME)


def normal_url(url: str) -> str:
    """A repository URL as one repository has it however it is written: no scheme, user or port, no
    `.git`, lower case (`git@github.com:o/r.git`, `ssh://git@github.com/o/r` and `https://github.com/o/r`
    are one)."""
    text = url.strip().lower()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    host, _, rest = text.partition("/")
    host = host.rsplit("@", 1)[-1]
    if ":" in host:
        host, _, after = host.partition(":")
        rest = rest if after.isdigit() else f"{after}/{rest}" if rest else after
    path = rest.strip("/")
    return f"{host}/{path.removesuffix('.git')}".rstrip("/")


class Sources:
    """The tree's Flux sources, and which of them are this repository (`kind_of`)."""

    def __init__(self, manifests: Sequence[Manifest]):
        self.objects: dict[tuple[str, str, str], Manifest] = {}
        self.urls: set[str] = set()  # normalised URLs of this repository
        for manifest in manifests:
            if manifest.group == _SOURCE_GROUP and manifest.kind in _SOURCE_KINDS:
                self.objects[(manifest.kind, manifest.namespace or BOOTSTRAP_NAME, str(manifest.name))] = manifest
                if manifest.name == BOOTSTRAP_NAME:
                    self._learn(_url(manifest.body.get("spec")))
            elif manifest.group == FLUX_OPERATOR and manifest.kind == "FluxInstance":
                spec = manifest.body.get("spec")
                self._learn(_url(spec.get("sync") if isinstance(spec, dict) else None))

    def _learn(self, url: str | None) -> None:
        if url and "$" not in url:
            self.urls.add(normal_url(url))

    def learn_source_of(self, kustomization: Manifest) -> None:
        """A Kustomization that builds its own file reads this repository: so does its source."""
        found = self._object(kustomization)
        if found is not None:
            self._learn(_url(found.body.get("spec")))

    def kind_of(self, kustomization: Manifest) -> str:
        """THIS, OTHER or UNKNOWN: is the Kustomization's source this repository?"""
        spec = kustomization.body.get("spec")
        source = spec.get("sourceRef") if isinstance(spec, dict) else None
        source = source if isinstance(source, dict) else {}
        if source.get("kind") == "ExternalArtifact":
            return THIS  # generated from a source of the tree (an ArtifactGenerator), read through it
        if source.get("kind") in ("GitRepository", "OCIRepository") and source.get("name") == BOOTSTRAP_NAME \
                and source.get("namespace") in (None, BOOTSTRAP_NAME):
            return THIS
        found = self._object(kustomization)
        url = _url(found.body.get("spec")) if found is not None else None
        if found is None or not url or "$" in url or not self.urls:
            return UNKNOWN
        return THIS if normal_url(url) in self.urls else OTHER

    def _object(self, kustomization: Manifest) -> Manifest | None:
        spec = kustomization.body.get("spec")
        source = spec.get("sourceRef") if isinstance(spec, dict) else None
        if not isinstance(source, dict):
            return None
        namespace = source.get("namespace") or kustomization.namespace or BOOTSTRAP_NAME
        return self.objects.get((str(source.get("kind")), str(namespace), str(source.get("name"))))


def _url(spec) -> str | None:
    url = spec.get("url") if isinstance(spec, dict) else None
    return url if isinstance(url, str) else None


def kustomization_target(kustomization: Manifest, top: str, artifacts: Sequence[Manifest], sources: Sources) -> Target:
    """What a Flux Kustomization's spec.path names in this tree."""
    return kustomization_targets(kustomization, top, artifacts, sources)[0]


def kustomization_targets(kustomization: Manifest, top: str, artifacts: Sequence[Manifest],
                          sources: Sources) -> list[Target]:
    """What a Flux Kustomization's spec.path names in this tree, then each of its `spec.components`
    (kustomize components, relative to the path)."""
    spec = kustomization.body.get("spec")
    if not isinstance(spec, dict):
        return [NOTHING]
    path = spec.get("path", "./")
    if not isinstance(path, str):
        return [NOTHING]
    if sources.kind_of(kustomization) == OTHER:
        return [NOTHING]  # a tenant's repository, another source: not a folder of this one
    folder, artifact = os.path.dirname(kustomization.origin.path) or ".", _artifact(spec.get("sourceRef"), artifacts)
    found = [path_target(path, folder, top, artifact)]
    components = spec.get("components")
    for component in components if isinstance(components, list) else []:
        if isinstance(component, str) and component.strip():
            found.append(path_target(posixpath.join(path.strip() or ".", component.strip()), folder, top, artifact))
    return found


def path_target(path: str, folder: str, top: str, artifact=None) -> Target:
    """What `path`, written in a file of `folder`, names from the top of the source Flux reads."""
    if _PLACEHOLDERS.search(path):
        return Target(pattern=pattern_of(path))
    path = posixpath.normpath(path.lstrip("/")) if path.strip("./") else "."
    if artifact is not None:
        path = artifact(path) or path
    if leaves(path, top, top):
        return NOTHING
    from scanner.sources.kustomize.flux import source_path  # as Flux reads it: from the source's top

    real = source_path(folder, path, top)
    return Target(folder=real) if os.path.isdir(real) else NOTHING


def has_placeholder(text: str) -> bool:
    return _PLACEHOLDERS.search(text) is not None


def pattern_of(path: str) -> str:
    """A path holding variables as a pattern over folders' paths from the top: each variable any text,
    and the path may start below the top (a source pushed from a subfolder)."""
    parts = _PLACEHOLDERS.split(path.strip().lstrip("/").removeprefix("./").rstrip("/"))
    if len(parts) > 6:
        return ".*"  # a path of many variables may be any folder (and a pattern of many `.*` is slow)
    body = ".*".join(re.escape(p) for p in parts)
    return f"(?:.*/)?{body}" if body else ".*"


def _artifact(source, artifacts: Sequence[Manifest]):
    """For an ExternalArtifact source, where in the repository its paths come from."""
    if not isinstance(source, dict) or source.get("kind") != "ExternalArtifact":
        return None
    return lambda path: artifact_origin(str(source.get("name")), path, artifacts)


def artifact_origin(name: str, path: str, artifacts: Sequence[Manifest]) -> str | None:
    """Where in the repository a path of an ArtifactGenerator's artifact comes from: `copy` entries map
    `@source/FROM/**` to `@artifact/TO/`."""
    for generator in artifacts:
        spec = generator.body.get("spec") if isinstance(generator.body.get("spec"), dict) else {}
        for artifact in spec.get("artifacts") or []:
            if not isinstance(artifact, dict) or artifact.get("name") != name:
                continue
            for copy in artifact.get("copy") or []:
                if not isinstance(copy, dict):
                    continue
                source, target = str(copy.get("from", "")), str(copy.get("to", ""))
                origin = source.partition("/")[2].removesuffix("**").rstrip("/")
                into = target.removeprefix("@artifact").strip("/")
                if not source.startswith("@") or not origin:
                    continue
                if path == into or path.startswith(f"{into}/") or not into:
                    rest = path[len(into):].lstrip("/") if into else path
                    return posixpath.normpath(posixpath.join(origin, rest))
    return None


def instance_sync(instance: Manifest, top: str) -> Target:
    """The folder a FluxInstance syncs (spec.sync.path of its own source: this repository)."""
    spec = instance.body.get("spec")
    sync = spec.get("sync") if isinstance(spec, dict) else None
    path = sync.get("path") if isinstance(sync, dict) else None
    return path_target(path, os.path.dirname(instance.origin.path) or ".", top) if isinstance(path, str) else NOTHING
