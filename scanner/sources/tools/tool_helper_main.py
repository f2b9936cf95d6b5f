"""The program of the helper process that starts kubehop's tools where they cannot reach the network.

kubehop never imports this module: `tool_helper.py` runs it in an interpreter of its own
(`python -I -S tool_helper_main.py MODE ...`: isolated, so no module of the working directory, which
may be the scanned tree, can stand in for one of the standard library). While it is still one thread,
the helper isolates itself once; every tool it starts inherits that. MODE is one of:

- `seccomp PROGRAM_HEX`: installs the seccomp filter no_network.py wrote (no IPv4/IPv6 socket);
- `namespace FD`: enters a network namespace of its own holding only a loopback interface (a user
  namespace too when not root, so no privilege is needed), brings it up, and checks that loopback
  answers and nothing else can be reached. On the unix socket FD, each byte sent asks for a TCP socket
  listening on 127.0.0.1 *inside* the namespace; it is handed back (SCM_RIGHTS), so kubehop can serve
  helm's discovery from its own threads to tools that can reach nothing else.

It prints one JSON line, `{"isolation": MODE}` once the isolation holds or `{"isolation": null, "why":
...}`, then runs each request line (`id`, `argv`, `env`, `cwd`, `timeout`; with `stdout` and `stderr`
paths, `memory` and `output`: a bounded render, its streams to those files, its address space and file
sizes limited) in a thread of its own, in a session of its own, and answers with one line (`rc`, with
`out` and `err` unless bounded; or `timeout`; or `error`). Whatever a tool left running is killed with
its process group. When kubehop goes away (standard input closes) every tool still running is killed.
"""

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading

_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_UNREACHABLE = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737): no route to it in a namespace of loopback only

_out = sys.stdout.buffer
_lock = threading.Lock()
_running: set = set()


def reply(message):
    with _lock:
        _out.write(json.dumps(message).encode() + b"\n")
        _out.flush()


def install_filter(program_hex):
    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = bytes.fromhex(program_hex)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if prctl(38, 1, None, 0, 0) != 0 or prctl(22, 2, ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p), 0, 0) != 0:
        return "the seccomp filter could not be installed: " + os.strerror(ctypes.get_errno())
    try:
        socket.socket().close()
    except OSError:
        return None
    return "a socket could still be opened under the seccomp filter"


def enter_namespace():
    """None once this process is in a network namespace of loopback only, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    before = os.readlink("/proc/self/ns/net")
    uid, gid = os.getuid(), os.getgid()
    # As root the network namespace alone will do (no user namespace: file access stays as it is);
    # otherwise, or where root may not (a container), a user namespace mapping only the user to itself.
    tries = ([_CLONE_NEWNET] if uid == 0 else []) + [_CLONE_NEWUSER | _CLONE_NEWNET]
    for flags in tries:
        if libc.unshare(flags) == 0:
            break
        failure = os.strerror(ctypes.get_errno())
    else:
        return f"unshare: {failure}"
    if flags & _CLONE_NEWUSER:
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as handle:
                    handle.write(text)
        except OSError as err:
            return f"the user namespace's identity map: {err.strerror}"
    if os.readlink("/proc/self/ns/net") == before:
        return "the network namespace did not change"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
            request = struct.pack("16sH22x", b"lo", 0)
            flags_now = struct.unpack("16sH22x", fcntl.ioctl(control, _SIOCGIFFLAGS, request))[1]
            fcntl.ioctl(control, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags_now | _IFF_UP))
    except OSError as err:
        return f"the loopback interface could not be brought up: {err.strerror}"
    return _check_isolated()


def _check_isolated():
    try:
        with socket.socket() as server, socket.socket() as client:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            client.settimeout(5)
            client.connect(server.getsockname())
    except OSError as err:
        return f"loopback does not answer in the namespace: {err.strerror or err}"
    with socket.socket() as probe:
        probe.setblocking(False)
        code = probe.connect_ex(_UNREACHABLE)
    if code in (0, errno.EINPROGRESS):
        return "an address outside loopback can still be reached in the namespace"
    return None


def hand_out_listeners(channel):
    """For each byte kubehop sends, a TCP socket listening on 127.0.0.1 in this namespace."""
    while True:
        try:
            if not channel.recv(1):
                return
        except OSError:
            return
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
                listener.bind(("127.0.0.1", 0))
                listener.listen(256)
                socket.send_fds(channel, [b"+"], [listener.fileno()])
        except OSError as err:
            with contextlib.suppress(OSError):
                channel.sendall(b"-" + str(err).encode()[:200])


def serve(request):
    answer = {"id": request.get("id")}
    try:
        answer.update(run(request))
    except subprocess.TimeoutExpired:
        answer["timeout"] = True
    except (OSError, ValueError, TypeError, KeyError) as err:
        answer["error"] = str(err)
    reply(answer)


def run(request):
    bounded = "stdout" in request
    with contextlib.ExitStack() as files:
        if bounded:
            out = files.enter_context(open(request["stdout"], "wb"))
            err = files.enter_context(open(request["stderr"], "wb"))
        else:
            out, err = files.enter_context(tempfile.TemporaryFile()), files.enter_context(tempfile.TemporaryFile())
        process = subprocess.Popen(request["argv"], env=request["env"], cwd=request.get("cwd"), stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=err, start_new_session=True)
        with _lock:
            _running.add(process.pid)
        try:
            if bounded:
                limit(process.pid, request["memory"], request["output"])
            wait(process, request["timeout"])
        finally:
            with _lock:
                _running.discard(process.pid)
        if bounded:
            return {"rc": process.returncode}
        return {"rc": process.returncode, "out": _read(out), "err": _read(err)}


def limit(pid, memory, output):
    """The ceilings of a render, set from outside (a preexec function is no place for them)."""
    import resource

    for which, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_FSIZE, output)):
        with contextlib.suppress(OSError, ValueError):  # already gone, or a hard limit below ours
            resource.prlimit(pid, which, (value, value))


def wait(process, timeout):
    """Wait for the tool, then kill its process group (what it left behind) while its pid is still
    held, so the group cannot be another's; raises TimeoutExpired once it is killed for its time."""
    finished = True
    try:
        handle = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # before Linux 5.3
        handle = None
    if handle is None:
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            finished = False
    else:
        try:
            poller = select.poll()
            poller.register(handle, select.POLLIN)
            finished = bool(poller.poll(timeout * 1000))
        finally:
            os.close(handle)
    _kill_group(process.pid)
    process.wait()
    if not finished:
        raise subprocess.TimeoutExpired(process.args, timeout)


def _kill_group(pid):
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _read(handle):
    handle.seek(0)
    return handle.read().decode("utf-8", "replace")


def main():
    mode = sys.argv[1]
    if mode == "seccomp":
        why = install_filter(sys.argv[2])
    elif mode == "namespace":
        why = enter_namespace()
    else:
        why = f"unknown mode {mode!r}"
    reply({"isolation": None if why else mode, "why": why})
    if why:
        return
    if mode == "namespace":
        channel = socket.socket(fileno=int(sys.argv[2]))
        threading.Thread(target=hand_out_listeners, args=(channel,), daemon=True).start()
    for line in sys.stdin.buffer:
        threading.Thread(target=serve, args=(json.loads(line),), daemon=True).start()
    with _lock:  # kubehop is gone: so is every tool it started
        for pid in list(_running):
            _kill_group(pid)


if __name__ == "__main__":
    main()
