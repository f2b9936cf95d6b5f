"""The project's data: rule and compatibility files, validated by JSON Schema, loaded once.

Which schema a file obeys is given by the folder it lives in (`DATA_KINDS`).
Facts about APIs and components live in those files, never in Python.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import yaml

_PACKAGE_DIR = Path(__file__).resolve().parent


class DataError(Exception):
    """A data file that does not obey its schema."""


# folder (relative to the data root) -> schema file name (under <folder's top>/schema/)
DATA_KINDS: dict[str, str] = {
    "rules/core": "rules/schema/api-rule.schema.json",
    "rules/served-apis.yaml": "rules/schema/served-apis.schema.json",
    "rules/kubernetes.yaml": "rules/schema/kubernetes.schema.json",
    "rules/fields": "rules/schema/field-rule.schema.json",
    "rules/workloads.yaml": "rules/schema/workloads.schema.json",
    "rules/helm.yaml": "rules/schema/helm.schema.json",
    "rules/lifecycle/crd.yaml": "rules/schema/crd-lifecycle.schema.json",
    "rules/lifecycle/version-skew.yaml": "rules/schema/version-skew.schema.json",
    "rules/crds": "rules/schema/crd-rule.schema.json",
    "rules/hop-notes": "rules/schema/hop-notes.schema.json",
    "compat-matrix": "compat-matrix/schema/component.schema.json",
    "rules/cluster-version.yaml": "rules/schema/cluster-version.schema.json",
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


def read_yaml(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


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
    root = root or data_root()
    raw = (root / relative).read_bytes()
    document = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schema_path = schema_for(relative)
    stamp = _validation_stamp(raw, schema_path)
    if stamp is None or not stamp.exists():
        validate(document, schema_path, relative)
        _remember(stamp)
    return document


def _validation_stamp(raw: bytes, schema_path: str) -> Path | None:
    """A cache entry proving these exact bytes passed this exact schema, so that a run on one
    file (a pre-commit hook) does not pay for importing jsonschema and validating everything."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if os.environ.get("KUBEHOP_NO_CACHE"):
        return None
    digest = hashlib.sha256(raw + b"\0" + json.dumps(schema(schema_path), sort_keys=True).encode()).hexdigest()
    return Path(cache) / "kubehop" / "validated" / digest


def _remember(stamp: Path | None) -> None:
    if stamp is None:
        return
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass  # a read-only home only costs the next run a validation


def load_folder(relative: str, root: Path | None = None) -> list[tuple[str, Any]]:
    """Every YAML file of a data folder, validated, as (relative path, content), sorted."""
    root = root or data_root()
    folder = root / relative
    files = sorted(p for p in folder.glob("*.yaml")) if folder.is_dir() else []
    return [(f"{relative}/{p.name}", load(f"{relative}/{p.name}", root)) for p in files]
