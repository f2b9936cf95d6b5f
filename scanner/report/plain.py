"""Text from the scanned tree, made safe to print on a terminal or in a CI job log.

Names, paths and messages come from files a pull request may have written. Printed raw, a newline
in an object name starts a new log line, and a log line that starts with `::` (after blanks), or
holds `##[` anywhere, is a workflow command to the GitHub Actions runner (spoofed annotations,
`::stop-commands::` to hide kubehop's own, `::add-mask::`); an escape sequence repaints a terminal
or hides a hyperlink in it (OSC 8), and a bidirectional override makes text read as what it is not.
So every value from the tree is passed through `printable`, and every line through `log_line`; a
JSON document printed goes through `log_json`. Each other kind of output has its own sanitiser,
built on `printable`: Markdown (scanner.report.md), workflow commands (scanner.report.github),
SARIF message text (scanner.report.sarif), a patch's file names (scanner.report.patch).
"""

from __future__ import annotations

import functools
import json
import re

from scanner.report import json_text

# Control characters (C0, DEL, C1), line and paragraph separators, bidirectional controls (text that
# reads differently from what it is) and lone surrogates (a file name that is not UTF-8: U+DC80-U+DCFF
# stand for its bytes; printed raw they cannot even be encoded): shown as escapes.
UNSAFE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
          *range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000)]
_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(code: int) -> str:
    if code in _ESCAPES:
        return _ESCAPES[code]
    if code < 0x100 or 0xDC80 <= code <= 0xDCFF:  # a surrogate standing for a byte is shown as that byte
        return f"\\x{code & 0xFF:02x}"
    return f"\\u{code:04x}"


def _char_class(codes: list[int]) -> re.Pattern:
    """One character of `codes`, as a class of ranges (a class of 2,000 single characters takes 10 ms
    to compile, on every start of kubehop)."""
    ranges: list[list[int]] = []
    for code in sorted(codes):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return re.compile("[" + "".join(re.escape(chr(first)) + (f"-{re.escape(chr(last))}" if last > first else "")
                                    for first, last in ranges) + "]")


# The classes are compiled the first time a text needs them, not at import: a class reaching past
# Latin-1 makes re build a map of 65,536 characters (3 ms, a fiftieth of a one-file run), and most
# text needs neither. Each character of UNSAFE is a control, a format character, a line or paragraph
# separator or a surrogate, none of which str.isprintable() passes (tests/test_hostile_output.py): a
# printable text holds none of them.
@functools.cache
def _unsafe() -> re.Pattern:
    return _char_class(UNSAFE)


@functools.cache
def _json_unsafe() -> re.Pattern:
    """What JSON text may not hold raw: json.dumps escapes C0 controls in strings itself, and its raw
    newlines are its own."""
    return _char_class([code for code in UNSAFE if code >= 0x20])


def printable(text: object) -> str:
    """`text` on one line, with nothing a terminal or a log reader would act on."""
    text = str(text)
    return text if text.isprintable() else _unsafe().sub(_escaped, text)


def _escaped(match: re.Match) -> str:
    return _escape(ord(match.group(0)))


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


def log_json(document: object, indent: int | None = 2, ensure_ascii: bool = False) -> str:
    """`document` as JSON text that reads back the same and is safe on a log line: what `printable`
    would escape is written as a \\u escape, and so is the `[` of `##[` (JSON's own syntax is ASCII
    and holds no `#`, so both can only be inside a string, where the escape means the character)."""
    text = json_text.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
    if not text.isascii() or "\x7f" in text:  # ASCII text holds no character of UNSAFE from 0x20 on but DEL
        text = _json_unsafe().sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text.replace("##[", "##\\u005b") + "\n"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Keys YAML 1.1 reads as something other than a string when unquoted.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def log_yaml(document: object) -> str:
    """`document` (JSON data) as block YAML that reads back the same and is safe on a log line: every
    string is a double-quoted scalar written as `log_json` writes a JSON string, ASCII only (YAML's
    double-quoted escapes include JSON's), so nothing in it is raw; every line starts with blanks, a
    `-`, a key kubehop writes or a `"`, never with `::`."""
    lines: list[str] = []
    _yaml_node(document, 0, lines)
    return "\n".join(lines) + "\n"


def _yaml_scalar(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True).replace("##[", "##\\u005b")
    return json.dumps(value)  # null, true, false, numbers: YAML reads them as JSON does


def _yaml_key(key: object) -> str:
    key = str(key)
    plain = _PLAIN_KEY.fullmatch(key) and key.lower() not in _YAML_WORDS
    return key if plain else _yaml_scalar(key)


def _yaml_node(value: object, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict) and value:
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{_yaml_key(key)}:")
                _yaml_node(item, indent + 2, lines)
            else:
                lines.append(f"{pad}{_yaml_key(key)}: {_yaml_inline(item)}")
    elif isinstance(value, list) and value:
        for item in value:
            if isinstance(item, (dict, list)) and item:
                start = len(lines)
                _yaml_node(item, indent + 2, lines)
                lines[start] = f"{pad}- {lines[start][indent + 2:]}"
            else:
                lines.append(f"{pad}- {_yaml_inline(item)}")
    else:
        lines.append(pad + _yaml_inline(value))


def _yaml_inline(value: object) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _yaml_scalar(value)


# A spreadsheet reads a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@")


def csv_cell(value: object) -> str:
    """A value from the tree as a CSV cell: printable (a record stays on one line), and one that a
    spreadsheet would run as a formula starts with a `'`, which shows it as text."""
    text = "" if value is None else printable(value)
    return f"'{text}" if text.startswith(_FORMULA_START) else text
