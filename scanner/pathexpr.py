"""A small path language, evaluated on composed YAML nodes so every match knows its line.

    spec.volumes[*].gitRepo                                  a key, every item of a list, a key
    metadata.annotations["seccomp.security.alpha.kubernetes.io/*"]   a quoted key; `*` matches any text

Keys are matched as Kubernetes reads them: when a key is repeated, the last one counts, and
keys merged in with `<<: *anchor` count unless the mapping sets them itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, Iterator, TypeVar

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

_TOKEN = re.compile(r"""
    (?P<name>[A-Za-z0-9_-]+)         # plain key
  | \[\*\]                           # every item of a list
  | \["(?P<quoted>[^"\]]+)"\]        # quoted key, may hold dots, slashes and `*`
""", re.VERBOSE)


_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"


class PathSyntaxError(ValueError):
    """A path that does not follow the grammar above."""


class Glob:
    """`*` matches any text (slashes included); everything else is literal. The regular expression is
    compiled when it is first needed: a run reads every glob of the data and matches a few."""

    __slots__ = ("text", "_regex")

    def __init__(self, text: str):
        self.text = text
        self._regex: re.Pattern | None = None

    def match(self, key: str) -> bool:
        if "*" not in self.text:
            return key == self.text
        if self._regex is None:
            self._regex = re.compile(".*".join(re.escape(part) for part in self.text.split("*")) + r"\Z")
        return self._regex.match(key) is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Glob) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Glob({self.text!r})"


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path."""

    name: str | None = None  # a plain key
    pattern: Glob | None = None  # a quoted key; neither: every item of a list

    def matches(self, key: str) -> bool:
        return key == self.name if self.pattern is None else self.pattern.match(key)


@dataclass(frozen=True, slots=True)
class Match:
    """One place a path reaches: the value node, the key node above it, and the concrete path."""

    node: Any
    key: Any
    where: str


@dataclass(frozen=True)
class PathExpr:
    """A compiled field path (`spec.template.spec.containers[*].image`): its text and its steps."""

    text: str
    steps: tuple[Step, ...]

    def then(self, other: "PathExpr") -> "PathExpr":
        """This path followed by another one (a pod template's path, then a rule's path)."""
        text = ".".join(t for t in (self.text, other.text) if t).replace(".[", "[")
        return PathExpr(text, self.steps + other.steps)

    @property
    def ends_at_entry(self) -> bool:
        """The path ends at a quoted key (an annotation, a label, a nodeSelector key): there the key
        itself is what the object says, whatever its value (`critical-pod: ""` marks a critical pod)."""
        return bool(self.steps) and self.steps[-1].pattern is not None

    def find(self, root: Any) -> Iterator[Match]:
        matches = [Match(root, None, "")]
        for step in self.steps:
            matches = [found for match in matches for found in _step(match, step)]
            if not matches:
                break
        return iter(matches)


def is_empty(node: Any) -> bool:
    """A value the API reads as not set: null, an empty string, an empty list (`loadBalancerIP: ""`)."""
    if isinstance(node, ScalarNode):
        return node.tag == _NULL or node.value == ""
    return isinstance(node, SequenceNode) and not node.value


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
            steps.append(Step(name=token.group("name")))
        elif token.group("quoted"):
            steps.append(Step(pattern=Glob(token.group("quoted"))))
        else:
            steps.append(Step())
        position = token.end()
    return PathExpr(text, tuple(steps))


def _step(match: Match, step: Step, keyed: dict[str, tuple[Any, Any]] | None = None) -> Iterator[Match]:
    """Where `step` leads from `match`; `keyed`: the mapping's pairs by key (_keyed), when known."""
    node = match.node
    if step.name is None and step.pattern is None:
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                yield Match(item, match.key, f"{match.where}[{index}]")
        return
    if not isinstance(node, MappingNode):
        return
    if keyed is None:
        keyed = _keyed(node)
    if step.pattern is None:
        found = keyed.get(step.name)
        if found is not None:
            yield Match(found[1], found[0], f"{match.where}.{step.name}" if match.where else step.name)
        return
    for name, (key, value) in keyed.items():
        if step.pattern.match(name):
            yield Match(value, key, f'{match.where}["{name}"]')


def _keyed(node: MappingNode) -> dict[str, tuple[Any, Any]]:
    """The mapping's scalar keys -> (key node, value node), as Kubernetes reads them: the last one wins."""
    keyed = {key.value: (key, value) for key, value in node.value if isinstance(key, ScalarNode)}
    if "<<" in keyed and any(key.tag == _MERGE for key, _ in node.value):  # rare: merged mappings
        return {key.value: (key, value) for key, value in _pairs(node, set())}
    return keyed


def _pairs(node: MappingNode, seen: set[int]) -> Iterator[tuple[ScalarNode, Any]]:
    """Scalar-keyed pairs in the order that makes the last one win: merged (`<<`) mappings first."""
    seen.add(id(node))
    for key, value in node.value:
        if key.tag == _MERGE:
            sources = value.value if isinstance(value, SequenceNode) else [value]
            for source in reversed(sources):  # the first mapping listed has the highest precedence
                if isinstance(source, MappingNode) and id(source) not in seen:
                    yield from _pairs(source, seen)
    yield from ((key, value) for key, value in node.value if isinstance(key, ScalarNode) and key.tag != _MERGE)


T = TypeVar("T")


class PathTree(Generic[T]):
    """Many paths walked together, each with a payload: a shared prefix is walked once."""

    def __init__(self) -> None:
        self.children: dict[Step, PathTree[T]] = {}
        self.payloads: list[T] = []

    def add(self, path: PathExpr, payload: T) -> None:
        tree = self
        for step in path.steps:
            tree = tree.children.setdefault(step, PathTree())
        tree.payloads.append(payload)

    def find(self, root: Any) -> Iterator[tuple[T, Match]]:
        # A place is (node, key node, where): `where` as (the place above's, this step's text), joined only
        # where a payload is met; most places a walk passes lead to none.
        stack: list[tuple[PathTree[T], Any, Any, tuple]] = [(self, root, None, ())]
        while stack:
            tree, node, key, where = stack.pop()
            if tree.payloads:
                match = Match(node, key, _joined(where))
                yield from ((payload, match) for payload in tree.payloads)
            if not tree.children:
                continue
            if isinstance(node, MappingNode):
                keyed = _keyed(node)  # once for all steps
                for step, child in tree.children.items():
                    if step.pattern is not None:
                        stack.extend((child, value, name_node, (where, f'["{name}"]'))
                                     for name, (name_node, value) in keyed.items() if step.pattern.match(name))
                    elif step.name is not None and (found := keyed.get(step.name)) is not None:
                        stack.append((child, found[1], found[0], (where, "." + step.name)))
            elif isinstance(node, SequenceNode):
                for step, child in tree.children.items():
                    if step.name is None and step.pattern is None:
                        stack.extend((child, item, key, (where, f"[{index}]")) for index, item in enumerate(node.value))


def _joined(where: tuple) -> str:
    parts = []
    while where:
        where, part = where
        parts.append(part)
    return "".join(reversed(parts)).removeprefix(".")
