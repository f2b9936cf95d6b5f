"""A throwaway view of a repository in which some kustomizations are replaced, for kustomize to build.

kubehop renders `helmCharts` itself, so kustomize must build a kustomization whose `helmCharts` are
replaced by the rendered objects, without a byte written into the user's tree. The view mirrors the
repository's layout: the replaced kustomization folders (and the folders above them) are real
folders holding the new kustomization file and copies of the files it reads (kustomize refuses, as
outside its root, a file reached through a symbolic link); everything else is a symbolic link to
the original, so relative references (`../base`) lead where they led. Nothing whose real path is
outside the repository appears in the view.
"""

from __future__ import annotations

import os
import shutil

from scanner.containment import inside
from scanner.sources.files.walk import KUSTOMIZATION_FILES, SKIPPED_DIRS


def build_view(root: str, top: str, replaced: dict[str, dict[str, str]], copied: set[str]) -> None:
    """Lay out under `top` the repository at `root` (real paths): `replaced` maps a kustomization folder
    to the files written there instead of its kustomization file; `copied` files are copied, not linked."""
    real_dirs = {root}
    for folder in replaced:
        real_dirs.update(_up_to(folder, root))
    for path in copied:
        real_dirs.update(_up_to(os.path.dirname(path), root))
    for folder in sorted(real_dirs):
        os.makedirs(_in_view(folder, root, top), exist_ok=True)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            source = os.path.join(folder, name)
            if source in real_dirs or name in SKIPPED_DIRS:
                continue
            if folder in replaced and name in KUSTOMIZATION_FILES:
                continue
            if not inside(source, root):
                continue  # a link leaving the repository: not in the view at all
            target = _in_view(source, root, top)
            direct_file = folder in replaced and os.path.isfile(source)
            if source in copied or direct_file:
                shutil.copyfile(source, target)
            else:
                os.symlink(source, target)
        for name, text in replaced.get(folder, {}).items():
            with open(os.path.join(_in_view(folder, root, top), name), "w", encoding="utf-8") as handle:
                handle.write(text)


def in_view(path: str, root: str, top: str) -> str:
    return _in_view(os.path.realpath(path), root, top)


def from_view(path: str, root: str, top: str) -> str:
    """A path kustomize reported inside the view, as the original path in the repository."""
    path = os.path.normpath(path)
    if path == top or path.startswith(os.path.join(top, "")):
        return os.path.normpath(os.path.join(root, os.path.relpath(path, top)))
    return path


def _in_view(real: str, root: str, top: str) -> str:
    relative = os.path.relpath(real, root)
    return top if relative == "." else os.path.join(top, relative)


def _up_to(folder: str, root: str) -> list[str]:
    """`folder` and every folder above it up to `root` (real paths, `folder` inside `root`)."""
    chain = []
    current = folder
    while inside(current, root) and current != root:
        chain.append(current)
        current = os.path.dirname(current)
    return chain
