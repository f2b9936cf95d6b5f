"""The project's kubehop configuration: `.kubehop.yaml` or `[tool.kubehop]` in pyproject.toml.

Found from the scanned path upward, stopping at a repository's top (a `.git`) or the
filesystem root. Validated by rules/schema/config.schema.json; command-line flags override it.

A configuration found in the tree is part of the tree, which a pull request may have written: it is
not read when it is a symbolic link out of the repository, and its `rules`, `baseline` and `paths`
may not leave the repository (scanner.containment); each one that does is an input problem naming
the key, and is not read. A configuration given with --config is the user's own: it may name
anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from scanner.containment import leaves, repository_root, within
from scanner.model import Diagnostic

CONFIG_FILE = ".kubehop.yaml"
PYPROJECT = "pyproject.toml"
SCHEMA = "rules/schema/config.schema.json"


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    """What a `.kubehop.yaml` (or `[tool.kubehop]`) says: defaults the command-line flags override."""

    path: Path | None = None  # the file it was read from; None: no configuration
    target: str | None = None
    current: str | None = None  # the `from` key
    paths: tuple[str, ...] = ()
    clusters: tuple[dict, ...] = ()  # `clusters:` entries, their paths relative to the working folder
    rollout: tuple[str, ...] = ()  # the order the clusters are upgraded in, by name
    exclude: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    rules: tuple[Path, ...] = ()
    baseline: str | None = None
    unknown: str | None = None  # warn, block or ignore (None: not set, --unknown's default applies)
    kustomize_load_restrictor: str | None = None  # as kustomize's --load-restrictor (None: its default)
    # Why parts of a configuration found in the tree were not read (input problems of the scan).
    problems: tuple[Diagnostic, ...] = ()

    @property
    def folder(self) -> Path:
        """What the paths in the configuration are relative to."""
        return self.path.parent if self.path else Path.cwd()


def discover(paths: list[str]) -> Config:
    """The configuration that governs `paths` (the first one decides), or an empty one."""
    start = Path(paths[0]) if paths and paths[0] != "-" else Path.cwd()
    found = find_config(start)
    return load_config(found, in_tree=True) if found else Config()


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


def load_config(path: Path, in_tree: bool = False) -> Config:
    """The configuration in `path`; `in_tree`: found in the scanned tree, so held to the repository."""
    from scanner.data import DataError, load_validated

    root = repository_root(str(path.parent)) if in_tree else None
    if root is not None and leaves(path.name, str(path.parent), root):
        why = leaves(path.name, str(path.parent), root)
        return Config(problems=(Diagnostic(str(path), f"the configuration file {why}; not read, no configuration "
                                                      "applied (kubehop reads nothing outside the repository)"),))
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    parse = _parse_pyproject if path.name == PYPROJECT else _parse_yaml
    try:
        document = load_validated(raw, SCHEMA, str(path), lambda data: _numbers_refused(parse(data, path), path))
    except DataError as err:
        raise ConfigError(str(err)) from None
    problems: list[Diagnostic] = []
    if root is not None:
        document = _contained(document, path, root, _key_lines(raw, path), problems)
    folder = path.parent
    return Config(
        path=path,
        target=document.get("target"),
        current=document.get("from"),
        paths=tuple(os.path.relpath(folder / p) for p in document.get("paths", ())),
        clusters=tuple({**entry, "paths": [os.path.relpath(folder / p) for p in entry["paths"]]}
                       for entry in document.get("clusters", ())),
        rollout=tuple(document.get("rollout", ())),
        exclude=tuple(document.get("exclude", ())),
        ignore=tuple(document.get("ignore", ())),
        severity=dict(document.get("severity", {})),
        rules=tuple((folder / p).resolve() for p in document.get("rules", ())),
        baseline=os.path.relpath(folder / document["baseline"]) if "baseline" in document else None,
        unknown=document.get("unknown"),
        kustomize_load_restrictor=document.get("kustomize_load_restrictor"),
        problems=tuple(problems),
    )


def _contained(document: dict, path: Path, root: str, line_of: Callable[..., int | None],
               problems: list[Diagnostic]) -> dict:
    """`document` without the `rules`, `baseline` and `paths` that leave the repository at `root`;
    an input problem for each, at its line."""
    document = dict(document)
    folder = str(path.parent)

    def refused(key: str, index: int | None, value: str, within_key: tuple = ()) -> str | None:
        why = leaves(value, folder, root)
        if why is None and key == "rules":
            why = _escape_within(os.path.join(folder, value), root)
        if why:
            keys = (*within_key, key, *([] if index is None else [index]))
            at = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")
            problems.append(Diagnostic(str(path), f"{at}: {value} {why}; not read (a configuration in the "
                                                  "repository names nothing outside it; --config FILE may)",
                                       line_of(*keys)))
        return why

    for key in ("rules", "paths"):
        if key in document:
            document[key] = [v for i, v in enumerate(document[key]) if not refused(key, i, v)]
    if "clusters" in document:
        document["clusters"] = [{**entry, "paths": [v for j, v in enumerate(entry["paths"])
                                                    if not refused("paths", j, v, ("clusters", i))]}
                                for i, entry in enumerate(document["clusters"])]
        document["clusters"] = [entry for entry in document["clusters"] if entry["paths"]]
    if "baseline" in document and refused("baseline", None, document["baseline"]):
        del document["baseline"]
    return document


def _escape_within(folder: str, root: str) -> str | None:
    """Why a rules folder inside the repository still reads outside it: a file or folder in it that is
    a symbolic link out of the repository, or not a regular file (a FIFO would hang the read)."""
    for current, folders, files in os.walk(folder):
        for name in folders + [f for f in files if f.endswith((".yaml", ".yml"))]:
            entry = os.path.join(current, name)
            real = os.path.realpath(entry)
            if not within(real, root):
                return f"holds {os.path.relpath(entry, folder)}, a symbolic link out of the repository ({root})"
            if name not in folders and not os.path.isfile(real):
                return f"holds {os.path.relpath(entry, folder)}, which is not a regular file"
    return None


def _key_lines(raw: bytes, path: Path) -> Callable[..., int | None]:
    """The 1-based line of a key (or an item of it) in a YAML configuration; None where unknown."""
    if path.name == PYPROJECT:
        return lambda *_: None

    def line_of(*keys: str | int) -> int | None:
        from scanner.nodes import locate
        from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, compose_documents

        try:  # composed only when a problem needs a line: the text was read as YAML already
            nodes, _ = compose_documents(raw.decode("utf-8-sig"), str(path))
        except (DocumentProblem, TemplateSyntax, UnicodeDecodeError):
            return None
        return locate(nodes[0], keys).start_mark.line + 1 if nodes else None
    return line_of


def _has_kubehop_table(pyproject: Path) -> bool:
    """Does the file hold a [tool.kubehop] table (not merely name one, in a comment)? One it cannot parse
    is taken as a yes, so that loading it says what is wrong."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "kubehop" not in text:  # a cheap look first: most pyproject.toml files have no [tool.kubehop]
        return False
    try:
        return "kubehop" in _parse_pyproject_tool(text)
    except (ConfigError, ValueError):
        return True


def _parse_pyproject(raw: bytes, path: Path) -> Any:
    try:
        return _parse_pyproject_tool(raw.decode("utf-8")).get("kubehop", {})
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    except (UnicodeDecodeError, ValueError) as err:  # tomllib's TOMLDecodeError is a ValueError
        raise ConfigError(f"{path}: cannot read: {err}") from None


def _parse_pyproject_tool(text: str) -> dict:
    """The [tool] table of a pyproject.toml; ValueError when it is not TOML."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the same parser, packaged as tomli
        try:
            import tomli as tomllib
        except ImportError:
            raise ConfigError(f"reading [tool.kubehop] needs Python 3.11+ or the tomli package; "
                              f"or use {CONFIG_FILE}") from None
    tool = tomllib.loads(text).get("tool", {})
    return tool if isinstance(tool, dict) else {}


def _parse_yaml(raw: bytes, path: Path) -> Any:
    from scanner.sources.yaml.yamldoc import DocumentProblem, load_data

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
