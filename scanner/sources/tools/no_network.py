"""Run a tool so that it cannot reach the network (kustomize and helm without --allow-network).

kubehop finds remote references before a build or a render (`kustomize/refs.py`, `helm/chart_schemas.py`);
this is the last word for anything those checks do not know. Layers:

- everywhere, the environment: every proxy variable points at a loopback port that is bound but
  never listens (connections are refused), and git's configuration forbids every transport;
- kustomize (and the git it starts), on Linux x86-64 and arm64: a seccomp filter, so that it may not
  open an IPv4 or IPv6 socket (nor io_uring, which could open one), loopback included. Installing it
  needs no privilege (no_new_privs). Where it cannot be had, the network namespace below;
- helm, which must reach kubehop's discovery on loopback and so cannot live under that filter: a
  network namespace holding only loopback (`sandbox.py`), where Linux lets one be made.

Both are installed once, in a helper process that starts each tool (`tool_helper.py`). Go's HTTP
client never proxies loopback addresses, so the environment alone does not stop a request to
127.0.0.1: the filter or the namespace does.
"""

from __future__ import annotations

import functools
import os
import platform
import socket
import struct
import subprocess
import sys
import threading

from scanner.sources.tools import sandbox, tool_helper
from scanner.sources.tools.tool_helper import ToolHelper

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# (AUDIT_ARCH_*, socket syscall number) of the architectures the filter is written for.
_ARCHITECTURES = {"x86_64": (0xC000003E, 41), "amd64": (0xC000003E, 41),
                  "aarch64": (0xC00000B7, 198), "arm64": (0xC00000B7, 198)}
_IO_URING_SETUP = 425  # the same number on both
_AF_INET, _AF_INET6 = 2, 10
_X32_BIT = 0x40000000
_ALLOW, _DENY = 0x7FFF0000, 0x00050000 | 13  # SECCOMP_RET_ERRNO | EACCES

def environment(base: dict[str, str]) -> dict[str, str]:
    """`base` with every way to reach a proxy or a git remote closed."""
    env = {k: v for k, v in base.items() if k not in _NO_PROXY_VARIABLES and not k.startswith("GIT_CONFIG")}
    closed = f"http://127.0.0.1:{_closed_port()}"
    env.update({name: closed for name in _PROXY_VARIABLES})
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.allow", "GIT_CONFIG_VALUE_0": "never",
                "GIT_SSH_COMMAND": "false"})
    return env


@functools.cache
def _closed_port() -> int:
    """A loopback port nobody can listen on while kubehop runs: bound, never listening."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    _HELD.append(held)
    return held.getsockname()[1]


_HELD: list[socket.socket] = []


def run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """`argv` run without network: under the filter where it can be had, else in the network namespace,
    else with `environment` alone. Raises subprocess.TimeoutExpired and OSError as subprocess.run does."""
    helper = _helper()
    if helper is None:
        return subprocess.run(argv, env=environment(env), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    return helper.run(argv, environment(env), timeout)


def filtered() -> bool:
    """Does kustomize run under the seccomp filter (no IPv4/IPv6 socket at all)?"""
    return _filter_helper() is not None


def isolation() -> str:
    """How kustomize is kept from the network without --allow-network, as reports say it."""
    if filtered():
        return "seccomp filter (no IPv4/IPv6 sockets) and closed proxies"
    if sandbox.namespace() is not None:
        return "network namespace (loopback only) and closed proxies"
    return f"closed proxies and git transports only (no seccomp filter here; {sandbox.isolation()})"


def _helper() -> ToolHelper | None:
    return _filter_helper() or sandbox.namespace()


_started: list[ToolHelper | None] = []
_start_lock = threading.Lock()


def _filter_helper() -> ToolHelper | None:
    """The helper under the filter, started on first use (and again should it have died); None where
    no filter can be had."""
    with _start_lock:
        if not _started or (_started[0] is not None and not _started[0].alive):
            program = _program()
            _started[:] = [tool_helper.start("seccomp", program.hex())[0] if program else None]
        return _started[0]


def _program() -> bytes | None:
    machine = _ARCHITECTURES.get(platform.machine().lower())
    if machine is None or sys.byteorder != "little" or not sys.platform.startswith("linux"):
        return None
    arch, socket_nr = machine

    def op(code: int, jump_true: int, jump_false: int, k: int) -> bytes:
        return struct.pack("HBBI", code, jump_true, jump_false, k)

    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    return b"".join([
        op(load, 0, 0, 4),                   # 0: seccomp_data.arch
        op(jeq, 1, 0, arch),                 # 1: native -> 3
        op(ret, 0, 0, _DENY),                # 2: a foreign ABI: nothing at all
        op(load, 0, 0, 0),                   # 3: seccomp_data.nr
        op(jge, 6, 0, _X32_BIT),             # 4: the x32 ABI -> deny
        op(jeq, 5, 0, _IO_URING_SETUP),      # 5: io_uring -> deny
        op(jeq, 0, 3, socket_nr),            # 6: socket() -> 7, anything else -> allow
        op(load, 0, 0, 16),                  # 7: its domain (args[0], low half)
        op(jeq, 2, 0, _AF_INET),             # 8: -> deny
        op(jeq, 1, 0, _AF_INET6),            # 9: -> deny
        op(ret, 0, 0, _ALLOW),               # 10
        op(ret, 0, 0, _DENY),                # 11
    ])


