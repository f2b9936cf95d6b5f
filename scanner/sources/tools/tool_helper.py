"""kubehop's side of a helper process that starts tools where they cannot reach the network.

The helper (`tool_helper_main.py`) isolates itself once, when it starts, and every tool it starts
inherits that: installing the isolation in each child instead would make Python fork the whole kubehop
process per run (no vfork with a `preexec_fn`: ~30 ms with the interpreter locked at 400 MB) and run
Python code between fork and exec in a threaded program, and a threaded program cannot enter a user
namespace at all. Requests and answers are JSON lines over its pipes; a helper in a network namespace
also hands out, over a unix socket, listening sockets of its namespace (`listener`).
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import subprocess
import sys
import threading

_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_helper_main.py")
_GRACE_SECONDS = 30  # beyond a run's own timeout, before the helper is given up on


class ToolHelper:
    """One started helper and the requests waiting for its answers."""

    def __init__(self, process: subprocess.Popen, channel: socket.socket | None):
        self.process = process
        self._channel = channel
        self._channel_lock = threading.Lock()
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple[threading.Event, list]] = {}
        threading.Thread(target=self._read, name="kubehop-tool-helper", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        """As `subprocess.run(argv, capture_output=True, text=True, timeout=timeout)`, in the helper."""
        reply = self._ask({"argv": argv, "env": env, "timeout": timeout}, argv, timeout)
        return subprocess.CompletedProcess(argv, reply["rc"], reply["out"], reply["err"])

    def run_to_files(self, argv: list[str], env: dict[str, str], timeout: float, stdout: str, stderr: str,
                     memory: int, output: int) -> int:
        """`argv`'s return code, its streams written to the files `stdout` and `stderr`, its address space
        and every file it writes limited (RLIMIT_AS, RLIMIT_FSIZE), its process group killed at its end."""
        reply = self._ask({"argv": argv, "env": env, "timeout": timeout, "stdout": stdout, "stderr": stderr,
                           "memory": memory, "output": output}, argv, timeout)
        return reply["rc"]

    def listener(self) -> socket.socket:
        """A TCP socket listening on 127.0.0.1 where the helper's tools run (its network namespace)."""
        if self._channel is None:
            raise OSError("this helper hands out no sockets")
        with self._channel_lock:
            self._channel.sendall(b"L")
            message, fds, _, _ = socket.recv_fds(self._channel, 256, 1)
        if not fds:
            raise OSError(f"the helper could not listen: {message[1:].decode('utf-8', 'replace') or 'it stopped'}")
        return socket.socket(fileno=fds[0])

    def _ask(self, request: dict, argv: list[str], timeout: float) -> dict:
        event, answer = threading.Event(), []
        with self._lock:
            number = next(self._ids)
            self._waiting[number] = (event, answer)
            try:
                self.process.stdin.write(json.dumps({"id": number, "cwd": os.getcwd(), **request}).encode() + b"\n")
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
        return reply

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


def start(mode: str, *arguments: str) -> tuple[ToolHelper | None, str]:
    """A helper isolated as `mode` says ("seccomp" with the filter program in hex, or "namespace"), and
    the isolation it holds; or None and why it could not be had."""
    ours = theirs = None
    if mode == "namespace":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        arguments = (str(theirs.fileno()),)
    try:
        process = subprocess.Popen([sys.executable, "-I", "-S", _PROGRAM, mode, *arguments], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                                   pass_fds=(theirs.fileno(),) if theirs else ())
    except OSError as err:
        return None, f"the helper could not start: {err}"
    finally:
        if theirs is not None:
            theirs.close()
    try:
        ready, _, _ = select.select([process.stdout], [], [], _GRACE_SECONDS)
        hello = json.loads(process.stdout.readline() or "{}") if ready else {}
    except (OSError, ValueError):
        hello = {}
    if hello.get("isolation") != mode:
        process.kill()
        process.wait()
        if ours is not None:
            ours.close()
        return None, str(hello.get("why") or "the helper did not start")
    if ours is not None:
        ours.settimeout(_GRACE_SECONDS)  # a helper that stops answering is given up on, as for a run
    return ToolHelper(process, ours), mode
