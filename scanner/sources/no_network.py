"""Run a tool so that it cannot reach the network (kustomize without --allow-network).

kubehop finds remote references before a build (`kustomize_refs.py`); this is the last word for
anything that check does not know. Two layers:

- everywhere, the environment: every proxy variable points at a loopback port that is bound but
  never listens (connections are refused), and git's configuration forbids every transport;
- on Linux (x86-64, arm64), a seccomp filter: the tool may not open an IPv4 or IPv6 socket (nor
  io_uring, which could open one), loopback included, and neither may anything it starts (git, ssh).
  Installing it needs no privilege (no_new_privs).

The filter is installed once, in a small helper process kubehop starts for the scan's length (a
Python without site packages, talking JSON lines over its pipes), which starts each tool: they
inherit it. Installing it in each child instead would make Python fork the whole kubehop process
per build (no vfork with a `preexec_fn`: ~30 ms with the interpreter locked at 400 MB), and run
Python code between fork and exec in a threaded program. Go's HTTP client never proxies loopback
addresses, so the environment alone does not stop a request to 127.0.0.1; the filter does.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import platform
import select
import socket
import struct
import subprocess
import sys
import threading

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# (AUDIT_ARCH_*, socket syscall number) of the architectures the filter is written for.
_ARCHITECTURES = {"x86_64": (0xC000003E, 41), "amd64": (0xC000003E, 41),
                  "aarch64": (0xC00000B7, 198), "arm64": (0xC00000B7, 198)}
_IO_URING_SETUP = 425  # the same number on both
_AF_INET, _AF_INET6 = 2, 10
_X32_BIT = 0x40000000
_ALLOW, _DENY = 0x7FFF0000, 0x00050000 | 13  # SECCOMP_RET_ERRNO | EACCES
_GRACE_SECONDS = 30  # beyond a run's own timeout, before the helper is given up on

# The helper: installs the filter on itself (the program, in hex, is its argument), says whether a socket
# is now refused, then runs each request line in a thread and answers with a line.
_HELPER = r"""
import ctypes, json, socket, subprocess, sys, threading
class P(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
program = bytes.fromhex(sys.argv[1])
buffer = ctypes.create_string_buffer(program, len(program))
fprog = P(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
prctl = ctypes.CDLL(None, use_errno=True).prctl
prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
installed = prctl(38, 1, None, 0, 0) == 0 and prctl(22, 2, ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p), 0, 0) == 0
try:
    socket.socket().close()
    filtered = False
except OSError:
    filtered = installed
out, lock = sys.stdout.buffer, threading.Lock()
def reply(message):
    with lock:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()
reply({"filtered": filtered})
def serve(request):
    answer = {"id": request["id"]}
    try:
        done = subprocess.run(request["argv"], env=request["env"], capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=request["timeout"])
        answer.update(rc=done.returncode, out=done.stdout.decode("utf-8", "replace"),
                      err=done.stderr.decode("utf-8", "replace"))
    except subprocess.TimeoutExpired:
        answer["timeout"] = True
    except OSError as err:
        answer["error"] = str(err)
    reply(answer)
if filtered:
    for line in sys.stdin.buffer:
        threading.Thread(target=serve, args=(json.loads(line),), daemon=True).start()
"""


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
    """`argv` run without network: under the filter where it can be had, else with `environment` alone.
    Raises subprocess.TimeoutExpired and OSError as subprocess.run does."""
    helper = _helper()
    if helper is None:
        return subprocess.run(argv, env=environment(env), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    return helper.run(argv, environment(env), timeout)


def filtered() -> bool:
    return _helper() is not None


def isolation() -> str:
    if filtered():
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


class _Helper:
    """The filtered helper process and the requests waiting for its answers."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple[threading.Event, list]] = {}
        threading.Thread(target=self._read, name="kubehop-no-network", daemon=True).start()

    def run(self, argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        event, answer = threading.Event(), []
        with self._lock:
            number = next(self._ids)
            self._waiting[number] = (event, answer)
            try:
                self.process.stdin.write(json.dumps({"id": number, "argv": argv, "env": env,
                                                     "timeout": timeout}).encode() + b"\n")
                self.process.stdin.flush()
            except (OSError, ValueError) as err:
                self._waiting.pop(number, None)
                raise OSError(f"the no-network helper stopped: {err}") from None
        if not event.wait(timeout + _GRACE_SECONDS) or not answer:
            raise OSError("the no-network helper did not answer")
        reply = answer[0]
        if reply.get("timeout"):
            raise subprocess.TimeoutExpired(argv, timeout)
        if "error" in reply:
            raise OSError(reply["error"])
        return subprocess.CompletedProcess(argv, reply["rc"], reply["out"], reply["err"])

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                event, answer = self._waiting.pop(reply.get("id"), (None, None))
            if event is not None:
                answer.append(reply)
                event.set()
        with self._lock:  # the helper is gone: whoever still waits is told so
            for event, _ in self._waiting.values():
                event.set()
            self._waiting.clear()


_STARTED: list[_Helper | None] = []
_START_LOCK = threading.Lock()


def _helper() -> _Helper | None:
    """The helper, started on first use (and again should it have died); None where no filter can be had."""
    with _START_LOCK:
        if _STARTED and (_STARTED[0] is None or _STARTED[0].process.poll() is None):
            return _STARTED[0]
        _STARTED[:] = [_start()]
        return _STARTED[0]


def _start() -> _Helper | None:
    program = _program()
    if program is None:
        return None
    try:
        process = subprocess.Popen([sys.executable, "-S", "-E", "-c", _HELPER, program.hex()], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        ready, _, _ = select.select([process.stdout], [], [], _GRACE_SECONDS)
        hello = json.loads(process.stdout.readline() or "{}") if ready else {}
    except (OSError, ValueError):
        return None
    if not hello.get("filtered"):
        process.kill()
        process.wait()
        return None
    return _Helper(process)
