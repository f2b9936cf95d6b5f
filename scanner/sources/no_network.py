"""Run a tool so that it cannot reach the network (kustomize without --allow-network).

kubehop finds remote references before a build (`kustomize_refs.py`); this is the last word for
anything that check does not know. Two layers:

- everywhere, the environment: every proxy variable points at a loopback port that is bound but
  never listens (connections are refused), and git's configuration forbids every transport;
- on Linux (x86-64, arm64), a seccomp filter installed in the child before it runs the tool: it may
  not open an IPv4 or IPv6 socket (nor io_uring, which could open one), loopback included, and
  neither may anything it starts (git, ssh). Installing it needs no privilege (no_new_privs).

Go's HTTP client never proxies loopback addresses, so the environment alone does not stop a request
to 127.0.0.1; the filter does. `isolation()` says which layers are in force here.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import socket
import struct
import subprocess
import sys
from typing import Callable

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# (AUDIT_ARCH_*, socket syscall number) of the architectures the filter is written for.
_ARCHITECTURES = {"x86_64": (0xC000003E, 41), "amd64": (0xC000003E, 41),
                  "aarch64": (0xC00000B7, 198), "arm64": (0xC00000B7, 198)}
_IO_URING_SETUP = 425  # the same number on both
_AF_INET, _AF_INET6 = 2, 10
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
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


def preexec() -> Callable[[], None] | None:
    """A `preexec_fn` installing the socket filter, or None where it cannot be installed."""
    return _installer() if _filter_works() else None


def isolation() -> str:
    if _filter_works():
        return "seccomp filter (no IPv4/IPv6 sockets) and closed proxies"
    return "closed proxies and git transports only (no seccomp here)"


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


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _installer() -> Callable[[], None] | None:
    program = _program()
    if program is None:
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    address = ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p)
    _KEEP.extend([buffer, fprog, address])  # alive for every child to come

    def install() -> None:  # runs in the child between fork and exec: nothing that could take a lock
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0 or \
                prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, address, 0, 0) != 0:
            os._exit(125)

    return install


_KEEP: list = []


@functools.cache
def _filter_works() -> bool:
    """Can the filter be installed here, and does it stop a socket? Tried once, in a child."""
    install = _installer()
    if install is None:
        return False
    probe = "import socket\ntry:\n socket.socket()\nexcept PermissionError:\n raise SystemExit(0)\nraise SystemExit(1)"
    try:
        done = subprocess.run([sys.executable, "-S", "-E", "-c", probe], preexec_fn=install, timeout=30,
                              capture_output=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
