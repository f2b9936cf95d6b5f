"""Flux's post-build variable syntax, evaluated as kustomize-controller evaluates it (fluxcd/pkg envsubst,
a fork of drone/envsubst: parse/parse.go, parse/scan.go, template.go, funcs.go), for what kubehop can be
sure of.

Read: `${var}`; `${var:=default}`, `${var=default}`, `${var:-default}` (the fork's toDefault: the
default, itself text and `${...}`, when the value is empty or unset); `${#var}`; `${var^}`, `${var^^}`,
`${var,}`, `${var,,}`; `$$`, a literal `$` (so `$${var}` is the text `${var}`); any other `$`, as
written. Substrings, patterns and `:+` `:?` are not evaluated: the text is Unsure. What the fork
refuses to parse (`${}`, `${var-default}`, a `${` never closed) makes Flux's whole substitution of the
object fail: Broken.

A variable is looked up as a Value: set (its text and where a person edits it), Unset (every place
it could come from is read and none sets it: Flux substitutes an empty string, or, with strict
substitution, fails; kubehop cannot tell which, so a bare `${var}` of it is Unsure, a default applies)
or Unknown (it may be set where kubehop cannot read). Values are never expanded again, as in Flux.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from scanner.model import Origin

MAX_TEXT = 1024 * 1024  # an expansion longer than this is not built (a value used many times over)
_MAX_DEPTH = 16  # defaults within defaults
_DEFAULTS = (":=", ":-", "=")
_CASES = {"^": lambda s: s[:1].upper() + s[1:], "^^": str.upper, ",": lambda s: s[:1].lower() + s[1:],
          ",,": str.lower}


@dataclass(frozen=True)
class Set:
    """A variable set to `text`, edited at `origin`."""

    text: str
    origin: Origin  # where a person edits it: the ConfigMap entry, the inline substitute entry


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNSET, UNKNOWN = _Unset(), _Unknown()
Value = Union[Set, _Unset, _Unknown]


class Broken(Exception):
    """Text the fork does not parse: Flux's substitution of the whole object fails on it."""


class Unsure(Exception):
    """Text whose expansion kubehop cannot be sure of."""


@dataclass(frozen=True)
class Expansion:
    """A text as Flux's substitution leaves it, and the variables whose values went into it."""

    text: str
    used: tuple[Set, ...]  # the set variables whose values are in the text, in order


def has_expression(text: str) -> bool:
    """Would Flux change `text` at all (a `${` or a `$$` in it)?"""
    return "$" in text and ("${" in text or "$$" in text)


def expand(text: str, lookup: Callable[[str], Value]) -> Expansion:
    """`text` as Flux's substitution leaves it; Unsure or Broken when it cannot be told."""
    out: list[str] = []
    used: list[Set] = []
    _Parser(text, lookup, used).top(out)
    result = "".join(out)
    if len(result) > MAX_TEXT:
        raise Unsure(f"its expansion is longer than {MAX_TEXT} characters")
    return Expansion(result, tuple(used))


class _Parser:
    def __init__(self, text: str, lookup: Callable[[str], Value], used: list[Set]):
        self.text, self.lookup, self.used, self.pos, self.size = text, lookup, used, 0, 0

    def _grow(self, out: list[str], piece: str) -> None:
        self.size += len(piece)
        if self.size > MAX_TEXT:
            raise Unsure(f"its expansion is longer than {MAX_TEXT} characters")
        out.append(piece)

    def top(self, out: list[str]) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            at = text.find("$", self.pos)
            if at == -1:
                self._grow(out, text[self.pos:])
                return
            self._grow(out, text[self.pos:at])
            following = text[at + 1:at + 2]
            if following == "$":  # an escaped dollar: the next character is kept as it is
                self._grow(out, "$")
                self.pos = at + 2
            elif following == "{":
                self.pos = at + 2
                self._grow(out, self._function(0))
            else:
                self._grow(out, "$")
                self.pos = at + 1

    def _function(self, depth: int) -> str:
        """After `${`: the value of the expression, up to and past its `}`."""
        if depth > _MAX_DEPTH:
            raise Unsure("its defaults nest too deep")
        text = self.text
        if text.startswith("#", self.pos):
            self.pos += 1
            name = self._name()
            self._close()
            value = self.lookup(name)
            if not isinstance(value, Set):
                raise Unsure(f"${{#{name}}} of a variable kubehop cannot read")
            return str(len(self._use(value)))
        name = self._name()
        following = text[self.pos:self.pos + 1]
        if following == "}":
            self.pos += 1
            value = self.lookup(name)
            if not isinstance(value, Set):
                raise Unsure(f"${{{name}}} is not set where kubehop can read it")
            return self._use(value)
        operator = next((op for op in _DEFAULTS if text.startswith(op, self.pos)), None)
        if operator is not None:
            self.pos += len(operator)
            before = len(self.used)
            default = self._default(depth)
            value = self.lookup(name)
            if isinstance(value, _Unknown):
                raise Unsure(f"${{{name}{operator}...}}: {name} may be set where kubehop cannot read")
            if isinstance(value, Set) and value.text:
                del self.used[before:]  # the default's variables are not in the text
                return self._use(value)
            return default
        if following in ("^", ","):
            second = text[self.pos + 1:self.pos + 2]
            if second in ("^", ",") and second != following:
                raise Unsure(f"${{{name}{following}{second}}} is not evaluated by kubehop")
            case = following * 2 if second == following else following
            self.pos += len(case)
            self._close()
            value = self.lookup(name)
            if not isinstance(value, Set):
                raise Unsure(f"${{{name}{case}}} of a variable kubehop cannot read")
            return _CASES[case](self._use(value))
        if following in (":", "/", "#", "%"):
            raise Unsure(f"${{{name}{following}...}} is not evaluated by kubehop")
        raise Broken(f"`${{{name}{following}` is not valid post-build substitution syntax")

    def _name(self) -> str:
        start = self.pos
        text = self.text
        while self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] == "_"):
            self.pos += 1
        if self.pos == start:
            raise Broken("`${` is not followed by a variable name")
        return text[start:self.pos]

    def _close(self) -> None:
        if not self.text.startswith("}", self.pos):
            raise Broken("a `${` is not closed")
        self.pos += 1

    def _default(self, depth: int) -> str:
        """The default's text, its `${...}` expanded, up to and past the `}` that closes the expression.
        (The fork evaluates a default whether or not it is used: a broken one breaks the object.)"""
        parts: list[str] = []
        text = self.text
        while True:
            if self.pos >= len(text):
                raise Broken("a `${` is not closed")
            if text[self.pos] == "}":
                self.pos += 1
                return "".join(parts)
            if text.startswith("${", self.pos):
                self.pos += 2
                parts.append(self._function(depth + 1))
                continue
            end = min((i for i in (text.find("}", self.pos), text.find("${", self.pos)) if i != -1),
                      default=len(text))
            parts.append(text[self.pos:end])
            self.pos = end

    def _use(self, value: Set) -> str:
        self.used.append(value)
        return value.text
