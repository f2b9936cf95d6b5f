"""Counted nouns, spelt right in every command's output: "1 object", "2 objects"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
