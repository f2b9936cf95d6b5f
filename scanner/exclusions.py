"""Which files a scan leaves out: globs relative to a folder (the configuration's, or the working one)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class Exclusions:
    """`*` also crosses folders; a pattern naming a folder leaves out everything under it;
    a leading `**/` also matches at the top."""

    base: str
    patterns: tuple[str, ...]

    def matches(self, path: str) -> bool:
        if not self.patterns or path == "-":
            return False
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base)).replace(os.sep, "/")
        return any(self._match(relative, pattern) for pattern in self.patterns)

    @staticmethod
    def _match(relative: str, pattern: str) -> bool:
        pattern = pattern.removeprefix("./").rstrip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        return any(fnmatchcase(relative, p) or fnmatchcase(relative, p + "/*") for p in candidates)
