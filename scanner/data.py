"""The project's data: rule and compatibility files, validated by JSON Schema, loaded once.

Which schema a file obeys is given by the folder it lives in (`DATA_KINDS`).
Facts about APIs and components live in those files, never in Python.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

_PACKAGE_DIR = Path(__file__).resolve().parent


class DataError(Exception):
    """A data file that does not obey its schema."""


# folder (relative to the data root) -> schema file name (under <folder's top>/schema/)
DATA_KINDS: dict[str, str] = {
    "rules/core": "rules/schema/api-rule.schema.json",
    "rules/served-apis.yaml": "rules/schema/served-apis.schema.json",
    "rules/kubernetes.yaml": "rules/schema/kubernetes.schema.json",
    "rules/migrations": "rules/schema/migration.schema.json",
    "rules/fields": "rules/schema/field-rule.schema.json",
    "rules/workloads.yaml": "rules/schema/workloads.schema.json",
    "rules/cluster-scoped.yaml": "rules/schema/cluster-scoped.schema.json",
    "rules/references.yaml": "rules/schema/references.schema.json",
    "rules/helm.yaml": "rules/schema/helm.schema.json",
    "rules/kustomize.yaml": "rules/schema/kustomize.schema.json",
    "rules/lifecycle/crd.yaml": "rules/schema/crd-lifecycle.schema.json",
    "rules/lifecycle/version-skew.yaml": "rules/schema/version-skew.schema.json",
    "rules/lifecycle/api-calls.yaml": "rules/schema/api-calls.schema.json",
    "rules/crds": "rules/schema/crd-rule.schema.json",
    "rules/hop-notes": "rules/schema/hop-notes.schema.json",
    "compat-matrix": "compat-matrix/schema/component.schema.json",
    "rules/cluster-version.yaml": "rules/schema/cluster-version.schema.json",
    "rules/upgrade-orders.yaml": "rules/schema/upgrade-orders.schema.json",
    "rules/distro-releases.yaml": "rules/schema/distro-releases.schema.json",
    "rules/cluster-config/feature-gates.yaml": "rules/schema/feature-gates.schema.json",
    "rules/cluster-config/component-flags.yaml": "rules/schema/component-flags.schema.json",
    "rules/cluster-config/config-apis.yaml": "rules/schema/config-apis.schema.json",
    "rules/cluster-config/config-sources.yaml": "rules/schema/config-sources.schema.json",
    "rules/client-tools.yaml": "rules/schema/client-tools.schema.json",
}


@functools.cache
def data_root() -> Path:
    """rules/ and compat-matrix/ sit at the repo top; a wheel carries them in scanner/_data."""
    env = os.environ.get("KUBEHOP_DATA_DIR")
    if env:
        return Path(env)
    bundled = _PACKAGE_DIR / "_data"
    if (bundled / "rules").is_dir():
        return bundled
    return _PACKAGE_DIR.parent


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it


def parse_yaml(raw: bytes | str) -> Any:
    """One YAML document as plain data (the safe loader: no tags beyond YAML's own)."""
    return yaml.load(raw, Loader=_LOADER)


def read_yaml(path: Path) -> Any:
    return parse_yaml(path.read_text(encoding="utf-8"))


@functools.cache
def schema(relative: str) -> dict:
    with open(data_root() / relative, encoding="utf-8") as handle:
        return json.load(handle)


def validate(document: Any, schema_path: str, where: str) -> None:
    import jsonschema  # imported here: start-up stays light when nothing needs validating

    validator = jsonschema.Draft202012Validator(schema(schema_path))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        location = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise DataError(f"{where}: {location}: {first.message}")


def schema_for(relative_file: str) -> str:
    for prefix, schema_path in DATA_KINDS.items():
        if relative_file == prefix or relative_file.startswith(prefix + "/"):
            return schema_path
    raise DataError(f"{relative_file}: no schema is declared for this data file")


def load(relative: str, root: Path | None = None) -> Any:
    """Read one data file and validate it against the schema its folder declares."""
    path, schema_path = os.path.join(root or data_root(), relative), schema_for(relative)
    return kept_by_metadata(b"file\0" + relative.encode(), [path, _schema_file(schema_path)],
                            lambda: load_validated(_read_bytes(path), schema_path, relative, parse_yaml))


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:  # not pathlib: a run may read 200 data files
        return handle.read()


def _schema_file(schema_path: str) -> str:
    return os.path.join(data_root(), schema_path)


def load_validated(raw: bytes, schema_path: str, where: str, parse: Callable[[bytes], Any]) -> Any:
    """`parse(raw)`, validated against the schema; or what a run kept for the same bytes and schema."""
    entry = _cache_entry(raw, schema_path)
    document = _read_cached(entry)
    if document is _MISSING:
        document = parse(raw)
        validate(document, schema_path, where)
        _write_cached(entry, document)
    return document


# A run on one file (a pre-commit hook) must not pay for parsing every data file and importing
# jsonschema to validate it. Data that passed its schema is kept, keyed by the hash of its bytes
# and of the schema's, so any edit to either is parsed and validated again (and looked up first by
# the files' metadata: kept_by_metadata).
_MISSING = object()


def _cache_entry(raw: bytes, schema_path: str) -> str | None:
    if os.environ.get("KUBEHOP_NO_CACHE"):
        return None
    return _entry([_schema_digest(schema_path), raw])


def _entry(key: Sequence[bytes]) -> str:
    digest = hashlib.sha256()
    for part in key:
        digest.update(part)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "kubehop", "data", digest.hexdigest())


@functools.cache
def _schema_digest(schema_path: str) -> bytes:
    return hashlib.sha256((data_root() / schema_path).read_bytes()).digest()


# A data file that changed since an entry was written has other metadata: another size or modification
# time and, whatever a tool restores, another change time (or inode). So a run looks its data up by the
# files' metadata first, as Python trusts a module's bytecode, without reading them, and reads and hashes
# them only when that finds nothing (opening, reading and hashing the ~220 of them was a twentieth of a
# one-file run). Such an entry is written only for files none of which changed in the last
# _SETTLED_NS: a file written twice within one tick of the file system's clock can keep its times, so,
# as git does with such "racily clean" files, a file that recent is read every time until it settles.
_SETTLED_NS = 2_000_000_000


def kept_by_metadata(label: bytes, paths: Sequence[str], compute: Callable[[], Any]) -> Any:
    """`compute()`, or what a run kept for the same `label` and `paths` (files, or folders whose listing
    matters) with the same metadata. `compute` must depend only on the files' content (and `label`)."""
    entry, settled = _metadata_entry(label, paths)
    value = _read_cached(entry)
    if value is _MISSING:
        value = compute()
        if settled:
            _write_cached(entry, value)
    return value


def _metadata_entry(label: bytes, paths: Sequence[str]) -> tuple[str | None, bool]:
    if os.environ.get("KUBEHOP_NO_CACHE"):
        return None, False
    key, newest = [b"metadata\0", label], 0
    for path in paths:
        try:
            found = os.stat(path)
        except OSError:
            return None, False  # a file that is not there: compute says so
        key.append(f"\0{path}\0{found.st_size}\0{found.st_mtime_ns}\0{found.st_ctime_ns}\0{found.st_ino}\0"
                   f"{found.st_dev}".encode())
        newest = max(newest, found.st_mtime_ns, found.st_ctime_ns)
    return _entry(key), newest < time.time_ns() - _SETTLED_NS


def _read_cached(entry: str | None) -> Any:
    if entry is None:
        return _MISSING
    try:
        with open(entry, "rb") as handle:
            return marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return _MISSING


def _write_cached(entry: str | None, document: Any) -> None:
    if entry is None:
        return
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        temporary = f"{entry}.{os.getpid()}"
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps(document))
        os.replace(temporary, entry)
    except (OSError, ValueError):
        pass  # a read-only home, or data marshal cannot hold: the next run parses again


def load_folder(relative: str, root: Path | None = None, extra_rules: Sequence[Path] = (),
                later: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """Every YAML file of a data folder, validated, as (path shown in errors, content), sorted.

    `extra_rules` are a user's rule folders, laid out like rules/ (rules/core -> <extra>/core).
    `later`: top-level keys whose values come as `Later`, read when asked for (the catalog's releases).
    """
    root = root or data_root()
    folder = os.path.join(root, relative)
    names = sorted(name for name in os.listdir(folder) if name.endswith(".yaml")) if os.path.isdir(folder) else []
    loaded = _load_all([f"{relative}/{name}" for name in names], root, later)
    for extra in extra_rules:
        for path in sorted((extra / relative.removeprefix("rules/")).glob("*.yaml")):
            document = _read_user_yaml(path)
            validate(document, schema_for(f"{relative}/{path.name}"), str(path))
            loaded.append((str(path), document))
    return loaded


class Later:
    """A value of a data file read the first time it is asked for: a run that needs only the rest of the
    file (a component's detection, not its releases) does not pay for unpacking it."""

    __slots__ = ("_blob", "_value")

    def __init__(self, blob: bytes | None = None, value: Any = None):
        self._blob, self._value = blob, value

    def value(self) -> Any:
        return marshal.loads(self._blob) if self._blob is not None else self._value


def _load_all(files: list[str], root: Path, later: tuple[str, ...]) -> list[tuple[str, Any]]:
    """`load` of each file, kept as one cache entry for them all (keyed by every file's bytes and its
    schema's): a run reads one entry for a folder, not one per file (compat-matrix/ holds 140)."""
    if not files:
        return []
    paths = [os.path.join(root, relative) for relative in files]
    schemas = sorted({_schema_file(schema_for(relative)) for relative in files})
    kept = kept_by_metadata(b"folder\0" + repr((files, later)).encode(), [*paths, *schemas],
                            lambda: _parsed_all(files, [_read_bytes(path) for path in paths], later))
    return [(relative, _with_later(document, blobs, later)) for relative, (document, blobs) in zip(files, kept)]


def _parsed_all(files: list[str], raws: list[bytes], later: tuple[str, ...]) -> list[tuple[Any, dict[str, bytes]]]:
    entry = _folder_entry(files, raws, later)
    kept = _read_cached(entry)
    if kept is _MISSING:
        kept = [_held_back(load_validated(raw, schema_for(relative), relative, parse_yaml), later)
                for relative, raw in zip(files, raws)]
        _write_cached(entry, kept)
    return kept


def _folder_entry(files: list[str], raws: list[bytes], later: tuple[str, ...]) -> str | None:
    if os.environ.get("KUBEHOP_NO_CACHE"):
        return None
    key = [b"folder\0", repr((files, later)).encode()]
    for relative, raw in zip(files, raws):
        key += [_schema_digest(schema_for(relative)), len(raw).to_bytes(8, "big"), raw]
    return _entry(key)


def _held_back(document: Any, later: tuple[str, ...]) -> tuple[Any, dict[str, bytes]]:
    """The document as the folder's cache entry keeps it: each `later` value apart, as its marshalled
    bytes (None in its place)."""
    blobs: dict[str, bytes] = {}
    if not isinstance(document, dict):
        return document, blobs
    for key in later:
        if key in document:
            try:
                blobs[key] = marshal.dumps(document[key])
            except ValueError:  # data marshal cannot hold: kept as it is (and the entry is not written)
                continue
    return ({key: None if key in blobs else value for key, value in document.items()} if blobs else document), blobs


def _with_later(document: Any, blobs: dict[str, bytes], later: tuple[str, ...]) -> Any:
    if not later or not isinstance(document, dict):
        return document
    return {key: (Later(blob=blobs[key]) if key in blobs else Later(value=value)) if key in later else value
            for key, value in document.items()}


def _read_user_yaml(path: Path) -> Any:
    """A file of a user's rules folder: unreadable or malformed YAML is a DataError naming it."""
    try:
        return read_yaml(path)
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte {err.object[err.start]:#04x})") from None
    except yaml.YAMLError as err:
        from scanner.yaml_errors import yaml_error

        raise DataError(str(yaml_error(str(path), err))) from None


def check_rules_folder(folder: Path, kinds: Sequence[str]) -> None:
    """A user's rule folder must exist and hold only files of the data folders `kinds` (e.g. rules/core)."""
    if not folder.is_dir():
        raise DataError(f"{folder}: rules folder not found")
    folders = [kind.removeprefix("rules/") for kind in kinds]
    for path in sorted(folder.rglob("*.y*ml")):
        relative = path.relative_to(folder).parent.as_posix()
        if relative not in folders:
            raise DataError(f"{path}: kubehop reads rule files only from these subfolders of a rules folder: "
                            f"{', '.join(folders)}")
