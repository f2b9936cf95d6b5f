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
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

_INLINE = re.compile(r"([\\`*_\[\]<>&~|$])")
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(://)|\b(www)\.")
_MENTION = re.compile(r"([@#])(?=[A-Za-z0-9])")
_URL = re.compile(r"https?://[^\s<>|`]+")
_TICKS = re.compile(r"`+")
_JOINER = "\u2060"
_LONG_WORD = re.compile(r"[^\s<>]{16,}")
_URL_SAFE = ":/?#[]@!$&'*+,;=%~"  # kept as they are in a link's destination; ( ) and spaces are encoded


def text(value: object) -> str:
    """Text from the tree, on one line: renders as itself, links and mentions nobody."""
    return _inert(" ".join(str(value).split()))


def prose(value: object) -> str:
    """kubehop's own sentence: escaped as `text`, but the URLs it cites stay links."""
    flat = " ".join(str(value).split())
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
    holds `flowcontrol.apiserver.k8s.io/v1beta3` would otherwise push the table past a comment's width."""
    def breaks(word: str) -> str:  # after each "/", else (a field path, a domain) after each "."
        return re.sub(r"(/)(?=\w)" if "/" in word or not dots else r"(\.)(?=\w)", r"\1<wbr>", word)

    return _LONG_WORD.sub(lambda m: breaks(m.group(0)), markdown)


def path(value: str) -> str:
    """A file path (from the tree) in monospace that wraps after `/`: <code> can hold <wbr>, a code span cannot."""
    return f"<code>{wrappable(text(value), dots=False)}</code>"


def code(value: object, in_table: bool = True) -> str:
    """A code span: nothing in it is Markdown. In a table cell `|` still ends the cell unless escaped."""
    flat = " ".join(str(value).split())
    fence = "`" * (1 + max((len(t) for t in _TICKS.findall(flat)), default=0))
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    body = flat.replace("|", r"\|") if in_table else flat
    return f"{fence}{pad}{body}{pad}{fence}"


def link(label: str, url: str) -> str:
    """A link kubehop writes: `label` is kubehop's, `url` from its data (percent-encoded where Markdown would stop)."""
    return f"[{text(label)}]({quote(url, safe=_URL_SAFE)})"


def html_text(value: object) -> str:
    """Text inside raw HTML (a <summary>): entities for < > & \", and no mention or reference."""
    return _MENTION.sub(lambda m: m.group(1) + _JOINER, html.escape(" ".join(str(value).split())))


def fenced(body: str, info: str = "") -> list[str]:
    """A fenced code block around `body`, its fence longer than any backtick run inside."""
    fence = "`" * max(3, 1 + max((len(t) for t in _TICKS.findall(body)), default=0))
    return [f"{fence}{info}", *body.splitlines(), fence]
