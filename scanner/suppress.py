"""Inline suppressions: `# kubehop: ignore[rule-id, other-id] -- reason` in a YAML comment.

On a finding's line it silences that line; alone at the top of a document (before its first
key) it silences the whole document. libyaml drops comments, so they are read from the text,
and only from files that mention "kubehop:". Suppressions that silence nothing are reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable, Sequence

from scanner.model import Diagnostic, Finding

MARKER = "kubehop:"
_COMMENT = re.compile(r"#\s*kubehop:(.*)$")
_IGNORE = re.compile(r"\s*ignore\[([^\]]+)\]\s*(?:--\s*(?P<reason>.*?))?\s*$")
_DOC_SEPARATOR = re.compile(r"^---(?:[ \t]|$)")
_EXPECTED = "expected '# kubehop: ignore[rule-id, ...] -- reason'"


@dataclass(frozen=True, slots=True)
class Suppression:
    """A `# kubehop: ignore[...]` comment: the lines it covers, the rules it silences, and why."""

    path: str
    line: int  # where the comment is
    last_line: int  # the same line, or the end of the document it heads
    rules: tuple[str, ...]
    reason: str | None

    def covers(self, path: str, line: int) -> bool:
        return path == self.path and self.line <= line <= self.last_line

    def silences(self, rule_id: str, path: str, line: int) -> bool:
        return self.covers(path, line) and rule_matches(rule_id, self.rules)


def rule_matches(rule_id: str, patterns: Iterable[str]) -> bool:
    """Rule ids in configurations and comments may be globs: 'policy/v1beta1/*'."""
    return any(fnmatchcase(rule_id, p) for p in patterns)


def read_suppressions(text: str, path: str) -> tuple[list[Suppression], list[Diagnostic]]:
    """The suppressions written in a file's comments, and the comments that cannot be understood."""
    found: list[Suppression] = []
    problems: list[Diagnostic] = []
    # Line breaks as the YAML reader counts them (str.splitlines knows more).
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    heading: list[Suppression] = []  # document suppressions whose document's end is not known yet
    at_top = True
    for number, line in enumerate(lines, 1):
        if _DOC_SEPARATOR.match(line):
            found.extend(_until(heading, number - 1))
            heading, at_top = [], True
        stripped = line.strip()
        comment = _COMMENT.search(line) if MARKER in line else None
        if comment:
            parsed = _IGNORE.fullmatch(comment.group(1))
            if parsed is None:
                problems.append(Diagnostic(path, f"kubehop comment not understood; {_EXPECTED}", number,
                                           level="warning"))
            else:
                rules = tuple(r.strip() for r in parsed.group(1).split(",") if r.strip())
                suppression = Suppression(path, number, number, rules, parsed.group("reason") or None)
                top = at_top and (stripped.startswith("#") or _DOC_SEPARATOR.match(line))
                (heading if top else found).append(suppression)
        if stripped and not stripped.startswith("#") and not _DOC_SEPARATOR.match(line):
            at_top = False
    found.extend(_until(heading, len(lines)))
    return found, problems


def _until(heading: list[Suppression], last_line: int) -> list[Suppression]:
    return [Suppression(s.path, s.line, last_line, s.rules, s.reason) for s in heading]


def apply(findings: Sequence[Finding], suppressions: Sequence[Suppression]) -> tuple[list[Finding], list[Diagnostic]]:
    """The findings no suppression silences, and a warning for each suppressed id that silenced nothing."""
    by_path: dict[str, list[Suppression]] = {}
    for suppression in suppressions:
        by_path.setdefault(suppression.path, []).append(suppression)
    used: set[tuple[Suppression, str]] = set()
    kept: list[Finding] = []
    for finding in findings:
        where = finding.origin
        hits = [(s, p) for s in by_path.get(where.path, ()) if s.covers(where.path, where.line)
                for p in s.rules if fnmatchcase(finding.rule_id, p)]
        used.update(hits)
        if not hits:
            kept.append(finding)
    unused = [Diagnostic(s.path, f"unused suppression: no {p} finding {_scope(s)}", s.line, level="warning")
              for s in suppressions for p in s.rules if (s, p) not in used]
    return kept, unused


def _scope(suppression: Suppression) -> str:
    return "on this line" if suppression.line == suppression.last_line else "in this document"

