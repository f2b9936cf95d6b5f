"""What tells whether a CI job that pins a client reaches a cluster, read once from the `ci_jobs` part of
rules/client-tools.yaml (validated by schema): what a step that uses an action does to its job, and
what a program's command does (`kubectl apply` talks to a cluster, `helm template` does not). The
job is read by sources/cluster/ci_jobs.py; this only answers for one action or one command.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from scanner import data

# What a step or a command does to its job (rules/client-tools.yaml, ci_jobs).
CREDENTIALS = "credentials"  # the job gets a kubeconfig or a path to a cluster
CLUSTER = "cluster"  # it talks to the cluster the job's kubeconfig names
OWN_CLUSTER = "own-cluster"  # it creates a throwaway cluster for the job (kind)
OFFLINE = "offline"  # it runs no client against a cluster
UNDECIDED = "undecided"  # it runs what kubehop does not read


@dataclass(frozen=True)
class Command:
    program: str
    words: tuple[str, ...]  # () is any command of the program
    does: str
    unless_flags: tuple[str, ...]
    unless_does: str | None
    source: str


@dataclass(frozen=True)
class CiRules:
    actions: dict[str, tuple[str, str]]  # lower-cased owner/name -> (does, source)
    commands: dict[str, tuple[Command, ...]]  # by program
    clients: frozenset[str]  # the pinned tools: a command of theirs not listed is undecided
    kubeconfig_words: tuple[str, ...]  # lower-cased
    script_runners: frozenset[str]

    def action(self, name: str) -> tuple[str, str] | None:
        """What a step that uses `name` (owner/repo[/path], without @ref) does, and the source; None if unlisted."""
        return self.actions.get(name.lower())

    def names_kubeconfig(self, text: str) -> bool:
        lowered = text.lower()
        return any(word in lowered for word in self.kubeconfig_words)

    def command(self, program: str, args: Sequence[str]) -> tuple[str, str, bool] | None:
        """What `program args...` does, how a person names it ("helm template") and whether the data
        lists the command (a client's command it does not list is undecided); None when the data says
        nothing of it (a program that runs none of the clients)."""
        entries = self.commands.get(program)
        if not entries:
            return None
        words = _command_words(args, {e.words[0] for e in entries if e.words})
        best = max((e for e in entries if tuple(words[:len(e.words)]) == e.words), key=lambda e: len(e.words),
                   default=None)
        if best is None:
            if not words and program in self.clients:
                return OFFLINE, program, False  # no command: it prints its help
            return (UNDECIDED, f"{program} {words[0]}", False) if program in self.clients else None
        turned = next((flag for flag in best.unless_flags if _given(flag, args)), None)
        shown = " ".join((program, *best.words, *((turned,) if turned else ())))
        return (best.unless_does if turned and best.unless_does else best.does), shown, True


def _command_words(args: Sequence[str], firsts: set[str]) -> list[str]:
    """The words that name the command: flags left out, and before the first known word, a word that may
    be the value of the flag before it (`kubectl -n flux-system wait ...`)."""
    words: list[str] = []
    value_may_follow = False
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and len(arg) > 1:
            value_may_follow = "=" not in arg
            continue
        if not words and arg not in firsts and value_may_follow:
            value_may_follow = False
            continue
        words.append(arg)
        value_may_follow = False
        if words[0] not in firsts:
            break  # an unknown command: the words after it say nothing more
    return words


def _given(flag: str, args: Sequence[str]) -> bool:
    return any(arg == flag or arg.startswith(flag + "=") for arg in args)


@functools.cache
def ci_rules() -> CiRules:
    document = data.load("rules/client-tools.yaml")
    section = document["ci_jobs"]
    actions = {e["action"].lower(): (e["does"], e["source"]) for e in section["actions"]}
    for tool in document["tools"]:  # a tool's own installer runs it against nothing
        for action in tool["actions"]:
            actions.setdefault(action.lower(), (OFFLINE, f"https://github.com/{action}"))
    commands: dict[str, list[Command]] = {}
    for entry in section["commands"]:
        unless = entry.get("unless") or {}
        for text in entry["commands"]:
            commands.setdefault(entry["program"], []).append(Command(
                entry["program"], tuple(text.split()), entry["does"], tuple(unless.get("flags", ())),
                unless.get("does"), entry["source"]))
    return CiRules(actions=actions, commands={k: tuple(v) for k, v in commands.items()},
                   clients=frozenset(t["name"] for t in document["tools"]),
                   kubeconfig_words=tuple(w.lower() for w in section["kubeconfig_words"]["words"]),
                   script_runners=frozenset(section["script_runners"]))
