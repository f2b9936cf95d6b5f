"""Container image references as the tree writes them: name, digest and tag apart, Docker Hub's names
written one way."""

from __future__ import annotations


def split_image(reference: str) -> tuple[str, str | None, str | None]:
    """'quay.io/cilium/cilium:v1.16.5@sha256:...' -> (name, digest, tag)."""
    reference, _, digest = reference.partition("@")
    name, tag = reference, None
    slash = reference.rfind("/")
    colon = reference.rfind(":")
    if colon > slash:
        name, tag = reference[:colon], reference[colon + 1:]
    return name, digest or None, tag


def normalize_image(name: str) -> str:
    """Docker Hub names are written with or without their registry."""
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.removeprefix("library/")
