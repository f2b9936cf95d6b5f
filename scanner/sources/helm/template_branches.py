"""The branches of a template's `{{ if }}` that Helm would take at a minor, for reading charts as text.

Text reading lists what every branch could emit. A branch chosen by the cluster itself is not the
user's choice, though: `{{ if .Capabilities.APIVersions.Has "batch/v1" }}` renders batch/v1 at every
minor that serves it, and its `else` (batch/v1beta1) never reaches such a cluster. Where a condition
is decided by the Capabilities alone (`.Capabilities.APIVersions.Has "<group/version[/Kind]>"` of a
built-in API, `semverCompare "<range>" .Capabilities.KubeVersion.<Version|GitVersion>` holding for
the whole minor or none of it, and `not`, `and`, `or` of those), the branches not taken are blanked
out, lines kept. Anything else (a value, a CRD's API, a range that splits the minor) keeps every
branch, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.semver import Interval, parse_pin
from scanner.versions import Minor

_OPENS = ("if", "range", "with", "define", "block")
_TOKEN = re.compile(r'\(|\)|"(?:[^"\\]|\\.)*"|`[^`]*`|[^\s()]+')
_CAPABILITY = re.compile(r"^\$?\.Capabilities\.")


@dataclass(frozen=True)
class Capabilities:
    """What Helm's `.Capabilities` hold at a minor: the apiVersions served (group/version, Kind) pairs,
    and which group/versions are built in (only those can be told absent: a CRD's may be installed)."""

    minor: Minor
    served: frozenset[tuple[str, str]]
    builtin: frozenset[str]


def decided_branches(text: str, capabilities: Capabilities) -> str:
    """`text` with the branches Helm would not take at `capabilities` blanked out (newlines kept)."""
    if ".Capabilities" not in text:
        return text
    blanks: list[tuple[int, int]] = []
    stack: list[list] = []  # per open block: [keyword, [(condition, action start, action end)...]]
    for start, end, inner in _actions(text):
        words = inner.strip("-").strip().split(None, 1)
        if not words or words[0].startswith("/*"):
            continue
        keyword, rest = words[0], words[1] if len(words) > 1 else ""
        if keyword in _OPENS:
            stack.append([keyword, [(rest if keyword == "if" else None, start, end)]])
        elif keyword == "else" and stack:
            condition = rest[3:] if rest.startswith("if ") else (None if rest else "")
            stack[-1][1].append((condition, start, end))
        elif keyword == "end" and stack:
            block_keyword, branches = stack.pop()
            if block_keyword == "if":
                blanks.extend(_not_taken(branches, start, capabilities))
    if not blanks:
        return text
    chars = list(text)
    for start, end in blanks:
        for index in range(start, end):
            if chars[index] != "\n":
                chars[index] = " "
    return "".join(chars)


def _actions(text: str):
    """(start, end, inside) of every `{{ ... }}` action, in one pass: a regex with a lazy body would
    rescan the rest of the text from every `{{` that never closes."""
    at = 0
    while (start := text.find("{{", at)) >= 0 and (end := text.find("}}", start + 2)) >= 0:
        yield start, end + 2, text[start + 2:end]
        at = end + 2


def _not_taken(branches: list[tuple[str | None, int, int]], end: int,
               capabilities: Capabilities) -> list[tuple[int, int]]:
    """The spans of the branches not taken, when the conditions decide which one is; else none."""
    taken = None
    for number, (condition, _, _) in enumerate(branches):
        verdict = True if condition == "" else _decide(condition, capabilities) if condition else None
        if verdict is None:
            return []  # undecided: every branch stays
        if verdict:
            taken = number
            break
    spans = []
    for number, (_, start, _) in enumerate(branches):
        if number != taken:
            after = branches[number + 1][1] if number + 1 < len(branches) else end
            spans.append((start, after))
    return spans


def _decide(condition: str, capabilities: Capabilities) -> bool | None:
    tokens = _TOKEN.findall(condition)
    try:
        verdict, rest = _expression(tokens, 0, capabilities)
    except (IndexError, ValueError):
        return None
    return verdict if rest == len(tokens) else None


def _expression(tokens: list[str], at: int, capabilities: Capabilities) -> tuple[bool | None, int]:
    """One pipeline-free expression from tokens[at]: (its truth, or None when undecided; next token)."""
    token = tokens[at]
    if token == "(":
        verdict, at = _call(tokens, at + 1, capabilities)
        if tokens[at] != ")":
            raise ValueError("unbalanced parentheses")
        return verdict, at + 1
    return _call(tokens, at, capabilities)


def _call(tokens: list[str], at: int, capabilities: Capabilities) -> tuple[bool | None, int]:
    name = tokens[at]
    if name == "not":
        verdict, at = _expression(tokens, at + 1, capabilities)
        return (None if verdict is None else not verdict), at
    if name in ("and", "or"):
        verdicts, at = [], at + 1
        while at < len(tokens) and tokens[at] != ")":
            verdict, at = _expression(tokens, at, capabilities)
            verdicts.append(verdict)
        if len(verdicts) < 2:
            return None, at
        decisive = name == "or"  # or: one True decides; and: one False decides
        if decisive in verdicts:
            return decisive, at
        return (None if None in verdicts else not decisive), at
    if _CAPABILITY.match(name) and name.endswith(".APIVersions.Has") and at + 1 < len(tokens):
        return _has(tokens[at + 1], capabilities), at + 2
    if name == "semverCompare" and at + 2 < len(tokens) and _kube_version(tokens[at + 2]):
        return _admits_minor(tokens[at + 1], capabilities.minor), at + 3
    return None, _skip(tokens, at)


def _skip(tokens: list[str], at: int) -> int:
    """Past one undecidable call: its words up to the closing parenthesis of its group."""
    depth = 0
    while at < len(tokens):
        if tokens[at] == "(":
            depth += 1
        elif tokens[at] == ")":
            if depth == 0:
                return at
            depth -= 1
        at += 1
    return at


def _kube_version(token: str) -> bool:
    return bool(_CAPABILITY.match(token)) and token.split(".Capabilities.", 1)[1] in (
        "KubeVersion.Version", "KubeVersion.GitVersion", "KubeVersion")


def _has(token: str, capabilities: Capabilities) -> bool | None:
    if not token.startswith('"'):
        return None
    wanted = token.strip('"').strip("/")
    parts = wanted.split("/")
    kind = parts.pop() if len(parts) >= 2 and parts[-1][:1].isupper() else None
    group_version = "/".join(parts)
    if group_version not in capabilities.builtin:
        return None  # a CRD's API may be installed whatever kubehop knows
    if kind is None:
        return any(served == group_version for served, _ in capabilities.served)
    return (group_version, kind) in capabilities.served


def _admits_minor(token: str, minor: Minor) -> bool | None:
    """Whether a semver range holds for every patch of `minor` (True), for none (False), or splits it."""
    if not token.startswith('"'):
        return None
    intervals = parse_pin(token.strip('"'))
    if intervals is None:
        return None
    line = Interval((minor.major, minor.minor, 0), (minor.major, minor.minor + 1, 0))
    if any(i.low <= line.low and line.high <= i.high for i in intervals):
        return True
    if not any(i.overlaps(line) for i in intervals):
        return False
    return None
