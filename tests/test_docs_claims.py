"""What the README and the docs state as figures kubehop itself knows, checked against it: the default
target, and the exit codes `--help` lists (issue 26: the README said 1.36 while the default was 1.37;
`--help` left out exit code 4)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO, cli_runner
from scanner.cli import cli
from scanner.rulebook import load_rulebook


def test_the_default_target_the_docs_name_is_the_datas():
    newest = str(load_rulebook().newest)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(r"`--target` defaults to the newest minor the data knows: (\d+\.\d+) in this release",
                     readme).group(1) == newest
    hook = (REPO / "docs" / "pre-commit.md").read_text(encoding="utf-8")
    assert re.search(r"the newest minor kubehop knows \((\d+\.\d+) today\)", hook).group(1) == newest


@pytest.mark.parametrize("command", ["scan", "plan", "fix"])
def test_help_lists_every_exit_code(command):
    text = " ".join(cli_runner().invoke(cli, [command, "--help"]).stdout.split())
    assert all(f"{code} " in text.partition("Exit codes:")[2] for code in range(5)), text
