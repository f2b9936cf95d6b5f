"""Writing a fixed file: into a temporary file beside it, flushed to the disk, then renamed over it;
never through a second hard link (its other name may be outside the tree, and would change too).

A run stopped by SIGTERM, SIGINT or SIGHUP while a file is being written removes the temporary
file, then dies of the same signal: the tree holds each file either as it was or as fixed, and
nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from typing import Iterator

_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


class NotWritten(Exception):
    """The file was left as it is; the message says why (a notice, not an error)."""


class Stopped(BaseException):
    """A stop signal arrived while a file was being written (raised from its handler)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def write_fixed(path: str, text: str) -> None:
    """Replace `path` with `text` (which holds the file's byte-order mark, if it has one), keeping its
    permissions. OSError when it cannot be; Stopped when a stop signal came in the meantime."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten("not a regular file: not rewritten")
    if info.st_nlink > 1:
        raise NotWritten(f"has {info.st_nlink} hard links: not rewritten (its other names would change too); "
                         "apply the diff by hand")
    folder, mode = os.path.dirname(path) or ".", stat.S_IMODE(info.st_mode)
    with _stop_signals_raise():
        _hold_stop_signals(True)  # until the temporary file's name is known, so that it can be removed
        try:
            descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                                     suffix=".kubehop")
        except BaseException:
            _hold_stop_signals(False)
            raise
        try:
            _hold_stop_signals(False)  # a signal held meanwhile is raised here
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())  # the data is on the disk before the name points at it
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable, where the platform lets a folder be opened and synced."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - Windows cannot open a folder
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - some file systems refuse to sync a folder
        pass
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _stop_signals_raise() -> Iterator[None]:
    """While a temporary file may exist, the first stop signal raises Stopped (so that the file is
    removed) instead of killing the process on the spot; one more while that happens is ignored.
    Outside the main thread signals cannot be caught: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def stop(signum, _frame):
        if not arrived:
            arrived.append(signum)
            raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in _STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}  # nohup's SIGHUP stays ignored
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _hold_stop_signals(hold: bool) -> None:
    if hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK if hold else signal.SIG_UNBLOCK, _STOP_SIGNALS)


def die_of(signum: int) -> None:
    """End the process as the signal would have: the caller sees a kill by it (or 128 + signum
    where the platform cannot raise it again)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # pragma: no cover - the signal ended the process
