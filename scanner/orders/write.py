"""The upgrade orders that perform each hop of a plan, written in the tree's own style.

For window N (a → b) every cluster of the tree gets, under `NN-b/` and at the path of the file
it follows (so copying the window's folder over the tree places it beside the existing orders):

- orders a controller reads as desired state (system-upgrade Plans: `writes: in-place`) — the
  file that holds them, with each order's version set to b's newest known patch for the
  distribution (rules/distro-releases.yaml), or its minor channel moved to b;
- orders that are one object per attempt (KubernetesNodeUpgrade: `new-object`) — a new file next
  to the newest ones, the control-plane order then the worker order, copied from them;
- nothing for kinds that cannot be moved by their version alone (Cluster API: `none`): a note.

Documents are edited with ruamel.yaml (scanner.orders.edit, imported only when a file is edited) and
spliced back as `kubehop fix` does: comments, key order and quoting stay. Without a known patch the
order names the minor (v1.37) with a comment saying to pick the patch.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from scanner.orders.read import Cluster, UpgradeOrder, clusters
from scanner.paths import where
from scanner.sources.files.walk import read_file
from scanner.versions import Minor

_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$")
_VERSION_TOKEN = re.compile(r"[-_.]?v?1[-_.]\d+(?:[-_.]\d+)?$")


@dataclass(frozen=True)
class WrittenFile:
    window: int
    target: Minor
    path: str  # relative to the output folder: 01-1.32/system-upgrade/plans.yaml
    based_on: str  # the tree's file it follows
    orders: tuple[str, ...]  # what it does: "Plan system-upgrade/k3s-server → v1.32.13+k3s1"
    text: str
    notes: tuple[str, ...] = ()  # e.g. the patch to pick
    diff: str = ""  # what changes against the file it follows (all of it for a new file)


@dataclass
class WindowOrders:
    files: list[WrittenFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is not written, and why

    def for_window(self, number: int) -> list[WrittenFile]:
        return [f for f in self.files if f.window == number]


def orders_for_windows(orders: Sequence[UpgradeOrder], windows: Iterable[tuple[int, Minor, Minor]],
                       root: str) -> WindowOrders:
    """The files that perform each window (number, source, target) for every cluster of `orders`."""
    result = WindowOrders()
    groups = clusters(orders)
    for group in groups:
        kind = group.orders[0].kind
        if kind.writes == "none":
            first = group.orders[0]
            result.notes.append(f"{kind.title} orders are not written ({first.what} at "
                                f"{where(first.origin.path, first.origin.line)}): {kind.not_written}")
    for number, _, target in windows:
        for group in groups:
            writes = group.orders[0].kind.writes
            try:
                if writes == "in-place":
                    result.files.extend(_in_place(group, number, target, root, result.notes))
                elif writes == "new-object":
                    result.files.extend(_new_objects(group, number, target, root, result.notes))
            except _unloadable() as err:  # a file ruamel.yaml cannot load (the scan names what is wrong in it)
                first = group.orders[0]
                result.notes.append(f"{first.what} at {first.origin.path}:{first.origin.line}: its orders are not "
                                    f"written: ruamel.yaml cannot rewrite its file ({type(err).__name__}); "
                                    "correct the YAML first")
    return result


def _unloadable() -> tuple[type[Exception], ...]:
    """What editing a file may raise (scanner.orders.edit.UNLOADABLE): asked for only as the exception is
    matched, so that a plan none of whose orders is edited does not import ruamel.yaml."""
    from scanner.orders.edit import UNLOADABLE

    return UNLOADABLE


def write(result: WindowOrders, folder: Path) -> list[Path]:
    written = []
    for item in result.files:
        path = folder / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item.text, encoding="utf-8")
        written.append(path)
    return written


def _diff(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{name}", f"b/{name}", n=1, lineterm="")
    return "\n".join(list(lines)[2:])  # the hunks; the file names are the report's to say


def window_folder(number: int, target: Minor) -> str:
    return f"{number:02d}-{target}"


# --- in place: the files of the orders, with their versions moved ---------------------------------

def _in_place(group: Cluster, number: int, target: Minor, root: str, notes: list[str]) -> Iterable[WrittenFile]:
    by_file: dict[str, list[UpgradeOrder]] = {}
    for order in group.control_planes + group.unknown + group.live_workers:
        if order.version is None and order.channel is None:
            if number == 1:  # its version comes from elsewhere (a kustomize patch, a variable): not guessed
                notes.append(f"{order.what} at {where(order.manifest.origin.path, order.manifest.origin.line)} names no "
                             f"version or channel in its file: set it where the tree sets it")
            continue
        if order.manifest.filled_at(order.node(order.kind.version)) or order.manifest.filled_at(
                order.node(order.kind.channel or order.kind.version)):
            if number == 1:  # its file says `${VAR}`: the version is where the variable is set
                at = where(order.origin.path, order.origin.line)
                notes.append(f"{order.what} at {where(order.manifest.origin.path, order.manifest.origin.line)}: its "
                             f"version is a Flux post-build variable, set at {at}: set it there")
            continue
        by_file.setdefault(order.manifest.origin.path, []).append(order)
    control_planes = {o.manifest.origin.path for o in group.control_planes}
    for path, orders in sorted(by_file.items(), key=lambda item: (item[0] not in control_planes, item[0])):
        text, problem = read_file(path)
        if problem is not None or _relative(path, root) is None:
            continue
        from scanner.orders.edit import edit_document  # ruamel.yaml: once a file is to be edited

        done, notes, lines = [], [], text.split("\n")
        for start, end in _documents(lines):
            inside = [o for o in orders if start < _object_line(o) <= end]
            if inside:
                lines[start:end] = edit_document(lines[start:end], inside, target, done, notes)
        written = "\n".join(lines)
        yield WrittenFile(number, target, f"{window_folder(number, target)}/{_relative(path, root)}", path,
                          tuple(done), written, tuple(dict.fromkeys(notes)), _diff(text, written, path))


def _documents(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line indexes of each `---` separated document, last one first (edits keep indexes)."""
    bounds, start = [], 0
    for index, line in enumerate(lines):
        if _SEPARATOR.match(line):
            bounds.append((start, index))
            start = index + 1
    bounds.append((start, len(lines)))
    return list(reversed(bounds))


def _object_line(order: UpgradeOrder) -> int:
    return order.manifest.origin.line


def _relative(path: str, root: str) -> str | None:
    relative = os.path.relpath(os.path.abspath(path), root)
    return None if relative.startswith(os.pardir) or os.path.isabs(relative) else relative.replace(os.sep, "/")


# --- new objects: the next control-plane and worker orders, next to the newest ---------------------

def _new_objects(group: Cluster, number: int, target: Minor, root: str, notes: list[str]) -> Iterable[WrittenFile]:
    templates = [o for o in (group.newest_control_plane, _newest(group.live_workers)) if o is not None]
    if not templates:
        return
    if group.newest_control_plane is None:
        first = templates[0]
        notes.append(f"{first.what} at {where(first.origin.path, first.origin.line)}: no control-plane order to follow "
                     f"in the tree; the worker orders are written without one")
    elif len(templates) == 1 and number == 1:
        notes.append(f"{templates[0].kind.title}: no worker order in the tree to copy; add one at each "
                     f"window's version once the control plane is Ready there")
    by_file: dict[str, list[UpgradeOrder]] = {}
    for order in templates:
        by_file.setdefault(order.manifest.origin.path, []).append(order)
    for path, orders in by_file.items():
        relative = _relative(path, root)
        text, problem = read_file(path)
        if relative is None or problem is not None:
            continue
        from scanner.orders.edit import new_object  # ruamel.yaml: once a file is to be copied

        documents, done, written_notes = [], [], []
        lines = text.split("\n")
        for order in orders:
            start, end = next(((s, e) for s, e in _documents(lines) if s < _object_line(order) <= e), (0, 0))
            documents.append(new_object(lines[start:end], order, target, done, written_notes))
        folder, name = os.path.split(relative)
        stem, suffix = os.path.splitext(name)
        name = f"{_VERSION_TOKEN.sub('', stem) or stem}-v{target}{suffix or '.yaml'}"
        written = "---\n".join(documents)
        yield WrittenFile(number, target, "/".join(filter(None, (window_folder(number, target), folder, name))),
                          path, tuple(done), written, tuple(dict.fromkeys(written_notes)), _diff("", written, name))


def _newest(orders: list[UpgradeOrder]) -> UpgradeOrder | None:
    from scanner.orders.read import order_key

    versioned = [o for o in orders if o.minor is not None]
    return max(versioned, key=order_key) if versioned else None
