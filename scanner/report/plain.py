"""Text from the scanned tree, made safe to print on a terminal or in a CI job log.

Names, paths and messages come from files a pull request may have written. Printed raw, a newline
in an object name starts a new log line, and a log line that starts with `::` (after blanks), or
holds `##[` anywhere, is a workflow command to the GitHub Actions runner (spoofed annotations,
`::stop-commands::` to hide kubehop's own, `::add-mask::`); an escape sequence repaints a terminal.
So every value from the tree is passed through `printable`, and every line through `log_line`.
"""

from __future__ import annotations

# Control characters (C0, DEL, C1), line and paragraph separators, and bidirectional overrides
# (text that reads differently from what it is): shown as escapes.
_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_UNSAFE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, 0x200E, 0x200F,
           *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TABLE = {code: _ESCAPES.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") for code in _UNSAFE}


def printable(text: object) -> str:
    """`text` on one line, with nothing a terminal or a log reader would act on."""
    return str(text).translate(_TABLE)


def log_line(line: str) -> str:
    """A line the Actions runner cannot read as a workflow command."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        line = f"{line[:len(line) - len(stripped)]}\\{stripped}"
    return line.replace("##[", "##\\[")


def log_text(text: str) -> str:
    """Every line of a report through `log_line` (its values already through `printable`)."""
    return "\n".join(map(log_line, text.split("\n")))


def log_lines(lines: list[str]) -> str:
    """A report made of `lines`, each meant as one line: whatever a value from the tree holds (a newline
    in an object name) is escaped within its line, and no line is a workflow command."""
    return "".join(log_line(printable(line)) + "\n" for line in lines)
