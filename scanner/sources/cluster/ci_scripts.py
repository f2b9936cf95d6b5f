"""The scripts of a CI job read for what they run (ci_jobs.py reads the job): a `run` script command
by command (ci_shell.py), the shell scripts of the repository it runs or sources (read the same way,
in the folder and with the variables of the caller), the programs of another language it runs (read as
text: one that names a client or a kubeconfig is undecided). What each command does is the data's
(scanner.ci_rules); what a step or a command gives the job is noted in `found`, by what it does.

A path is read only inside the workflow's repository (`root`): a script elsewhere, or at a path
kubehop cannot work out (a variable it never sees given), leaves the job undecided.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from scanner.ci_rules import CLUSTER, CREDENTIALS, OFFLINE, OWN_CLUSTER, UNDECIDED, ci_rules
from scanner.containment import leaves
from scanner.sources.cluster.ci_shell import ShellError, commands
from scanner.sources.files.walk import read_file

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_WORKSPACE = re.compile(r"\$\{\{\s*github\.workspace\s*\}\}")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$", re.S)
# The folder of the script being read, as scripts write it: $(dirname "$0"), ${BASH_SOURCE%/*}, ...
_SCRIPT_DIR = re.compile(r'\$\(\s*dirname\s+"?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?"?\s*\)'
                         r'|\$\{(?:0|BASH_SOURCE(?:\[0\])?)%/\*\}')
_CD_PWD = re.compile(r'\$\(\s*cd\s+"?\x00"?\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*\)')
_EXPR = "__expr__"  # what a `${{ }}` expression becomes in a script: a word kubehop cannot know
_SHELLS = frozenset(("bash", "sh", "zsh", "dash", "ksh"))
_LEADING = frozenset(("if", "then", "else", "elif", "do", "while", "until", "!", "time", "{", "}"))
_NOT_COMMANDS = frozenset(("for", "case", "select", "function", "esac", "fi", "done", "in", "type", "which", "hash",
                           "[[", "[", "]]", "test"))
_SHEBANG = re.compile(r"^#!.*\b(bash|sh|zsh|dash|ksh)\b")
_SHELL_SUFFIXES = ("", ".sh", ".bash", ".zsh", ".ksh")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_DECLARE = frozenset(("export", "local", "declare", "readonly", "typeset"))
_PREFIXES = frozenset(("sudo", "doas", "nohup", "nice", "stdbuf", "builtin", "exec", "command", "env", "timeout",
                       "watch", "xargs"))
_VALUE_FLAGS = {"xargs": ("-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s"), "watch": ("-n", "-d"),
                "sudo": ("-u", "-g"), "timeout": ("-s", "-k")}
_MAX_FILES = 64  # scripts and local actions read for one job
_MAX_DEPTH = 8
_MAX_VALUES = 8  # the values of a variable kubehop follows into a command word
_COMMAND_SAYS = {CREDENTIALS: ", which writes a kubeconfig", OWN_CLUSTER: ", which creates a cluster for the job",
                 UNDECIDED: ", which runs what kubehop does not read"}


@dataclass
class Context:
    where: str  # for a person: "step Deploy", "scripts/deploy.sh"
    cwd: str | None  # where relative paths start (None: outside what kubehop can tell)
    script_dir: str | None = None  # the folder of the script being read ($(dirname "$0"))
    variables: dict[str, list[str]] = field(default_factory=dict)  # every value each is given, in order
    depth: int = 0


class ScriptReader:
    """What the commands of a job's scripts do, noted by what they do (ci_rules: CREDENTIALS ...)."""

    def __init__(self, root: str | None):
        self.rules = ci_rules()
        self.root = root
        self.seen: set[str] = set()
        self.outside: list[str] = []  # checkouts of other repositories
        self.mirrors: list[str] = []  # checkouts of this one into a folder of the workspace
        self.found: dict[str, list[str]] = {CREDENTIALS: [], CLUSTER: [], OWN_CLUSTER: [], UNDECIDED: [], OFFLINE: []}
        self.own_programs = frozenset(c.program for cs in self.rules.commands.values() for c in cs
                                      if c.does == OWN_CLUSTER)

    def note(self, does: str, why: str) -> None:
        self.found[does].append(why)

    def read(self, path: str, where: str, depth: int) -> str | None:
        if depth >= _MAX_DEPTH or len(self.seen) >= _MAX_FILES:
            self.note(UNDECIDED, f"{where} runs {self.shown(path)}, past what kubehop reads for a job")
            return None
        self.seen.add(path)
        text, problem = read_file(path)
        if problem is not None:
            self.note(UNDECIDED, f"{where} runs {self.shown(path)}, which kubehop cannot read ({problem.message})")
        return text

    # --- scripts ----------------------------------------------------------------------------------

    def run(self, text: str, context: Context, shell: str | None) -> None:
        if shell and shell.split()[0].rsplit("/", 1)[-1] not in _SHELLS:
            self.note(UNDECIDED, f"{context.where} runs a {shell.split()[0]} script")
            return
        text = _WORKSPACE.sub("$GITHUB_WORKSPACE", text)
        for expression in _EXPRESSION.findall(text):
            if self.rules.names_kubeconfig(expression):
                self.note(CREDENTIALS, f"{context.where} reads {expression.strip()}")
        self.script(_EXPRESSION.sub(_EXPR, text), context)

    def script(self, text: str, context: Context) -> None:
        try:
            found = commands(text)
        except RecursionError:
            self.note(UNDECIDED, f"{context.where} runs a script nested deeper than kubehop reads")
            return
        except ShellError as err:
            self.note(UNDECIDED, f"{context.where} runs a script kubehop cannot read ({err})")
            return
        for simple in found:
            where = f"{context.where}:{simple.line}" if context.script_dir else context.where
            for target in (t for t in simple.targets if self.rules.names_kubeconfig(t)):
                self.note(CREDENTIALS, f"{where} writes {target}")
            self.command(list(simple.words), context, where)

    def command(self, words: list[str], context: Context, where: str) -> None:
        while words and _ASSIGNMENT.match(words[0]):
            self.assign(words.pop(0), context, where)
        while words and (words[0] in _LEADING or words[0] in _PREFIXES):
            program = words.pop(0)
            if program == "command" and words[:1] in (["-v"], ["-V"]):
                return
            words = _past_flags(program, words)
            if program == "env":
                while words and _ASSIGNMENT.match(words[0]):
                    self.assign(words.pop(0), context, where)
            elif program == "timeout" and words:
                words.pop(0)  # the duration
        if not words or words[0] in _NOT_COMMANDS or words[0].startswith("(("):
            return  # not a command, or arithmetic
        program, args = words[0], words[1:]
        if program in _DECLARE:
            for arg in args:
                if _ASSIGNMENT.match(arg):
                    self.assign(arg, context, where)
            return
        if program == "find" and any(a in ("-exec", "-execdir", "-ok") for a in args):
            start = next(i for i, a in enumerate(args) if a in ("-exec", "-execdir", "-ok")) + 1
            end = next((i for i in range(start, len(args)) if args[i] in (";", "+")), len(args))
            self.command(args[start:end], context, where)
            return
        name = program.rsplit("/", 1)[-1]
        said = self.rules.command(name, args) if "$" not in program else None
        if (said is None or said[0] != CREDENTIALS) and name not in self.own_programs and \
                any(self.rules.names_kubeconfig(w) for w in words):
            self.note(CREDENTIALS, f"{where} runs `{_shown_command(words)}`, which names a kubeconfig")
        if said is not None:
            does, shown, listed = said
            how = _COMMAND_SAYS.get(does, "") if does != UNDECIDED or listed else \
                f", a {name} command kubehop's data does not classify"
            self.note(does, f"{where} runs `{shown}`{how}")
        elif name in self.rules.commands and "$" not in program:
            return  # a command of a program the data names that runs no client (aws s3 cp)
        elif name in _SHELLS or program in ("source", "."):
            self.shell(program, args, context, where)
        elif name in self.rules.script_runners:
            self.runner(name, args, context, where)
        elif "$" in program or "`" in program or _EXPR in program:
            held = _values(program, context.variables) if context.depth < _MAX_DEPTH else None
            if held is None:
                self.note(UNDECIDED, f"{where} runs `{program}`, a command kubehop cannot work out")
            for value in held or ():
                self.command([*value.split(), *args], replace(context, depth=context.depth + 1), where)
        elif "/" in program:
            self.script_file(program, context, where)
        elif program.endswith(".sh"):
            self.note(UNDECIDED, f"{where} runs {program} from the PATH")

    def assign(self, word: str, context: Context, where: str) -> None:
        name, value = _ASSIGNMENT.match(word).groups()
        values = context.variables.setdefault(name, [])
        if value not in values and len(values) <= _MAX_VALUES:  # past that, too many to follow
            values.append(value)
        if self.rules.names_kubeconfig(word):
            self.note(CREDENTIALS, f"{where} sets {name}")

    def shell(self, program: str, args: list[str], context: Context, where: str) -> None:
        """`bash -c '...'`, `bash script.sh`, `source lib.sh`, or a shell reading standard input."""
        index = 0
        while index < len(args) and args[index][:1] in "-+" and program not in ("source", "."):
            flag = args[index]
            if not flag.startswith("--") and "c" in flag and index + 1 < len(args):
                self.script(args[index + 1], Context(where, context.cwd, None, context.variables, context.depth))
                return
            index += 2 if args[index] in ("-o", "+o", "-O", "+O") else 1
        if index >= len(args):
            self.note(UNDECIDED, f"{where} runs {program} on a script it reads from standard input")
            return
        self.script_file(args[index], context, where, sourced=program in ("source", "."))

    def script_file(self, word: str, context: Context, where: str, sourced: bool = False) -> None:
        path, why = self.resolve(word, context)
        if path is None:
            self.note(UNDECIDED, f"{where} runs {word}, {why}")
            return
        if path in self.seen:
            return
        text = self.read(path, where, context.depth)
        if text is None:
            return
        first, shown = text.split("\n", 1)[0], self.shown(path)
        if not (_SHEBANG.match(first) or not first.startswith("#!") and os.path.splitext(path)[1] in _SHELL_SUFFIXES):
            self.mentions(text, shown, where)
            return
        inner = Context(shown, context.cwd, os.path.dirname(path),
                         context.variables if sourced else dict(context.variables), context.depth + 1)
        self.script(text, inner)

    def runner(self, name: str, args: list[str], context: Context, where: str) -> None:
        """python, node: a file read as text only; one naming a client or a kubeconfig is undecided."""
        for index, arg in enumerate(args):
            if arg in ("-m",):
                return
            code = arg in ("--eval", "--print", "-Command") or \
                arg[:1] == "-" and arg[1:2] != "-" and bool(set(arg) & set("cepE"))  # python -c, node -pe
            if code and index + 1 < len(args):
                self.mentions(args[index + 1], f"the {name} code of {where}", where)
                return
            if not arg.startswith("-"):
                path, why = self.resolve(arg, context)
                if path is None:
                    self.note(UNDECIDED, f"{where} runs {name} {arg}, {why}")
                elif path not in self.seen and (text := self.read(path, where, context.depth)) is not None:
                    self.mentions(text, self.shown(path), where)
                return

    def mentions(self, text: str, shown: str, where: str) -> None:
        names = "|".join(re.escape(n) for n in sorted(self.rules.clients | {"kubernetes"}))
        if re.search(rf"\b({names})\b", text, re.I) or self.rules.names_kubeconfig(text):
            self.note(UNDECIDED, f"{where} runs {shown}, a program that names a client kubehop cannot follow")

    # --- paths ------------------------------------------------------------------------------------

    def join(self, cwd: str | None, folder: str) -> str | None:
        if cwd is None or "$" in folder or _EXPR in folder:
            return None
        return os.path.normpath(os.path.join(cwd, folder))

    def resolve(self, word: str, context: Context) -> tuple[str | None, str]:
        """The file `word` names, inside the repository, and if none, why (for a person)."""
        for _ in range(3):  # variables that hold variables
            before = word
            workspace = self.root or "$?"  # without a repository, a path kubehop cannot work out
            word = word.replace("${GITHUB_WORKSPACE}", workspace).replace("$GITHUB_WORKSPACE", workspace)
            if context.script_dir:
                word = _CD_PWD.sub("\x00", _SCRIPT_DIR.sub("\x00", word)).replace("\x00", context.script_dir)
            word = _VARIABLE.sub(lambda m: _only(context.variables.get(m.group(1) or m.group(2)), m.group(0)), word)
            if word == before:
                break
        if any(c in word for c in "$`*?~\x00") or _EXPR in word:
            return None, "a path kubehop cannot work out"
        if self.root is None or context.cwd is None:
            return None, "a path outside any repository kubehop can tell"
        path = os.path.normpath(os.path.join(context.cwd, word))
        why = leaves(path, self.root, self.root)
        if why is not None:
            return None, f"which {why}"
        if any(path == o or path.startswith(o + os.sep) for o in self.outside):
            return None, "a file of another repository's checkout"
        mirror = next((m for m in self.mirrors if path.startswith(m + os.sep)), None)
        if mirror is not None and not os.path.lexists(path):
            path = os.path.join(self.root, os.path.relpath(path, mirror))
        if not os.path.lexists(path):
            return None, "a file the repository does not hold"
        return os.path.realpath(path), ""

    def shown(self, path: str) -> str:
        return os.path.relpath(path, self.root) if self.root else path

def _only(values: list[str] | None, otherwise: str) -> str:
    """A variable's value in a path: the one it is given, else the word as written (not worked out)."""
    return values[0] if values and len(values) == 1 else otherwise


def _values(word: str, variables: dict[str, list[str]]) -> list[str] | None:
    """What a command word held in variables may be (`$CMD` given "helm upgrade" and "helm template"):
    every value each variable is given; None when one is given none kubehop saw, or a value is itself
    not worked out."""
    found = [word]
    for match in _VARIABLE.finditer(word):
        values = variables.get(match.group(1) or match.group(2))
        if not values:
            return None
        found = [f.replace(match.group(0), v, 1) for f in found for v in values]
        if len(found) > _MAX_VALUES:
            return None
    if any("$" in f or "`" in f or _EXPR in f for f in found):
        return None
    return found


def _past_flags(program: str, words: list[str]) -> list[str]:
    values = _VALUE_FLAGS.get(program, ())
    index = 0
    while index < len(words) and words[index].startswith("-") and len(words[index]) > 1:
        index += 2 if words[index] in values else 1
    return words[index:]


def _shown_command(words: list[str]) -> str:
    text = " ".join(words)
    return text if len(text) <= 60 else text[:57] + "..."
