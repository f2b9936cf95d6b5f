"""A small path language, evaluated on composed YAML nodes so every match knows its line.

    spec.volumes[*].gitRepo                                  a key, every item of a list, a key
    metadata.annotations["seccomp.security.alpha.kubernetes.io/*"]   a quoted key; `*` matches any text

Keys are matched as Kubernetes reads them: when a key is repeated, the last one counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

_TOKEN = re.compile(r"""
    (?P<name>[A-Za-z0-9_-]+)         # plain key
  | \[\*\]                           # every item of a list
  | \["(?P<quoted>[^"\]]+)"\]        # quoted key, may hold dots, slashes and `*`
""", re.VERBOSE)


class PathSyntaxError(ValueError):
    """A path that does not follow the grammar above."""


def glob(pattern: str) -> re.Pattern:
    """`*` matches any text (slashes included); everything else is literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")) + r"\Z")


@dataclass(frozen=True, slots=True)
class Step:
    key: re.Pattern | None  # None: every item of a list
    literal: bool = True  # a plain key: the printed path shows it as name, not ["name"]


@dataclass(frozen=True, slots=True)
class Match:
    """One place a path reaches: the value node, the key node above it, and the concrete path."""

    node: Any
    key: Any
    where: str


@dataclass(frozen=True)
class PathExpr:
    text: str
    steps: tuple[Step, ...]

    def then(self, other: "PathExpr") -> "PathExpr":
        """This path followed by another one (a pod template's path, then a rule's path)."""
        text = ".".join(t for t in (self.text, other.text) if t).replace(".[", "[")
        return PathExpr(text, self.steps + other.steps)

    def find(self, root: Any) -> Iterator[Match]:
        matches = [Match(root, None, "")]
        for step in self.steps:
            matches = [found for match in matches for found in _step(match, step)]
            if not matches:
                break
        return iter(matches)


def compile_path(text: str) -> PathExpr:
    """Parse a path; the empty path is the object itself."""
    steps: list[Step] = []
    position = 0
    while position < len(text):
        if steps and text[position] != "[":
            if text[position] != ".":
                raise PathSyntaxError(f"{text!r}: expected '.' or '[' at character {position + 1}")
            position += 1
        token = _TOKEN.match(text, position)
        if token is None or (token.group(0).startswith("[") and not steps):
            raise PathSyntaxError(f"{text!r}: cannot read the path at character {position + 1}")
        if token.group("name"):
            steps.append(Step(re.compile(re.escape(token.group("name")) + r"\Z")))
        elif token.group("quoted"):
            steps.append(Step(glob(token.group("quoted")), literal=False))
        else:
            steps.append(Step(None))
        position = token.end()
    return PathExpr(text, tuple(steps))


def _step(match: Match, step: Step) -> Iterator[Match]:
    node = match.node
    if step.key is None:
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                yield Match(item, match.key, f"{match.where}[{index}]")
        return
    if not isinstance(node, MappingNode):
        return
    last: dict[str, tuple[Any, Any]] = {}
    for key, value in node.value:
        if isinstance(key, ScalarNode) and step.key.match(key.value):
            last[key.value] = (key, value)
    for name, (key, value) in last.items():
        shown = f".{name}" if step.literal else f'["{name}"]'
        yield Match(value, key, (match.where + shown).lstrip("."))
