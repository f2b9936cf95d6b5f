"""JSON with comments (JSONC): the editor and tool settings a repository keeps beside its manifests
(`.devcontainer/devcontainer.json`, `tsconfig.json`, `.vscode/settings.json`) allow `//` and `/* */`
comments and trailing commas, which neither JSON nor YAML reads. Such a file that holds no Kubernetes
object is none of kubehop's business (as a values file or CI config is not); one that does is still
invalid input, as kubectl refuses it too.
"""

from __future__ import annotations

import json
import re

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def settings_without_objects(text: str) -> bool:
    """Whether `text` reads as JSONC once its comments and trailing commas go, and holds no object
    with both `apiVersion` and `kind` (at its top, or in a top-level list)."""
    try:
        value = json.loads(_TRAILING_COMMA.sub(r"\1", _without_comments(text)))
    except ValueError:
        return False
    items = value if isinstance(value, list) else [value]
    return not any(isinstance(item, dict) and "apiVersion" in item and "kind" in item for item in items)


def _without_comments(text: str) -> str:
    """`text` with its `//` and `/* */` comments blanked, strings left whole (a URL's // included)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = string_end(text, i)
            out.append(text[i:end])
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return text  # an unclosed comment: not JSONC either
            out.append(" ")
            i = end + 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def string_end(text: str, start: int) -> int:
    """The index after the string opened at `start` (the end of the text when it is not closed)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)
