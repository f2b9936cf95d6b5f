"""References in a chart's values.schema.json files that helm would follow out of the chart.

helm validates the values against the `values.schema.json` of the chart and of each subchart (a folder
or a `.tgz` archive in charts/, at any depth), and its validator loads what the schemas refer to: a
`$ref`, `$dynamicRef` or `$recursiveRef` to an http(s) URL is fetched (so whether validation fails
would tell a pull request's author whether an internal URL answers), a `file:` URL, an absolute path
or a relative one (helm 4 resolves it against `file:///`) is read from the disk, and helm 4 fetches a
`$schema` it does not have built in. Measured with a loopback server (helm 4.1.4, 3.17.2):

- `$schema`: helm 4 has drafts 4, 6, 7, 2019-09 and 2020-12 (and their vocabularies) built in,
  as http:// or https:// json-schema.org URLs, and fetches anything else (draft 3 too); helm 3 never
  loads a `$schema`;
- a `$ref` to those metaschemas: helm 3 fetches all but the http:// drafts 4, 6 and 7;
- a `$ref` starting with `#` stays in its document; a `$id` alone loads nothing.

So a reference is local when it is a fragment (or one of the metaschemas both helms have), and
`remote_references` lists the others, each with the file that holds it; `refused` says which of them
a render may not follow: every one without --allow-network, and anything but an http(s) URL even
with it (nothing outside the repository is read). A schema kubehop cannot read as JSON, or an archive
it cannot open within its bounds, counts as refused too, unless the text cannot hold a reference.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import posixpath
import re
import tarfile
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

SCHEMA_FILE = "values.schema.json"
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_IDS = ("$id", "id")  # `id`: draft 4
_HELM_BASE = "file:///values.schema.json"  # where helm 4 says the chart's schema is
_META = r"https?://json-schema\.org/(draft-0[467]/schema|draft/20(19-09|20-12)/(schema|meta/[a-z-]+)|schema)(#.*)?"
_BUILT_IN_SCHEMA = re.compile(_META)  # a $schema helm 4 does not load
_BUILT_IN_REF = re.compile(r"http://json-schema\.org/draft-0[467]/schema(#.*)?")  # a $ref neither helm loads
_MAX_SCHEMA_BYTES = 20 << 20
_MAX_ARCHIVE_BYTES = 100 << 20  # unpacked, archives inside archives included (helm's own bound is 100 MiB)
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Reference:
    file: str  # the schema, as displayed: a path, with `!` into an archive (charts/a-1.0.tgz!a/values.schema.json)
    keyword: str  # $ref, $schema, ...; "" when the schema could not be read
    target: str  # as written, or why the file could not be read
    fetched: bool  # an http(s) URL helm would fetch (allowed with --allow-network); else read from disk or unknown

    def describe(self) -> str:
        if not self.keyword:
            return f"{self.file} could not be checked for references ({self.target})"
        shown = self.target if len(self.target) <= 200 else self.target[:200] + "..."
        return f"{self.file} has {self.keyword} {shown!r}"


def refused(references: list[Reference], allow_network: bool) -> list[Reference]:
    """The references a render may not follow."""
    return [r for r in references if not (allow_network and r.fetched)]


def explain(references: list[Reference]) -> str:
    """What a notice says of references a render does not follow (the first three named)."""
    shown = "; ".join(r.describe() for r in references[:3])
    if len(references) > 3:
        shown += f"; and {len(references) - 3} more"
    fetched = sum(r.fetched for r in references)
    rules = (["helm fetches an http(s) reference only with --allow-network"] if fetched else []) + \
        (["a file, a path or what kubehop cannot check is never followed"] if fetched < len(references) else [])
    return f"values.schema.json refers out of the chart: {shown} ({'; '.join(rules)})"


def remote_references(chart_dir: str, shown_as: str | None = None) -> list[Reference]:
    """Every reference out of its own document in the chart's schemas and its subcharts'; `shown_as`
    is how the chart's folder is named in them (its folder in the tree, for a throwaway copy)."""
    found: list[Reference] = []
    budget = [_MAX_ARCHIVE_BYTES]
    _folder(chart_dir, shown_as or chart_dir, found, budget, set(), 0)
    return found


def _folder(folder: str, shown: str, found: list[Reference], budget: list[int], seen: set[str], depth: int) -> None:
    real = os.path.realpath(folder)
    if real in seen or depth > _MAX_DEPTH:
        return
    seen.add(real)
    schema = os.path.join(folder, SCHEMA_FILE)
    if os.path.isfile(schema):
        found.extend(_file(schema, os.path.join(shown, SCHEMA_FILE)))
    for name, path in _subcharts(os.path.join(folder, "charts")):
        display = os.path.join(shown, "charts", name)
        if os.path.isdir(path):
            _folder(path, display, found, budget, seen, depth + 1)
        elif os.path.isfile(path):
            found.extend(_archive_file(path, display, budget))


def _subcharts(charts: str) -> list[tuple[str, str]]:
    """What helm's loader takes for subcharts in charts/: folders, and files ending .tgz; not names
    starting with `_` or `.`."""
    try:
        names = sorted(os.listdir(charts))
    except OSError:
        return []
    return [(name, os.path.join(charts, name)) for name in names
            if not name.startswith(("_", ".")) and (name.endswith(".tgz") or os.path.isdir(os.path.join(charts, name)))]


def _file(path: str, shown: str) -> list[Reference]:
    try:
        size = os.path.getsize(path)
        if size > _MAX_SCHEMA_BYTES:
            return [Reference(shown, "", f"larger than {_MAX_SCHEMA_BYTES >> 20} MiB", False)]
        stat = os.stat(path)
    except OSError as err:
        return [Reference(shown, "", err.strerror or str(err), False)]
    return list(_cached_file(path, stat.st_mtime_ns, stat.st_size, stat.st_ino, shown))


@functools.lru_cache(maxsize=1024)
def _cached_file(path: str, _mtime: int, _size: int, _inode: int, shown: str) -> tuple[Reference, ...]:
    try:
        with open(path, "rb") as handle:
            return tuple(references_in(handle.read(_MAX_SCHEMA_BYTES + 1), shown))
    except OSError as err:
        return (Reference(shown, "", err.strerror or str(err), False),)


def _archive_file(path: str, shown: str, budget: list[int]) -> list[Reference]:
    try:
        stat = os.stat(path)
    except OSError as err:
        return [Reference(shown, "", err.strerror or str(err), False)]
    cached = _cached_archive(path, stat.st_mtime_ns, stat.st_size, stat.st_ino, shown)
    budget[0] -= cached[1]
    if budget[0] < 0:
        return [Reference(shown, "", f"its archives unpack to more than {_MAX_ARCHIVE_BYTES >> 20} MiB", False)]
    return list(cached[0])


@functools.lru_cache(maxsize=256)
def _cached_archive(path: str, _mtime: int, _size: int, _inode: int, shown: str) -> tuple[tuple[Reference, ...], int]:
    budget = [_MAX_ARCHIVE_BYTES]
    found: list[Reference] = []
    try:
        with open(path, "rb") as handle:
            _archive(handle, shown, found, budget, 0)
    except OSError as err:
        found.append(Reference(shown, "", err.strerror or str(err), False))
    return tuple(found), _MAX_ARCHIVE_BYTES - budget[0]


class _Bounded(io.RawIOBase):
    """A stream that stops (an error) once more than the budget has been read from it."""

    def __init__(self, stream, budget: list[int]):
        self._stream, self._budget = stream, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._stream.read(len(buffer))
        self._budget[0] -= len(data)
        if self._budget[0] < 0:
            raise _OverBudget
        buffer[:len(data)] = data
        return len(data)


class _OverBudget(Exception):
    pass


def _archive(stream, shown: str, found: list[Reference], budget: list[int], depth: int) -> None:
    """The schemas of a chart archive, read as helm's loader reads one: its first path segment is the
    chart's folder, whatever its name; `charts/` below it holds subchart folders and archives."""
    try:
        unpacked = _Bounded(gzip.GzipFile(fileobj=stream), budget)
        with tarfile.open(fileobj=io.BufferedReader(unpacked), mode="r|") as tar:
            for member in tar:
                parts = _path_in_chart(member.name)
                if not member.isfile() or not parts:
                    continue
                where = f"{shown}!{member.name}"
                if _is_schema(parts):
                    if member.size > _MAX_SCHEMA_BYTES:
                        found.append(Reference(where, "", f"larger than {_MAX_SCHEMA_BYTES >> 20} MiB", False))
                    else:
                        found.extend(references_in(tar.extractfile(member).read(), where))
                elif _is_archive(parts):
                    if depth >= _MAX_DEPTH:
                        found.append(Reference(where, "", "archives nested too deep", False))
                    else:
                        _archive(io.BytesIO(tar.extractfile(member).read()), where, found, budget, depth + 1)
    except _OverBudget:
        found.append(Reference(shown, "", f"it unpacks to more than {_MAX_ARCHIVE_BYTES >> 20} MiB", False))
    except (OSError, EOFError, tarfile.TarError, ValueError, gzip.BadGzipFile) as err:
        found.append(Reference(shown, "", f"not a chart archive kubehop can read: {err}", False))


def _path_in_chart(name: str) -> list[str]:
    """A member's path in its chart as helm's loader makes it: without its first segment (split at
    backslashes if it holds any), cleaned; nothing for a path that leaves the chart."""
    delimiter = "\\" if "\\" in name else "/"
    rest = delimiter.join(name.split(delimiter)[1:]).replace(delimiter, "/")
    cleaned = posixpath.normpath(rest) if rest else "."
    if cleaned == "." or cleaned.startswith(("..", "/")):
        return []
    return cleaned.split("/")


def _is_schema(parts: list[str]) -> bool:
    """values.schema.json of the chart or of a subchart folder: [charts, NAME]* values.schema.json."""
    return parts[-1] == SCHEMA_FILE and _subchart_path(parts[:-1])


def _is_archive(parts: list[str]) -> bool:
    return parts[-1].endswith(".tgz") and len(parts) >= 2 and parts[-2] == "charts" and _subchart_path(parts[:-2]) \
        and not parts[-1].startswith(("_", "."))


def _subchart_path(parts: list[str]) -> bool:
    return len(parts) % 2 == 0 and all(parts[i] == "charts" and not parts[i + 1].startswith(("_", "."))
                                       for i in range(0, len(parts), 2))


def references_in(data: bytes, shown: str) -> list[Reference]:
    """The references out of their own document in one schema's text."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        document = json.loads(text, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError) as err:
        if "$" not in text and "\\u" not in text.lower():  # no keyword helm follows can be in it
            return []
        return [Reference(shown, "", f"not JSON kubehop can read: {str(err)[:120]}", False)]
    found = []
    stack: list[tuple[object, str]] = [(document, _HELM_BASE)]
    while stack:
        node, base = stack.pop()
        if not isinstance(node, _Pairs):
            if isinstance(node, list):
                stack.extend((item, base) for item in node)
            continue
        for key, value in node:
            if key in _IDS and isinstance(value, str):
                base = _join(base, value)
        for key, value in node:
            if isinstance(value, str) and key in (*_REFERENCES, "$schema"):
                fetched = _classify(key, value, base)
                if fetched is not None:
                    found.append(Reference(shown, key, value, fetched))
            else:
                stack.append((value, base))
    return found


class _Pairs(list):
    """A JSON object as all its (key, value) pairs, a key given twice included."""


def _classify(keyword: str, value: str, base: str) -> bool | None:
    """None for a reference that stays in its document (or a metaschema helm has), True for an http(s)
    URL helm would fetch, False for anything else (a file read, or something kubehop does not know)."""
    if keyword == "$schema":
        if _BUILT_IN_SCHEMA.fullmatch(value):
            return None
        target = value
    else:
        if value.startswith("#") or _BUILT_IN_REF.fullmatch(value):
            return None
        target = _join(base, value)
    return urlsplit(target).scheme in ("http", "https") if _url_like(target) else False


def _join(base: str, reference: str) -> str:
    try:
        return urljoin(base, reference)
    except ValueError:
        return reference


def _url_like(text: str) -> bool:
    try:
        urlsplit(text)
    except ValueError:
        return False
    return True
