"""The project's kubehop configuration: `.kubehop.yaml` or `[tool.kubehop]` in pyproject.toml.

Found from the scanned path upward, stopping at a repository's top (a `.git`) or the
filesystem root. Validated by rules/schema/config.schema.json; command-line flags override it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_FILE = ".kubehop.yaml"
PYPROJECT = "pyproject.toml"
SCHEMA = "rules/schema/config.schema.json"


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # the file it was read from; None: no configuration
    target: str | None = None
    current: str | None = None  # the `from` key
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    rules: tuple[Path, ...] = ()
    baseline: str | None = None
    unknown: str | None = None  # warn, block or ignore (None: not set, --unknown's default applies)
    kustomize_load_restrictor: str | None = None  # as kustomize's --load-restrictor (None: its default)

    @property
    def folder(self) -> Path:
        """What the paths in the configuration are relative to."""
        return self.path.parent if self.path else Path.cwd()


def discover(paths: list[str]) -> Config:
    """The configuration that governs `paths` (the first one decides), or an empty one."""
    start = Path(paths[0]) if paths and paths[0] != "-" else Path.cwd()
    found = find_config(start)
    return load_config(found) if found else Config()


def find_config(start: Path) -> Path | None:
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    while True:
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_kubehop_table(pyproject):
            return pyproject
        if (folder / ".git").exists() or folder.parent == folder:
            return None
        folder = folder.parent


def load_config(path: Path) -> Config:
    from scanner.data import DataError, load_validated

    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    parse = _parse_pyproject if path.name == PYPROJECT else _parse_yaml
    try:
        document = load_validated(raw, SCHEMA, str(path), lambda data: _numbers_refused(parse(data, path), path))
    except DataError as err:
        raise ConfigError(str(err)) from None
    folder = path.parent
    return Config(
        path=path,
        target=document.get("target"),
        current=document.get("from"),
        paths=tuple(os.path.relpath(folder / p) for p in document.get("paths", ())),
        exclude=tuple(document.get("exclude", ())),
        ignore=tuple(document.get("ignore", ())),
        severity=dict(document.get("severity", {})),
        rules=tuple((folder / p).resolve() for p in document.get("rules", ())),
        baseline=os.path.relpath(folder / document["baseline"]) if "baseline" in document else None,
        unknown=document.get("unknown"),
        kustomize_load_restrictor=document.get("kustomize_load_restrictor"),
    )


def _has_kubehop_table(pyproject: Path) -> bool:
    # A cheap look first: most pyproject.toml files have no [tool.kubehop].
    try:
        return "tool.kubehop" in pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _parse_pyproject(raw: bytes, path: Path) -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10: the same parser, packaged as tomli
        try:
            import tomli as tomllib
        except ImportError:
            raise ConfigError(f"{path}: reading [tool.kubehop] needs Python 3.11+ or the tomli package; "
                              f"or use {CONFIG_FILE}") from None
    try:
        return tomllib.loads(raw.decode("utf-8")).get("tool", {}).get("kubehop", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read: {err}") from None


def _parse_yaml(raw: bytes, path: Path) -> Any:
    from scanner.sources.yamldoc import DocumentProblem, load_data

    try:
        document = load_data(raw.decode("utf-8-sig"), str(path))
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: cannot read: not UTF-8 text (byte 0x{raw[err.start]:02x})") from None
    except DocumentProblem as problem:
        where = f"{path}:{problem.line}" if problem.line else str(path)
        raise ConfigError(f"{where}: cannot read: {problem}") from None
    return {} if document is None else document


def _numbers_refused(document: Any, path: Path) -> Any:
    """A clearer message than the schema's for the commonest slip: `target: 1.30` is the number 1.3."""
    if isinstance(document, dict):
        for key in ("target", "from"):
            if isinstance(document.get(key), (int, float)):
                raise ConfigError(f"{path}: {key}: write the minor as a string, e.g. {key}: \"1.30\" "
                                  f"(a number like 1.30 reads as 1.3)")
    return document
