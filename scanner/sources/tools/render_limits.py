"""Bounds on one render by an outside tool (time, memory, output) and how many run at once.

A chart is input like any other: a `repeat` template can print gigabytes, a template that loops
can eat memory until the machine swaps. Each render runs with a time limit, a ceiling on its
address space (RLIMIT_AS) and on every file it writes (RLIMIT_FSIZE: its standard output and
error go to files, so the post-renderer's capture and both streams are all bounded while they
are written, never read whole first). The pool is sized to the cores and to the memory the
machine has free for renders at their ceiling.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scanner.sources.tools.tool_helper import ToolHelper

try:
    import resource
except ImportError:  # Windows
    resource = None

_GIB = 1 << 30
_MIB = 1 << 20


@dataclass(frozen=True)
class RenderLimits:
    seconds: float = 300
    # Address space, not resident memory: a Go binary such as helm reserves ~1.2 GiB of it at
    # start, so this leaves it ~1.8 GiB of heap (the largest chart of the 2019 corpus needs ~0.1).
    memory: int = 3 * _GIB
    output: int = 64 * _MIB  # per file: the rendered stream, standard output, standard error

    def describe_memory(self) -> str:
        return f"{self.memory / _GIB:g} GiB"

    def describe_output(self) -> str:
        return f"{self.output / _MIB:g} MiB"


def go_runtime(env: dict[str, str], limits: RenderLimits) -> dict[str, str]:
    """`env` for a Go tool (helm) run for one render: its garbage collector off, with a soft ceiling of a
    third of the render's address space at which it collects after all. A render is short and its heap
    small (the 2019 charts peak at ~50 MB resident either way), and collecting it took a fifth of helm's
    CPU. A GOGC or GOMEMLIMIT of the user's own is kept."""
    if "GOGC" in env or "GOMEMLIMIT" in env:
        return env
    return {**env, "GOGC": "off", "GOMEMLIMIT": f"{limits.memory // 3 // _MIB}MiB"}


@dataclass(frozen=True)
class Finished:
    returncode: int
    problem: str | None = None  # over a limit, or could not run; None when it ran within bounds
    stderr: str = ""  # the end of it


def run_bounded(command: list[str], env: dict[str, str], limits: RenderLimits, stdout: str, stderr: str,
                written: tuple[str, ...] = (), helper: "ToolHelper | None" = None) -> Finished:
    """Run `command` with its output in the files `stdout` and `stderr`; `written` names other files
    it writes whose size the output limit covers too. With `helper`, the helper process starts it
    (where it cannot reach the network: `sandbox.py`) and applies the same bounds."""
    try:
        if helper is None:
            returncode = _run_here(command, env, limits, stdout, stderr)
        else:
            returncode = helper.run_to_files(command, env, limits.seconds, stdout, stderr, limits.memory,
                                             limits.output)
    except subprocess.TimeoutExpired:
        return Finished(-1, f"did not finish within {limits.seconds:g} s")
    except OSError as error:
        return Finished(-1, f"cannot run {os.path.basename(command[0])}: {error}")
    tail = _tail(stderr)
    if any(_size(path) >= limits.output for path in (stdout, stderr, *written)):
        return Finished(returncode, f"printed more than {limits.describe_output()}, the most kubehop reads "
                                    "of one render", tail)
    if returncode != 0 and "out of memory" in tail:
        return Finished(returncode, f"needed more than {limits.describe_memory()} of memory, the most kubehop "
                                    "allows one render", tail)
    return Finished(returncode, None, tail)


def _run_here(command: list[str], env: dict[str, str], limits: RenderLimits, stdout: str, stderr: str) -> int:
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                   start_new_session=True)
    _limit(process.pid, limits)
    try:
        returncode = process.wait(timeout=limits.seconds)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise
    _kill(process)  # whatever it started and left behind
    return returncode


def _limit(pid: int, limits: RenderLimits) -> None:
    """Set the ceilings on the started process (inherited by what it starts: helm's post-renderer).
    Set from outside rather than in a preexec function, which is unsafe in a threaded program;
    the process has done nothing costly in the moment before. Linux only (prlimit): elsewhere the
    time limit and the output check after the render remain."""
    if not hasattr(resource, "prlimit"):
        return
    for which, value in ((resource.RLIMIT_AS, limits.memory), (resource.RLIMIT_FSIZE, limits.output)):
        try:
            resource.prlimit(pid, which, (value, value))
        except (OSError, ValueError):  # already gone, or a hard limit below ours: that one stays
            pass


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    process.wait()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _tail(path: str, size: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, _size(path) - size))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def pool_size(limits: RenderLimits) -> int:
    """Renders at once: two per core (a render waits on its post-renderer and discovery part of
    the time), no more than the free memory holds at each render's ceiling, at least one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    free = _free_memory()
    by_memory = free // limits.memory if free else 16
    return max(1, min(16, 2 * cores, by_memory))


def _free_memory() -> int:
    """Memory available to new processes: MemAvailable, lowered by a cgroup's limit (containers,
    CI runners). 0 when the platform does not say."""
    free = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as limit, \
                open("/sys/fs/cgroup/memory.current", encoding="ascii") as used:
            cap = limit.read().strip()
            if cap != "max":
                free = min(free, int(cap) - int(used.read().strip()))
    except (OSError, ValueError):
        pass
    return max(free, 0)
