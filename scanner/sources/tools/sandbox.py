"""A network namespace of loopback only, where kubehop runs its tools without --allow-network.

Why: kubehop checks what it knows of before helm and kustomize run (remote kustomize references,
remote charts, values.schema.json references: `kustomize/refs.py`, `helm/chart_schemas.py`), but a tool
can reach the network through a path nobody listed. Kustomize can be kept from every socket by a
seccomp filter (`no_network.py`); helm cannot: it must reach kubehop's discovery server on loopback
(`helm/discovery.py`), which answers for the target minor so that `.Capabilities` are exact. And closed
proxies do not stop Go from reaching loopback, where the runner's own services may listen.

So the tools run in a network namespace of their own: a helper process (`tool_helper_main.py`) enters
it once (unprivileged: a user namespace mapping the user to itself; as root, the network namespace
alone), brings its loopback interface up and checks that nothing else can be reached; each tool it
starts (helm, its post-renderer, kustomize, git) lives there, with no route, no DNS and none of the
host's loopback services. The one thing there is kubehop's discovery: the helper creates a listening
socket on 127.0.0.1 inside the namespace and hands its file descriptor to kubehop, which serves on it
from its own threads (a socket belongs to the namespace it was created in).

Where no namespace can be had (not Linux; a kernel or an AppArmor policy that forbids unprivileged
user namespaces, as Ubuntu 24.04 may; a container that forbids unshare), `namespace()` is None and the
callers fall back: helm with closed proxies only, kustomize under the seccomp filter. `isolation()`
says which, for reports. With --allow-network nothing here is used.
"""

from __future__ import annotations

import sys
import threading

from scanner.sources.tools import tool_helper
from scanner.sources.tools.tool_helper import ToolHelper

# An internal switch: False makes `namespace()` None, as on a machine without namespaces (tests).
ENABLED = True

_started: list[tuple[ToolHelper | None, str]] = []
_start_lock = threading.Lock()


def namespace() -> ToolHelper | None:
    """The helper in its network namespace, started on first use (and again should it have died);
    None where no namespace can be had."""
    if not ENABLED or not sys.platform.startswith("linux"):
        return None
    with _start_lock:
        if not _started or (_started[0][0] is not None and not _started[0][0].alive):
            _started[:] = [tool_helper.start("namespace")]
        return _started[0][0]


def why_not() -> str:
    """Why no namespace could be had (empty when one is in use)."""
    if not ENABLED:
        return "switched off"
    if not sys.platform.startswith("linux"):
        return f"no network namespaces on {sys.platform}"
    return "" if namespace() is not None else _started[0][1]


def isolation() -> str:
    """How helm is kept from the network without --allow-network, as reports say it."""
    if namespace() is not None:
        return "network namespace (loopback only: kubehop's discovery) and closed proxies"
    return f"closed proxies only (no network namespace here: {why_not()})"
