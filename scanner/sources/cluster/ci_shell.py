"""A shell script (a workflow step's `run`, a script file it runs) into its simple commands, as far as
kubehop needs them to tell which programs the script runs: each command's words with their quotes
taken off, in order, and the commands inside `$(...)` and backticks too. Nothing is expanded: a word
keeps `$VAR` and `$(...)` as written. Heredoc bodies are data and are passed over; redirections and
their targets are left out. A quote left open is a ShellError: the script is not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_SEPARATORS = ";&|()\n"
_BLANKS = " \t\r"
_MAX_NESTING = 16
_KEYWORDS = frozenset(("if", "elif", "while", "until", "!", "then", "do", "else", "{"))


class ShellError(ValueError):
    pass


@dataclass
class Simple:
    words: list[str]
    line: int  # 1-based, in the text given
    nested: bool = False  # inside $(...) or backticks, or an array's words
    heredoc: bool = False  # the command's standard input is a heredoc or a here-string
    targets: list[str] = field(default_factory=list)  # the files its redirections name


def commands(text: str) -> list[Simple]:
    return _Parser(text).run()


class _Parser:
    def __init__(self, text: str, line: int = 1, nested: bool = False, depth: int = 0):
        if depth > _MAX_NESTING:
            raise ShellError(f"substitutions nested more than {_MAX_NESTING} deep at line {line}")
        self.text, self.i, self.line, self.nested, self.depth = text, 0, line, nested, depth
        self.found: list[Simple] = []
        self.words: list[str] = []
        self.targets: list[str] = []
        self.word: list[str] | None = None
        self.drop_next = False  # the next word is a redirection's target
        self.heredocs: list[tuple[str, bool]] = []  # delimiters to pass over after this line
        self.heredoc = False
        self.start = line
        self.in_test = False  # inside [[ ... ]]: && || ( ) < > are the test's own

    def run(self) -> list[Simple]:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2
                    self.line += 1
                    continue
                self._add(text[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ShellError(f"a ' left open at line {self.line}")
                self._add(text[self.i + 1:end])
                self.line += text.count("\n", self.i, end)
                self.i = end + 1
            elif c == '"':
                self._double()
            elif c == "$" and text.startswith("$(", self.i):
                self._substitution(self.i + 2, ")")
            elif c == "`":
                self._substitution(self.i + 1, "`")
            elif c == "$" and text.startswith("${", self.i):
                end = _closing(text, self.i + 2, "{", "}")
                self._add(text[self.i:end + 1])
                self.i = end + 1
            elif c == "#" and self.word is None:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif c in _BLANKS:
                self._end_word()
                self.i += 1
            elif self.in_test and c in "&|()<>":
                self._add(c)
                self.i += 1
            elif c in "<>":
                self._redirection()
            elif c == "(" and (self.word and self.word[-1].endswith("=") or self.word is None and
                               text.startswith("((", self.i)):  # an array a=(x "$(y)"), arithmetic (( i++ ))
                end = _closing(text, self.i + 1, "(", ")")
                inner = text[self.i + 1:end]
                nested = _Parser(inner, self.line, depth=self.depth + 1).run()
                self.found.extend(s for s in nested if s.nested)  # its substitutions only
                self._add(text[self.i:end + 1])
                self.i = end + 1
            elif c == "&" and text.startswith("&>", self.i):
                self.i += 1
                self._redirection()
            elif c in _SEPARATORS:
                self._end_command()
                if c == "\n":
                    self.line += 1
                    self.i += 1
                    self._pass_heredocs()
                else:
                    self.i += 1
            else:
                self._add(c)
                self.i += 1
        self._end_command()
        if self.heredocs:
            self._pass_heredocs()
        return self.found

    def _add(self, chars: str) -> None:
        if self.word is None:
            self.word = []
            if not self.words:
                self.start = self.line
        self.word.append(chars)

    def _end_word(self) -> None:
        if self.word is not None:
            word, self.word = "".join(self.word), None
            if self.drop_next:
                self.drop_next = False
                self.targets.append(word)
            else:
                self.words.append(word)
                if word == "[[" and all(w in _KEYWORDS for w in self.words[:-1]) or word == "]]":
                    self.in_test = word == "[["

    def _end_command(self) -> None:
        self._end_word()
        if self.words or self.targets:
            self.found.append(Simple(self.words, self.start, self.nested, self.heredoc, self.targets))
        self.words, self.targets, self.heredoc, self.drop_next, self.in_test = [], [], False, False, False

    def _double(self) -> None:
        text, i = self.text, self.i + 1
        part: list[str] = []
        while i < len(text) and text[i] != '"':
            if text[i] == "\\" and i + 1 < len(text):
                if text[i + 1] != "\n":
                    part.append(text[i + 1] if text[i + 1] in '"\\$`' else text[i:i + 2])
                i += 2
            elif text.startswith("$(", i) or text[i] == "`":
                opening = 2 if text[i] == "$" else 1
                end = self._nested(i + opening, ")" if opening == 2 else "`")
                part.append(text[i:end + 1])
                i = end + 1
            elif text.startswith("${", i):
                end = _closing(text, i + 2, "{", "}")
                part.append(text[i:end + 1])
                i = end + 1
            else:
                part.append(text[i])
                i += 1
        if i >= len(text):
            raise ShellError(f'a " left open at line {self.line}')
        self._add("".join(part))
        self.line += text.count("\n", self.i, i)
        self.i = i + 1

    def _substitution(self, start: int, closer: str) -> None:
        end = self._nested(start, closer)
        self._add(self.text[self.i:end + 1])
        self.line += self.text.count("\n", self.i, end)
        self.i = end + 1

    def _nested(self, start: int, closer: str) -> int:
        """The index of the `closer` of the substitution whose text starts at `start`; its commands parsed."""
        end = _closing(self.text, start, "(", ")") if closer == ")" else self.text.find("`", start)
        if end < 0:
            raise ShellError(f"a ` left open at line {self.line}")
        inner = self.text[start:end]
        for simple in _Parser(inner, self.line + self.text.count("\n", self.i, start), True, self.depth + 1).run():
            simple.nested = True
            self.found.append(simple)
        return end

    def _redirection(self) -> None:
        text = self.text
        if self.word is not None and "".join(self.word).isdigit():  # an IO number: 2>&1
            self.word = None
        else:
            self._end_word()
        if text.startswith("<<<", self.i):
            self.i += 3
            self.heredoc = True
        elif text.startswith("<<", self.i):
            self.i += 2
            strip = text.startswith("-", self.i)
            self.i += 1 if strip else 0
            while self.i < len(text) and text[self.i] in _BLANKS:
                self.i += 1
            start = self.i
            while self.i < len(text) and text[self.i] not in _BLANKS + _SEPARATORS + "<>":
                self.i += 1
            delimiter = text[start:self.i].replace("'", "").replace('"', "").replace("\\", "")
            self.heredocs.append((delimiter, strip))
            self.heredoc = True
            return
        else:
            self.i += 1
            while self.i < len(text) and text[self.i] in "<>&|":
                self.i += 1
        self.drop_next = True

    def _pass_heredocs(self) -> None:
        """The bodies of this line's heredocs, passed over up to each one's delimiter line."""
        text = self.text
        for delimiter, strip in self.heredocs:
            while self.i < len(text):
                end = text.find("\n", self.i)
                end = len(text) if end < 0 else end
                row = text[self.i:end]
                self.i, self.line = end + 1, self.line + 1
                if (row.lstrip("\t") if strip else row) == delimiter:
                    break
        self.heredocs = []


def _closing(text: str, start: int, opening: str, closer: str) -> int:
    """The index of the `closer` that matches an `opening` just before `start`, quotes respected."""
    depth, i = 1, start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and opening == "(":
            end = text.find("'", i + 1)
            if end < 0:
                raise ShellError("a ' left open")
            i = end + 1
            continue
        if c == '"':
            i = _closing_quote(text, i + 1) + 1
            continue
        if c == opening:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellError(f"a {opening} left open")


def _closing_quote(text: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i
        elif text.startswith("$(", i):
            i = _closing(text, i + 2, "(", ")") + 1
        else:
            i += 1
    raise ShellError('a " left open')
