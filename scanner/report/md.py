"""Writing GitHub Markdown: text renders as itself, and only the links kubehop means are links.

GitHub renders a comment with cmark-gfm (CommonMark, tables, autolinks, task lists, strikethrough,
`$` math), then turns @names and #numbers in the resulting text into mentions and references.
Text that may come from the scanned tree (names, paths, messages that quote it) goes through
`text` or `code`:
- the ASCII punctuation that opens inline Markdown is backslash-escaped: \\ ` * _ [ ] < > & ~ | $
  (`(`, `)`, `+`, `#`, `!`, `.` open nothing in the middle of a line and are left as they are);
- it cannot autolink: "://" and "www." get a backslash, which cmark-gfm's autolinker does not look past;
- it cannot mention or reference anyone: "@" and "#" before a letter or digit get a WORD JOINER
  (U+2060), invisible, which GitHub's filters do not look past either (a backslash would not stop them).
kubehop's own sentences (data notes, with the URLs they cite) go through `prose`: escaped the same
way, except that their URLs stay URLs, so GitHub links them.
Before any of that, what a terminal or a log would act on is escaped visibly (scanner.report.plain:
a newline in a name shows as `\\n`), and the whole document goes through `document` on its way out
(scanner.report.comment): a Markdown report printed to a CI log holds no workflow command either.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from scanner.report.plain import printable

_INLINE = re.compile(r"([\\`*_\[\]<>&~|$])")
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(://)|\b(www)\.")
_MENTION = re.compile(r"([@#])(?=[A-Za-z0-9])")
_URL = re.compile(r"https?://[^\s<>|`]+")
_TICKS = re.compile(r"`+")
_JOINER = "\u2060"
_LONG_WORD = re.compile(r"[^\s<>]{16,}")
_LONG_RUN = 32  # characters between two `/` not kept whole (an API group, `notification.toolkit.fluxcd.io`, is shorter)
_URL_SAFE = ":/?#[]@!$&'*+,;=%~"  # kept as they are in a link's destination; ( ) and spaces are encoded
_COMMAND_START = re.compile(r"^(\s*:):")


def _one_line(value: object) -> str:
    """`value` printable (scanner.report.plain), its runs of blanks one space."""
    return " ".join(printable(value).split())


def text(value: object) -> str:
    """Text from the tree, on one line: renders as itself, links and mentions nobody."""
    return _inert(_one_line(value))


def prose(value: object) -> str:
    """kubehop's own sentence: escaped as `text`, but the URLs it cites stay links. Its line breaks
    (a note folded in the data) are blanks."""
    flat = _one_line(" ".join(str(value).split()))
    parts, last = [], 0
    for url in _URL.finditer(flat):
        parts += [_inert(flat[last:url.start()]), url.group(0).replace("|", "%7C")]
        last = url.end()
    return "".join(parts + [_inert(flat[last:])])


def _inert(flat: str) -> str:
    escaped = _AUTOLINK.sub(lambda m: r"\://" if m.group(1) else r"www\.", _INLINE.sub(r"\\\1", flat))
    return _MENTION.sub(lambda m: m.group(1) + _JOINER, escaped)


def wrappable(markdown: str, dots: bool = True) -> str:
    """Markdown whose long words (API versions, paths) may wrap after a `/` or `.`: a table cell that
    holds `flowcontrol.apiserver.k8s.io/v1beta3` would otherwise push the table past a comment's width.
    After each `/`; a word without one (a field path, a domain), and a long run between two (a field
    path into an annotation key, `…annotations["container.apparmor.security.beta.kubernetes.io/x"]`),
    after each `.` too. `dots=False` (a file path): after each `/` only."""
    def at_dots(run: str) -> str:
        return re.sub(r"(\.)(?=\w)", r"\1<wbr>", run) if dots and len(run) >= _LONG_RUN else run

    def breaks(word: str) -> str:
        word = "/".join(at_dots(run) for run in word.split("/"))
        return re.sub(r"(/)(?=\w)", r"\1<wbr>", word)

    return _LONG_WORD.sub(lambda m: breaks(m.group(0)), markdown)


def path(value: str) -> str:
    """A file path (from the tree) in monospace that wraps after `/`: <code> can hold <wbr>, a code span cannot."""
    return f"<code>{wrappable(text(value), dots=False)}</code>"


def code(value: object, in_table: bool = True) -> str:
    """A code span: nothing in it is Markdown. In a table cell `|` still ends the cell unless escaped."""
    flat = _one_line(value)
    fence = "`" * (1 + max((len(t) for t in _TICKS.findall(flat)), default=0))
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    body = flat.replace("|", r"\|") if in_table else flat
    return f"{fence}{pad}{body}{pad}{fence}"


def link(label: str, url: str) -> str:
    """A link kubehop writes: `label` is kubehop's, `url` from its data (percent-encoded where Markdown would stop)."""
    return f"[{text(label)}]({quote(url, safe=_URL_SAFE)})"


def html_text(value: object) -> str:
    """Text inside raw HTML (a <summary>): entities for < > & \", and no mention or reference."""
    return _MENTION.sub(lambda m: m.group(1) + _JOINER, html.escape(_one_line(value)))


def fenced(lines: list[str], info: str = "") -> list[str]:
    """A fenced code block of `lines` (each printable), its fence longer than any backtick run inside."""
    body = [printable(line) for line in lines]
    fence = "`" * max(3, 1 + max((len(t) for line in body for t in _TICKS.findall(line)), default=0))
    return [f"{fence}{info}", *body, fence]


def document(markdown: str) -> str:
    """A Markdown document (or a piece of one, whole lines) as it is written out: each line printable,
    and none a workflow command should it be printed to a CI log. Text through `text` holds no `##[`
    already (`[` is escaped), but a code span or block cannot escape: there an invisible WORD JOINER
    goes between `##` and `[`, and between the two colons of a line that starts with `::`."""
    lines = [_COMMAND_START.sub("\\1" + _JOINER + ":", printable(line)).replace("##[", "##" + _JOINER + "[")
             for line in markdown.split("\n")]
    return "\n".join(lines)
