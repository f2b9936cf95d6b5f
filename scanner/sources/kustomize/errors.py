"""kustomize's build errors, read for the user: the innermost cause, where it lies, in words to act on.

kustomize reports a failure as the chain of every kustomization that led to it, outermost first
(`accumulating resources: accumulation err='…': recursed accumulation of path '/abs/a': …`), with
the absolute paths of the machine it ran on; the cause comes last, past what a terminal or a CI
annotation shows. Here the chain is peeled down to the kustomization where the cause lies, the cause
is named with the entry of that kustomization file that is broken (so its line can be shown), and
every path is given from the repository root. The wording differs between kustomize versions, so
each part is matched loosely; what is not recognised falls back to the innermost clause of the chain.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from typing import Iterator

from scanner.model import Diagnostic
from scanner.sources.kustomize.mirror import from_view
from scanner.sources.kustomize.refs import Kustomization, kustomization_file, read_kustomization

_KLOG_LINE = re.compile(r'^[EFWI]\d{4} [\d:.]+\s+\d+ \S+\] "([^"]*)"(?: err=(?:"(.*)"|(<)))?$')
_WARNING = re.compile(r"^(#\s*)?warning\b", re.IGNORECASE)
_RECURSED = re.compile(r"recursed accumulation of path '([^']+)': ")
_NO_TARGET = re.compile(r"couldn't make target for path '([^']+)': ")
_NOT_A_COMPONENT = re.compile(r"expected kind != 'Component' for path '([^']+)'")
_NOT_A_RESOURCE = re.compile(r"expected kind '(\w+)' for path '([^']+)' but got '(\w+)'")
_MISSING = re.compile(r"evalsymlink failure on '([^']+)'|lstat ([^:']+): no such file or directory")
_RESTRICTED = re.compile(r"security; file '([^']+)' is not in or below '([^']+)'")
_MALFORMED = re.compile(r"(?:accumulating|merging) resources from '([^']*)': MalformedYAMLError: (.*?)(?: in File: .*)?$")
_UNREADABLE = re.compile(r"(?:accumulating|merging) resources from '([^']*)': (.+?)': must build at directory: "
                         r"'[^']*': file is not directory")
_PLUGIN = re.compile(r"external plugins disabled; unable to load external plugin '([^']*)'")
_YAML_LINE = re.compile(r"\bline (\d+)\b")
_DUPLICATE = re.compile(r"(?:accumulating|merging) resources from '([^']*)': "
                        r"may not add resource with an already registered id: ([^'\s]+)")
_ABSOLUTE = re.compile(r"(?<![\w.~/-])/[^\s'\"`:,\]\)]+")
_FROM_BASE = re.compile(r"(?<![\w.~/-])(?:\.\./)+[^\s'\"`:,\]\)]+")
_WRAPPER_LEVEL = re.compile(r"^accumulating resources: accumulation err='(?:accumulating|merging) resources from "
                            r"'[^']*': '[^']*' must resolve to a file': ")
_MAX_MESSAGE = 300
# What kustomize dumps after a cause (the YAML of the node it could not use): the cause comes before it.
_DUMP = re.compile(r"\b(?:node contents|in File):\s*", re.IGNORECASE)
# What each field of a kustomization names, in the words of a message.
_WORDS = {"resources": "resource", "bases": "base", "components": "component", "crds": "crds file",
          "configurations": "configurations file", "generators": "generator", "transformers": "transformer",
          "validators": "validator", "patchesStrategicMerge": "patchesStrategicMerge file", "patches": "patch file",
          "patchesJson6902": "patchesJson6902 file", "replacements": "replacements file"}
_GENERATORS = ("configMapGenerator", "secretGenerator")


@dataclass(frozen=True)
class Cause:
    folder: str  # real path of the kustomization where the cause lies
    message: str  # one line, paths from the repository root
    key: str  # what is broken there (an entry, the file itself): one input problem per (folder, key)
    line: int | None = None  # of the broken entry in the kustomization file
    file: str | None = None  # a file of its own that is broken (real path), where the problem is reported


@dataclass(frozen=True)
class Paths:
    """kustomize's paths, as the repository's: `root` is its real path, `shown` how the scan names it,
    `view` the throwaway view kustomize built in (helmCharts), if any, `base` the folder kustomize was
    pointed at (kubehop's wrapper kustomization), from which it names some paths."""

    root: str
    shown: str
    view: str | None = None
    base: str | None = None

    def real(self, path: str) -> str:
        return os.path.realpath(from_view(path, self.root, self.view) if self.view else path)

    def relative(self, path: str) -> str | None:
        real = self.real(path)
        if real == self.root or real.startswith(os.path.join(self.root, "")):
            return os.path.relpath(real, self.root)
        return None

    def show(self, path: str) -> str:
        """From the repository root; a path outside it (kubehop's own scratch folder) by its name only."""
        relative = self.relative(path)
        return relative if relative is not None else f"…/{os.path.basename(path.rstrip('/'))}"

    def display(self, real: str) -> str:
        """A real folder inside the repository, named as the scan names files."""
        relative = self.relative(real)
        return real if relative is None else os.path.normpath(os.path.join(self.shown, relative))

    def scrub(self, text: str) -> str:
        """Every path in `text` from the repository root."""
        if self.base:
            text = _FROM_BASE.sub(lambda m: self.show(os.path.join(self.base, m.group(0))), text)
        return _ABSOLUTE.sub(lambda m: self.show(m.group(0)), text)


def error_text(stderr: str) -> str:
    """kustomize's error on one line: its warnings left out (`# Warning: 'commonLabels' is deprecated`),
    kubectl's log prefix (`E1130 21:02:52.4 5713 run.go:72] "command failed" err="..."`, or `err=<` and
    the error on the lines after it) reduced to the error itself, an error on several lines joined."""
    errors: list[str] = []
    lines = iter(stderr.splitlines())
    for raw in lines:
        line = raw.strip()
        logged = _KLOG_LINE.match(line)
        if logged:
            error = logged.group(2) if logged.group(3) is None else "<"
            if error == "<":  # klog's multi-line form: the error follows, indented, up to a line ">"
                block = []
                for follow in lines:
                    if follow.strip() == ">":
                        break
                    block.append(follow.strip())
                error = " ".join(part for part in block if part)
            elif error is not None:
                try:
                    error = json.loads(f'"{error}"')
                except ValueError:
                    pass
            if line[0] in "EF" and error:
                errors.append(error)
        elif line and not _WARNING.match(line):
            errors.append(line)
    first = next((i for i, line in enumerate(errors) if line.lower().startswith("error:")), None)
    chosen = " ".join(errors[first:]) if first is not None else (errors[0] if errors else "")
    return re.sub(r"^error:\s*", "", chosen, flags=re.IGNORECASE).strip() or "no message"


def plugin_of(error: str) -> str | None:
    """The kustomize plugin a build needed, when it failed for want of one (kubehop runs none)."""
    found = _PLUGIN.search(error)
    return found.group(1) if found else None


def file_problem(kustomization_path: str, problem: str) -> str:
    """A kustomization file that cannot be read, as kubehop's reading or kustomize words it."""
    if problem in ("empty file", "kustomization.yaml is empty") or problem.endswith(" is empty"):
        return f"{kustomization_path} is empty: kustomize cannot build it"
    problem = re.sub(r"^invalid Kustomization: ", "", problem)
    return f"{kustomization_path} is not a valid kustomization: {problem}"


def read_cause(error: str, built: str, paths: Paths) -> Cause:
    """The cause of a failed build of the kustomization at `built` (a real path), from `error_text`."""
    text = error.replace('\\"', '"')
    folder, rest = built, _WRAPPER_LEVEL.sub("", text)
    last = None
    for last in _RECURSED.finditer(text):
        pass
    if last is not None:
        folder, rest = paths.real(last.group(1)), text[last.end():]
    rest = _unquoted(rest)
    for reader in (_no_target, _own_file, _kind_mismatch, _restricted, _malformed, _duplicate, _unreadable,
                   _missing):
        cause = reader(rest, folder, paths)
        if cause is not None:
            return cause
    return _fallback(rest, folder, paths)


def said_once(read: list[Diagnostic], built: list[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """A file that cannot be read is a problem of the file and of every build that reads it: said once,
    by its reading. An empty kustomization file's notice gives way to its build's error (kustomize
    cannot build it)."""
    built_at = {os.path.realpath(d.path) for d in built}
    if not built_at:
        return read, built
    broken = {(os.path.realpath(d.path), d.line) for d in read if d.level == "error"}
    whole = {path for path, _ in broken}
    read = [d for d in read if not (d.level == "notice" and d.message == "empty file"
                                    and os.path.realpath(d.path) in built_at)]
    return read, [d for d in built if (os.path.realpath(d.path), d.line) not in broken
                  and not (d.line is None and os.path.realpath(d.path) in whole)]


# --- One reader per kind of cause -----------------------------------------------------------------

def _no_target(rest: str, folder: str, paths: Paths) -> Cause | None:
    """`couldn't make target for path 'P': …`: P has no kustomization file, or an unreadable one."""
    found = _NO_TARGET.search(rest)
    if found is None:
        return None
    target, reason = paths.real(found.group(1)), _unquoted(rest[found.end():])
    if "unable to find one of" in reason:
        return _at_entry(folder, target, paths,
                         "{target} is a folder without a kustomization.yaml ({what} {value}, {listed})",
                         f"{paths.show(target)} is a folder without a kustomization.yaml")
    return Cause(target, file_problem(_file_of(target, paths), paths.scrub(reason)), "file")


def _own_file(rest: str, folder: str, paths: Paths) -> Cause | None:
    """The built kustomization's own file (kustomize names no path then)."""
    if rest.startswith("invalid Kustomization: ") or rest.endswith(("kustomization.yaml is empty",
                                                                     "kustomization.yml is empty")):
        return Cause(folder, file_problem(_file_of(folder, paths), paths.scrub(rest)), "file")
    return None


def _kind_mismatch(rest: str, folder: str, paths: Paths) -> Cause | None:
    found = _NOT_A_COMPONENT.search(rest)
    if found is not None:
        return _at_entry(folder, paths.real(found.group(1)), paths,
                         "{target} is a Component: list it under components, not resources ({listed})",
                         f"{paths.show(found.group(1))} is a Component: list it under components")
    found = _NOT_A_RESOURCE.search(rest)
    if found is not None:
        kind = found.group(3) or "Kustomization"
        return _at_entry(folder, paths.real(found.group(2)), paths,
                         f"{{target}} is a {kind}, not a Component: list it under resources ({{listed}})",
                         f"{paths.show(found.group(2))} is a {kind}, not a Component: list it under resources")
    return None


def _restricted(rest: str, folder: str, paths: Paths) -> Cause | None:
    found = _RESTRICTED.search(rest)
    if found is None:
        return None
    why = ("lies outside the kustomization's folder: kustomize refuses it unless built with "
           "--load-restrictor LoadRestrictionsNone (if the repository builds it so, say "
           "kustomize_load_restrictor: LoadRestrictionsNone in .kubehop.yaml)")
    return _at_entry(folder, paths.real(found.group(1)), paths, f"{{what}} {{value}} {why} ({{listed}})",
                     f"{paths.show(found.group(1))} {why}")


def _malformed(rest: str, folder: str, paths: Paths) -> Cause | None:
    found = _MALFORMED.search(rest)
    if found is None:
        return None
    value, why = found.group(1), paths.scrub(found.group(2)).removeprefix("yaml: ")
    broken = _resolve(folder, value)
    cause = _at_entry(folder, broken, paths, f"{{what}} {{value}} is not valid YAML: {why} ({{listed}})",
                      f"{paths.show(broken)} is not valid YAML: {why}")
    line = _YAML_LINE.search(why)  # the problem is the file's: reported there (and once, if the scan read it)
    return replace(cause, file=broken, line=int(line.group(1)) if line else None)


def _unreadable(rest: str, folder: str, paths: Paths) -> Cause | None:
    """A resource file kustomize cannot take objects from (`missing Resource metadata`: a document that is
    no object, such as a SOPS block split off as a document of its own)."""
    found = _UNREADABLE.search(rest)
    if found is None or "no such file or directory" in found.group(2):
        return None
    value, why = found.group(1), paths.scrub(found.group(2))
    if why == "missing Resource metadata":
        why = "holds a document without metadata, which is no object"
    else:
        why = f"cannot be read: {why}"
    return _at_entry(folder, _resolve(folder, value), paths, f"{{what}} {{value}} {why} ({{listed}})",
                     f"{paths.show(_resolve(folder, value))} {why}")


def _duplicate(rest: str, folder: str, paths: Paths) -> Cause | None:
    found = _DUPLICATE.search(rest)
    if found is None:
        return None
    value, what = found.group(1), _object_id(found.group(2))
    return _at_entry(folder, _resolve(folder, value), paths,
                     f"{{what}} {{value}} adds {what}, which an entry before it adds already ({{listed}})",
                     f"{value} adds {what}, which an entry before it adds already")


def _missing(rest: str, folder: str, paths: Paths) -> Cause | None:
    if "no such file or directory" not in rest:
        return None
    found = _MISSING.search(rest)
    if found is None:
        return None
    missing = paths.real(found.group(1) or found.group(2))
    return _at_entry(folder, missing, paths, "{what} {value} does not exist ({listed})",
                     f"{paths.show(missing)} does not exist")


def _fallback(rest: str, folder: str, paths: Paths) -> Cause:
    """The innermost clause, its paths from the repository root, cut from the front when long; one that
    ends in a YAML dump keeps its cause (`wrong node kind: … node contents:`) first, then what of the dump fits."""
    clause = paths.scrub(re.sub(r"^accumulating resources: ", "", rest)).strip() or "kustomize gave no reason"
    dump = _DUMP.search(clause) if len(clause) > _MAX_MESSAGE else None
    if dump is not None:
        cause, contents = clause[:dump.end()].rstrip(), clause[dump.end():]
        cause = cause if len(cause) <= _MAX_MESSAGE - 60 else "…" + cause[-(_MAX_MESSAGE - 60):]
        clause = f"{cause} {contents[:_MAX_MESSAGE - len(cause)].rstrip()}…"
    elif len(clause) > _MAX_MESSAGE:
        clause = "…" + clause[-_MAX_MESSAGE:]
    return Cause(folder, f"{clause} (in {_file_of(folder, paths)})", f"text:{clause}")


def _unquoted(text: str) -> str:
    """Without the quote an error quoted inside another (`accumulateDirectory: "…"`) leaves at the end."""
    text = text.strip()
    return text[:-1].strip() if text.endswith('"') and text.count('"') % 2 else text


# --- Where in the kustomization file ----------------------------------------------------------------

def _at_entry(folder: str, target: str, paths: Paths, found_form: str, lost_form: str) -> Cause:
    """A cause naming the entry of `folder`'s kustomization that leads to `target` (a real path): its
    words, its line; when no entry is found, `lost_form`, at the kustomization itself."""
    kustomization = read_kustomization(paths.display(folder))
    listed = f"listed in {_file_of(folder, paths)}"
    for field, value, where in _entries(kustomization):
        if _leads_to(folder, value, target):
            values = {"what": _word(field), "value": value.strip(), "target": paths.show(target), "listed": listed}
            message = re.sub(r"\{(what|value|target|listed)\}", lambda m: values[m.group(1)], found_form)
            return Cause(folder, message, f"{field}:{value}", kustomization.line_of(*where) or None)
    return Cause(folder, f"{lost_form} (needed by {_file_of(folder, paths)})", f"path:{target}")


def _entries(kustomization: Kustomization) -> Iterator[tuple[str, str, tuple[str | int, ...]]]:
    """(field, value, where in the document) of every local path the kustomization names."""
    document = kustomization.document
    for name in (*_WORDS, "openapi"):
        items = document.get(name)
        if isinstance(items, str):
            items = [items]
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, str) and "\n" not in item:
                yield name, item, (name, index)
            elif isinstance(item, dict) and isinstance(item.get("path"), str):
                yield name, item["path"], (name, index, "path")
    for name in _GENERATORS:
        generators = document.get(name)
        for index, generator in enumerate(generators if isinstance(generators, list) else []):
            if not isinstance(generator, dict):
                continue
            for key in ("files", "envs", "env"):
                values = generator.get(key)
                values = [values] if isinstance(values, str) else values if isinstance(values, list) else []
                for number, value in enumerate(values):
                    if isinstance(value, str):
                        where = (name, index, key) if key == "env" else (name, index, key, number)
                        yield f"{name}.{key}", value.split("=", 1)[-1], where


def _word(field: str) -> str:
    if "." in field:
        generator, key = field.split(".", 1)
        return f"{generator} {'file' if key == 'files' else 'env file'}"
    return _WORDS.get(field, field)


def _leads_to(folder: str, value: str, target: str) -> bool:
    resolved = _resolve(folder, value)
    return resolved == target or resolved.startswith(os.path.join(target, ""))  # `lstat` names a missing parent


def _resolve(folder: str, value: str) -> str:
    return os.path.realpath(os.path.join(folder, value.strip()))


def _file_of(folder: str, paths: Paths) -> str:
    """The kustomization file of a real folder, from the repository root."""
    found = kustomization_file(folder)
    return paths.show(found or os.path.join(folder, "kustomization.yaml"))


def _object_id(text: str) -> str:
    """kustomize's `ConfigMap.v1.[noGrp]/web.[noNs]` as `ConfigMap web`."""
    found = re.match(r"^(\w+)\.[^/]*/(.+?)\.([^.]+)$", text)
    if found is None:
        return text
    kind, name, namespace = found.groups()
    return f"{kind} {name}" + ("" if namespace == "[noNs]" else f" (namespace {namespace})")
