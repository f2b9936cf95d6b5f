"""How each helm hands kubehop what it rendered, with the Capabilities of the target minor.

Both helm 3 (3.13 and later) and helm 4 render against kubehop's loopback discovery
(`discovery.py`) and call a post-renderer with the rendered stream: a plugin in helm 4, an
executable in helm 3. kubehop's post-renderer keeps the stream and hands helm back a comment only,
so helm has nothing left to map and install: its server dry-run never trips over an API the target
no longer serves (the objects kubehop must report), and never asks discovery again for it.

- helm 4 (`template --dry-run=server`) passes every object through its post-renderer, hooks too,
  each named by the `postrenderer.helm.sh/postrender-filename` annotation.
- helm 3 needs `--validate` to ask the server for its Capabilities, passes only the release's own
  objects through its post-renderer, each after a `# Source:` comment, and prints the hooks on
  standard output: the stream is the two together.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass

from scanner.sources.tools.find import find_tool, tool_version

MINIMUM = (3, 13)  # `template --dry-run=server` (helm 3.13); an executable --post-renderer is older
CAPTURE_ENV = "KUBEHOP_HELM_CAPTURE"
_PLUGIN = "kubehop-capture"
_HANDED_BACK = "# rendered for kubehop: nothing for helm to install"
# Keeps what helm rendered in $KUBEHOP_HELM_CAPTURE; prints the comment only when that succeeded
# (a capture over kubehop's output limit fails, and so does helm).
_SCRIPT = f'#!/bin/sh\ncat > "${CAPTURE_ENV}" && echo "{_HANDED_BACK}"\n'
# Where no sh exists (Windows), helm 4's plugin runs the same in Python.
_PYTHON_SCRIPT = (f"import os, sys; open(os.environ['{CAPTURE_ENV}'], 'wb').write(sys.stdin.buffer.read()); "
                  f"print({_HANDED_BACK!r})")


@dataclass(frozen=True)
class HelmVersion:
    path: str
    text: str  # as helm prints it, e.g. v3.17.2+gcc0bbbd
    number: tuple[int, int] | None  # (major, minor); None when helm would not say

    @property
    def major(self) -> int:
        return self.number[0] if self.number else 4  # a helm that does not say is tried as the newest


def helm_version(helm: str) -> HelmVersion:
    text = tool_version(helm)
    match = re.search(r"v?(\d+)\.(\d+)", text)
    return HelmVersion(helm, text, (int(match.group(1)), int(match.group(2))) if match else None)


def unsupported(helm: str) -> str | None:
    """Why this helm cannot render for kubehop (the version found, the one needed), or None."""
    found = helm_version(helm)
    if found.number is None or found.number >= MINIMUM:
        return None
    return (f"{helm} is helm {found.text}; kubehop renders with helm {MINIMUM[0]}.{MINIMUM[1]} or later "
            "(helm 4 too; `kubehop tools install` fetches one)")


class Capture:
    """The post-renderer for one helm, written once into `work` and shared by all its renders."""

    def __init__(self, helm: str, work: str):
        self.version = helm_version(helm)
        folder = os.path.join(work, "plugins", _PLUGIN)
        os.makedirs(folder)
        self._script = os.path.join(folder, "capture.sh")
        with open(self._script, "w", encoding="utf-8") as handle:
            handle.write(_SCRIPT)
        os.chmod(self._script, 0o755)
        self._plugins = os.path.dirname(folder)
        if self.version.major >= 4:
            _write_plugin(folder, self._script)

    def arguments(self) -> list[str]:
        if self.version.major >= 4:
            return ["--dry-run=server", "--post-renderer", _PLUGIN]
        return ["--validate", "--dry-run=server", "--post-renderer", self._script]

    def environment(self, capture: str) -> dict[str, str]:
        env = {CAPTURE_ENV: capture}
        if self.version.major >= 4:
            env["HELM_PLUGINS"] = self._plugins
        return env

    def stream(self, capture: str, stdout: str) -> str | None:
        """The rendered stream of a render that succeeded; None when there was nothing to
        post-render (a chart whose templates emit nothing)."""
        text = _read(capture) if os.path.exists(capture) else None
        if self.version.major < 4:  # the hooks, which helm 3 prints instead of post-rendering them
            hooks = _read(stdout).replace(_HANDED_BACK, "", 1).strip("\n")
            if hooks.strip():
                text = f"{(text or '').rstrip()}\n{hooks}\n"
        return text


def _write_plugin(folder: str, script: str) -> None:
    shell = shutil.which("sh")
    command = {"command": shell, "args": [script]} if shell else \
        {"command": _python(), "args": ["-c", _PYTHON_SCRIPT]}
    plugin = {"apiVersion": "v1", "name": _PLUGIN, "version": "1.0.0", "type": "postrenderer/v1",
              "runtime": "subprocess", "runtimeConfig": {"platformCommand": [command]}}
    with open(os.path.join(folder, "plugin.yaml"), "w", encoding="utf-8") as handle:
        json.dump(plugin, handle)  # JSON is YAML


def _python() -> str:
    import sys

    return sys.executable


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def find_helm() -> str | None:
    """The helm kubehop renders with: KUBEHOP_HELM, else PATH's, else the tool cache's; an old helm
    on PATH gives way to a cached one that can render."""
    return find_tool("helm", usable=lambda helm: unsupported(helm) is None)
