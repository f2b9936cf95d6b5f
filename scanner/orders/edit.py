"""The edits to an upgrade order's document that scanner.orders.write makes, with ruamel.yaml.

A document is loaded round-trip, the order's version (or minor channel) set for the hop, and the
change spliced back into the file's own lines as `kubehop fix` does (scanner.yaml_layout): comments,
key order and quoting stay. `edit_document` moves the orders of a file kept as desired state;
`new_object` copies an order that is one object per attempt. Apart from scanner.orders.write, so
that ruamel.yaml is imported only when a file is edited.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError as RuamelError

from scanner.orders.kinds import OrderKind
from scanner.orders.read import UpgradeOrder
from scanner.orders.releases import newest_patch
from scanner.versions import Minor
from scanner.yaml_layout import Layout, splice

_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
# What ruamel.yaml's round-trip loader raises on files PyYAML reads (duplicate keys, !!bool maybe...).
UNLOADABLE = (RuamelError, ValueError, KeyError, AttributeError, TypeError, OverflowError)


def _version_for(order: UpgradeOrder, minor: Minor) -> tuple[str, str | None]:
    """The exact version to write, and the note when only the minor can be named."""
    distro = order.distro or "kubernetes"
    release = newest_patch(distro, minor)
    if release is not None:
        return release.version, None
    return f"v{minor}", (f"kubehop: pick the patch: the data knows no {distro} release of {minor} "
                         f"(rules/distro-releases.yaml)")


def _set_version(obj: CommentedMap, order: UpgradeOrder, minor: Minor) -> tuple[str, str | None]:
    """Set the order's version (or minor channel) for `minor`; what it now says, and a note."""
    kind = order.kind
    spec = _mapping(obj, kind.version[:-1])
    if order.version is None and order.channel and order.minor is not None and kind.minor_channel:
        m = kind.minor_channel.search(order.channel)
        channel = order.channel[:m.start("minor")] + str(minor) + order.channel[m.end("minor"):]
        _mapping(obj, kind.channel[:-1])[kind.channel[-1]] = channel
        return channel, None
    version, note = _version_for(order, minor)
    key = kind.version[-1]
    if order.version is None and order.channel and kind.channel:  # a floating channel: pin the version
        parent = _mapping(obj, kind.channel[:-1])
        position = list(parent).index(kind.channel[-1])
        del parent[kind.channel[-1]]
        parent.insert(position, key, version)
        note = note or f"kubehop: pinned; the order followed the channel {order.channel}"
    else:
        old = spec.get(key)
        spec[key] = type(old)(version) if isinstance(old, str) and type(old) is not str else version
    if note:
        spec.yaml_add_eol_comment(note, key)
    return version, note


def _field(order: UpgradeOrder) -> str:
    kind = order.kind
    moves_channel = order.version is None and order.minor is not None and kind.channel
    return ".".join(kind.channel if moves_channel else kind.version)


def _mapping(obj: CommentedMap, path: Sequence[str]) -> CommentedMap:
    node = obj
    for key in path:
        if not isinstance(node.get(key), CommentedMap):
            node[key] = CommentedMap()
        node = node[key]
    return node


def edit_document(lines: list[str], orders: list[UpgradeOrder], target: Minor, done: list[str],
                  notes: list[str]) -> list[str]:
    """The lines of one document with the versions of its `orders` set for `target`; what each now says
    goes to `done`, what a person must know to `notes`."""
    trailing = bool(lines) and lines[-1] == ""  # the file's final newline
    body = lines[:-1] if trailing else lines
    text = "\n".join(body) + "\n"
    layout = Layout(text)
    document = layout.load(text)
    before = layout.dump(document)
    replaced: list[tuple[str, str]] = []  # (old value, new value) of plain replacements
    for obj in _objects(document):
        order = next((o for o in orders if _same_object(obj, o)), None)
        if order is not None:
            now, note = _set_version(obj, order, target)
            done.insert(0, f"{order.what}: {_field(order)} {now}")  # documents are edited last first
            notes.extend([note] if note else [])
            if note is None:
                replaced.append((order.version.text if order.version else order.channel or "", now))
    merged = splice(body, before, layout.dump(document))
    if len(merged) == len(body):
        merged = [_keep_spacing(old, new, replaced) for old, new in zip(body, merged)]
    return merged + ([""] if trailing else [])


def _keep_spacing(old: str, new: str, replaced: list[tuple[str, str]]) -> str:
    """A line whose value alone changed, as the original line with only the value replaced: ruamel
    keeps a comment's column, which moves the comment when the value's length changes."""
    for before, after in replaced:
        if old != new and old.count(before) == 1 and new.count(after) == 1:
            candidate = old.replace(before, after)
            if candidate.split("#")[0].split() == new.split("#")[0].split():
                return candidate
    return new


def _objects(node: Any) -> Iterable[CommentedMap]:
    if isinstance(node, CommentedMap) and isinstance(node.get("kind"), str):
        items = node.get("items")
        if node["kind"].endswith("List") and isinstance(items, list):
            for item in items:
                yield from _objects(item)
        else:
            yield node


def _same_object(obj: CommentedMap, order: UpgradeOrder) -> bool:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    manifest = order.manifest
    return (obj.get("apiVersion"), obj.get("kind")) == (manifest.api_version, manifest.kind) and \
        (metadata.get("name") or metadata.get("generateName")) == manifest.name


def new_object(lines: list[str], order: UpgradeOrder, target: Minor, done: list[str], notes: list[str]) -> str:
    """The order's document as a new object at `target`: its name left to the API server."""
    text = "\n".join(lines).strip("\n") + "\n"
    layout = Layout(text)
    document = layout.load(text)
    obj = next((o for o in _objects(document) if _same_object(o, order)), None)
    if obj is None:
        raise ValueError(f"{order.what} is not in its document as ruamel.yaml reads it")
    metadata = obj.get("metadata")
    if isinstance(metadata, CommentedMap):
        _fresh_metadata(metadata)
    obj.pop("status", None)
    now, note = _set_version(obj, order, target)
    done.append(f"new {order.kind.kind} ({_role_name(order.kind, order.role)}): {_field(order)} {now}, "
                f"after {order.what}")
    notes.extend([note] if note else [])
    return "\n".join(layout.dump(obj)) + "\n"


def _fresh_metadata(metadata: CommentedMap) -> None:
    """A name of its own for each attempt: generateName, as `kubectl create` of a new object needs."""
    name = metadata.get("name")
    if isinstance(name, str) and "generateName" not in metadata:
        position = list(metadata).index("name")
        prefix = name.rsplit("-", 1)[0] + "-" if "-" in name else name + "-"
        metadata.insert(position, "generateName", prefix)
    metadata.pop("name", None)
    for key in _SERVER_SET:
        metadata.pop(key, None)


def _role_name(kind: OrderKind, role: str | None) -> str:
    return role or "role not stated"
