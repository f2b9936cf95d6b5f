"""What the plain files' first reading read of them, kept for the main read to take instead of reading
again. Flux's post-build substitution must know its variables before any object is read
(sources/postbuild), so every plain file's text is read before the main read, and the files holding a
Flux Kustomization (or a ConfigMap or Secret it substitutes from) are composed too: the main read
(files/source.py) takes the text, and the documents, of each file it reads from here.

One `Kept` a scan, made by `collect` and let go once the plain files are read; worker processes
(parallel.py) take from the copy they were forked with. Bounded: past so much text a file is read
again as before, and only so many files' documents stay composed (nodes cost many times their text).
"""

from __future__ import annotations

from scanner.model import Diagnostic
from scanner.sources.files.walk import read_file
from scanner.sources.yaml.yamldoc import Composed, compose_streamable

_TEXT_KEPT = 64 * 1024 * 1024  # characters of text kept, all files together
_DOCUMENTS_KEPT = 1024 * 1024  # characters of text whose documents are kept composed


class Kept:
    """The text (or why it cannot be read) of each file read, and the documents of those composed."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[str | None, Diagnostic | None]] = {}
        self._documents: dict[str, list[Composed]] = {}
        self._text_left, self._documents_left = _TEXT_KEPT, _DOCUMENTS_KEPT

    def read(self, path: str) -> tuple[str | None, Diagnostic | None]:
        """read_file(path), kept for the main read while there is room."""
        if path in self._texts:
            return self._texts[path]
        found = read_file(path)
        size = len(found[0] or "")
        if size <= self._text_left:
            self._texts[path] = found
            self._text_left -= size
        return found

    def compose(self, path: str, text: str) -> list[Composed] | None:
        """compose_streamable of the file's text, kept for the main read while there is room."""
        if path in self._documents:
            return self._documents[path]
        composed = compose_streamable(text, path)
        if composed is not None and path in self._texts and len(text) <= self._documents_left:
            self._documents[path] = composed
            self._documents_left -= len(text)
        return composed

    def take(self, path: str) -> tuple[str | None, Diagnostic | None, list[Composed] | None] | None:
        """The file's text, or why it cannot be read, and its documents if composed; None: not kept.
        Taken once: the main read reads each file once."""
        found = self._texts.pop(path, None)
        if found is None:
            return None
        return (*found, self._documents.pop(path, None))

    def clear(self) -> None:
        self._texts.clear()
        self._documents.clear()

