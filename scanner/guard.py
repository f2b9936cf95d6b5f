"""The last line of defence against kubehop's own bugs.

Bad input is each reader's business: it gives a clear input problem. Should a reader or a check
still raise something unexpected, the file (or object) it was on becomes an input problem that
asks for a report, and the scan goes on with the rest; an exception outside any one input is an
internal error (exit code 4). KUBEHOP_DEBUG=1 lets the exception through, with its traceback.
"""

from __future__ import annotations

import os

from scanner.model import Diagnostic

PLEASE_REPORT = "please report it"  # every message of this module says so: the fuzzer looks for it


def debugging() -> bool:
    return os.environ.get("KUBEHOP_DEBUG", "") not in ("", "0")


def unexpected(path: str, err: BaseException, line: int | None = None, what: str = "read this") -> Diagnostic:
    """The input problem for a file (or an object at `line`) that met a bug in kubehop."""
    if debugging():
        raise err
    return Diagnostic(path, f"kubehop could not {what}; {PLEASE_REPORT} ({describe(err)})", line)


def describe(err: BaseException) -> str:
    """The exception's type and the start of its message, on one line."""
    message = " ".join(str(err).split())
    if len(message) > 120:
        message = message[:117] + "..."
    return f"{type(err).__name__}: {message}" if message else type(err).__name__
