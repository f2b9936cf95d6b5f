"""The remediation commands are commands the real kubectl accepts, and shell that bash parses.

kubectl is found through KUBEHOP_KUBECTL or PATH. It is pointed at a closed local port: a command
whose flags and arguments parse gets as far as connecting, one that does not stops at a usage error.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess

import pytest

from tests.conftest import run_kubehop

SCAN = ("scan", "--target", "1.36", "--format", "json", "--cluster-state", "tests/fixtures/homelab/cluster",
        "tests/fixtures/homelab/tree")


def _kubectl() -> str:
    found = os.environ.get("KUBEHOP_KUBECTL") or shutil.which("kubectl")
    if not found:
        pytest.skip("kubectl not found: set KUBEHOP_KUBECTL or put kubectl on PATH")
    return found


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def commands() -> list[str]:
    report = json.loads(run_kubehop(*SCAN).stdout)
    lines = [line.strip() for f in report["findings"] for line in f["remediation"]]
    found = [line for line in lines if line.startswith("kubectl ")]
    assert len(found) >= 10
    return found


def test_every_command_is_valid_shell(commands):
    for command in commands:
        assert subprocess.run(["bash", "-n", "-c", command]).returncode == 0, command


def _invocations(command: str):
    """The kubectl argument lists in a command line, loop and xargs placeholders filled in."""
    for stage in command.split(" | "):
        stage = re.sub(r"^while read -r (ns )?name; do ", "", stage.strip()).removesuffix("; done")
        stage = stage.replace('"$ns"', "default").replace('"$name"', "x")
        if stage.startswith("kubectl "):
            yield shlex.split(stage)[1:]


def test_loops_hand_kubectl_the_names_and_an_empty_patch():
    """Run a cluster-wide rewrite with kubectl stubbed: each object is patched with '{}' itself
    (xargs -I{} would have replaced the patch's {} with the name)."""
    from scanner.crds import Crd
    from scanner.kubectl import rewrite_all

    for namespaced, listing, expected in [(False, "widgets.ex.io/a", "patch widgets.ex.io/a --type=merge -p {}"),
                                          (True, "ns1 a", "-n ns1 patch widgets.ex.io a --type=merge -p {}")]:
        crd = Crd("widgets.ex.io", "ex.io", "Widget", namespaced, (), None, "None")
        stub = f'kubectl() {{ if [ "$1" = get ]; then echo "{listing}"; else printf "%s\\n" "$*"; fi; }}; '
        done = subprocess.run(["bash", "-c", stub + rewrite_all(crd)], capture_output=True, text=True)
        assert done.stdout.strip() == expected, done.stderr


def test_every_kubectl_invocation_parses(commands):
    kubectl, server = _kubectl(), f"--server=http://127.0.0.1:{_closed_port()}"
    invocations = [args for command in commands for args in _invocations(command)]
    assert len(invocations) > len(commands)  # the pipelines' stages are in
    for args in invocations:
        proc = subprocess.run([kubectl, server, "--request-timeout=2s", *args], capture_output=True, text=True,
                              timeout=60)
        assert "refused" in proc.stderr, f"{args}\n{proc.stderr[-400:]}"


def test_names_from_the_tree_stay_one_argument_each():
    """A name is the tree's (or a cluster dump's), and a person pastes the command into a shell:
    `x; touch pwned` or a quote in it must stay one argument, and run nothing."""
    from scanner.crds import Crd
    from scanner.kubectl import clear_managed_fields, delete_all, rewrite, set_stored_versions
    from scanner.model import Manifest, Origin

    hostile = "x'; touch pwned; echo '$(touch pwned)`touch pwned`"
    crd = Crd(f"widgets.ex.io{hostile}", "ex.io", "Widget", True, (), None, "None")
    obj = Manifest("ex.io/v1", "Widget", hostile, hostile, Origin("w.yaml", 1, 1))
    commands = [rewrite(crd, obj), clear_managed_fields(crd, obj), set_stored_versions(crd, [hostile]),
                *delete_all(crd, [hostile])]
    for command in commands:
        args = shlex.split(command)
        assert hostile in args or f"widgets.ex.io{hostile}" in args, command
        stub = 'kubectl() { printf "%s\\n" "$@"; }; '
        done = subprocess.run(["bash", "-c", stub + command], capture_output=True, text=True, cwd="/tmp")
        assert done.stdout.split("\n")[:-1] == args[1:], command
    assert rewrite(Crd("widgets.ex.io", "ex.io", "Widget", True, (), None, "None"),
                   Manifest("ex.io/v1", "Widget", "web", "shop", Origin("w.yaml", 1, 1))) == \
        "kubectl -n shop patch widgets.ex.io web --type=merge -p '{}'"
