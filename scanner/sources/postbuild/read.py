"""The Flux Kustomizations of the plain files, read before anything else, and the files that may hold
the ConfigMaps and Secrets they substitute from. Light: a scan none of whose Kustomizations substitutes
(or patches a child's postBuild) imports nothing of the builds (plan.py) and stops here. What it reads
and composes is kept (files/kept.py): the main read takes it rather than reading each file again."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from yaml.nodes import SequenceNode

from scanner.model import Manifest
from scanner.nodes import mapping_get, scalar, value_at
from scanner.sources.files.kept import Kept
from scanner.sources.postbuild import FLUX
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents, manifests_of, read_text


@dataclass
class Found:
    """The Flux Kustomizations of the plain files, and where their ConfigMaps and Secrets may be."""

    kept: Kept  # what was read and composed of the files, for the plan's reading and the main read
    kustomizations: list[tuple[Manifest, str]] = field(default_factory=list)  # (object, real path of its file)
    candidates: list[str] = field(default_factory=list)  # files that may hold a ConfigMap or Secret


def read_flux(files: Iterable[str], kept: Kept) -> Found | None:
    """What the plan is made of; None when no Flux Kustomization substitutes variables. What it reads
    and composes of the files is in `kept` either way."""
    found = Found(kept)
    for path in files:
        text, problem = kept.read(path)
        if problem is not None:
            continue
        if "ConfigMap" in text or "Secret" in text:
            found.candidates.append(path)
        if FLUX not in text or "Kustomization" not in text:
            continue
        found.kustomizations.extend((manifest, os.path.realpath(path)) for manifest in objects(text, path, kept)
                                    if manifest.kind == "Kustomization" and manifest.group == FLUX)
    if not any(value_at(m.node, "spec", "postBuild") is not None or patch_bodies(m.node)
               for m, _ in found.kustomizations):
        return None
    return found


def objects(text: str, path: str, kept: Kept) -> list[Manifest]:
    """The objects of a file's text, as read_text reads them; its documents composed as the main read
    composes them are kept for it."""
    try:
        composed = kept.compose(path, text)
        if composed is None:  # a YAML error: read_text makes what it can of the rest
            return read_text(text, path)[0]
        return [manifest for node, _ in composed if node is not None for manifest in manifests_of(node, path)]
    except (DocumentProblem, TemplateSyntax):
        return []


def patch_bodies(node: Any) -> list[Any]:
    """The documents of a Kustomization's patches that touch a postBuild (what they may name)."""
    items = value_at(node, "spec", "patches")
    texts = [scalar(mapping_get(item, "patch")) or "" for item in (items.value if isinstance(items, SequenceNode)
                                                                    else ())]
    return [body for text in texts if "postBuild" in text for body in _documents(text)]


def _documents(text: str) -> list[Any]:
    try:
        return compose_documents(text, "patch")[0]
    except (DocumentProblem, TemplateSyntax):
        return []
