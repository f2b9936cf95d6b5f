"""Caches of what the tree holds, kept for one analysis. Files are read by path many times in a scan
(a kustomization by every overlay that builds it, a file's lines by every finding in it); a cache keyed
by path must not outlive the scan, or a second analysis in the same process (a library caller, a fleet,
the tests) reads the tree as it was. `scope()` around an analysis forgets them on the way in; nested
scopes (a fleet's per-cluster analyses) share the outer one's."""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable)

_CACHED: list = []
_depth = 0


def cache(maxsize: int | None = None) -> Callable[[F], F]:
    """functools.lru_cache, forgotten when an analysis starts."""
    def wrap(function: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _CACHED.append(cached)
        return cached  # type: ignore[return-value]
    return wrap


def forget() -> None:
    for cached in _CACHED:
        cached.cache_clear()


@contextlib.contextmanager
def scope() -> Iterator[None]:
    global _depth
    if _depth == 0:
        forget()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
