"""Indented JSON text, as `json.dumps(document, indent=...)` writes it, written faster.

With an indent, the standard library leaves its C encoder aside and walks the document with Python
generators, one per container: on a report of 2,800 findings that was a fifth of a whole plain-YAML
scan, spent after every file was read. Here the containers are walked by one recursive function and
every string goes through the library's own C escaping, so the text is the library's, byte for byte
(tests/test_json_text.py holds it to json.dumps). What the document holds beyond JSON's types is left
to json.dumps, whose error is the one to see.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Callable

_INFINITY = float("inf")


def dumps(document: object, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    if indent is None:
        return json.dumps(document, ensure_ascii=ensure_ascii)
    out: list[str] = []
    try:
        _write(document, out, "\n", " " * indent, encode_basestring_ascii if ensure_ascii else encode_basestring)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
    return "".join(out)


def _write(value: object, out: list[str], newline: str, step: str, string: Callable[[str], str]) -> None:
    if isinstance(value, str):
        out.append(string(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + step
        separator = "{" + inner
        for key, item in value.items():
            key_text = separator + string(key if isinstance(key, str) else _key(key)) + ": "
            separator = "," + inner
            # A string, null or number written here, not by a call of its own: most values are one.
            if isinstance(item, str):
                out.append(key_text + string(item))
            elif item is None:
                out.append(key_text + "null")
            elif item.__class__ is int:
                out.append(key_text + int.__repr__(item))
            else:
                out.append(key_text)
                _write(item, out, inner, step, string)
        out.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + step
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _write(item, out, inner, step, string)
            separator = "," + inner
        out.append(newline + "]")
    else:
        out.append(_scalar(value))


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    raise TypeError(type(value).__name__)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    """A key that is no string, written as json.dumps writes it (a number or a constant, as text)."""
    if isinstance(key, float):
        return _float(key)
    if key is True or key is False or key is None:
        return _scalar(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(type(key).__name__)
