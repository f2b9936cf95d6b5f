"""The project's data: rule and compatibility files, validated by JSON Schema, loaded once.

Which schema a file obeys is given by the folder it lives in (`DATA_KINDS`).
Facts about APIs and components live in those files, never in Python.
"""

from __future__ import annotations

import functools
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
    document = read_yaml(root / relative)
    validate(document, schema_for(relative), relative)
    return document


def load_folder(relative: str, root: Path | None = None) -> list[tuple[str, Any]]:
    """Every YAML file of a data folder, validated, as (relative path, content), sorted."""
    root = root or data_root()
    folder = root / relative
    files = sorted(p for p in folder.glob("*.yaml")) if folder.is_dir() else []
    return [(f"{relative}/{p.name}", load(f"{relative}/{p.name}", root)) for p in files]
