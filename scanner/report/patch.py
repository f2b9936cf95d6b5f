"""`kubehop fix`'s diff: a patch `git apply` takes, that prints nothing a terminal or a CI log acts on.

A file name is written as git writes it: as it is when it is plain, else C-quoted ("a/x\\ny.yaml",
other bytes in octal, core.quotePath's default), which `git apply` reads back. So a newline in a
file name cannot start a line, and a control or bidirectional character shows as its bytes; a name
holding `##[` is quoted too, with the `[` in octal, so the header holds no workflow command.
The lines of the files are the patch itself and cannot be escaped: a diff that would print one that
a log or a terminal acts on (see `unsafe_line`) is not printed (the CLI says so, and --write applies it).
"""

from __future__ import annotations

import difflib
import os

from scanner.report.plain import UNSAFE

# The C escapes git's quote_c_style writes; other control bytes, DEL and every byte from 0x80 are octal.
_C_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
              0x22: '\\"', 0x5C: "\\\\"}
_ALLOWED_IN_A_LINE = {0x09}  # a tab is only a blank, in a log as in a terminal
_UNSAFE_IN_A_LINE = frozenset(chr(code) for code in UNSAFE if code not in _ALLOWED_IN_A_LINE)


def quoted_name(name: str) -> str:
    """`name` as git prints it in a patch header (a str from the file system: its bytes are os.fsencode's)."""
    raw = os.fsencode(name)
    if not any(byte < 0x20 or byte >= 0x7F or byte in (0x22, 0x5C) for byte in raw) and b"##[" not in raw:
        return name
    out = []
    for n, byte in enumerate(raw):
        if byte in _C_ESCAPES:
            out.append(_C_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F or (byte == 0x5B and raw[max(n - 2, 0):n] == b"##"):
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'


def unified_diff(name: str, original: str, fixed: str) -> str:
    """A diff of the file `name` (relative, as the headers show it) that `git apply` takes; lines are
    split on newlines only (YAML may hold U+2028 in strings)."""
    def lines(text: str) -> list[str]:
        *complete, last = text.split("\n")
        return [line + "\n" for line in complete] + ([last] if last else [])

    diff = difflib.unified_diff(lines(original), lines(fixed), quoted_name(f"a/{name}"), quoted_name(f"b/{name}"))
    # A last line without a newline is marked as diff(1) and git mark it, so the diff still ends with one.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)


def unsafe_line(diff: str) -> int | None:
    """The number (from 1) of the first line of `diff` that a CI log or a terminal would act on: one
    that starts with `::` after blanks, holds `##[`, or holds a control, bidirectional or separator
    character (a tab aside, and the carriage return that ends a line of a CRLF file); None: none is."""
    for number, line in enumerate(diff.split("\n"), start=1):
        body = line.removesuffix("\r")
        if body.lstrip().startswith("::") or "##[" in body or not _UNSAFE_IN_A_LINE.isdisjoint(body):
            return number
    return None
