"""Finding helm, kubectl and kustomize, and what kubehop keeps of what they say of themselves."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from scanner.sources.tools.find import find_tool, remembered


def test_a_folder_named_by_the_variable_is_not_the_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_HELM", str(tmp_path))
    assert find_tool("helm") is None
    tool = tmp_path / "helm"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("KUBEHOP_HELM", str(tool))
    assert find_tool("helm") == str(tool)


def _native(folder: Path, name: str) -> Path:
    """A native executable named `name` (a copy of `true`), else the test skips."""
    true = shutil.which("true")
    native = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
    if true is None or not Path(true).read_bytes()[:4].startswith(native):
        pytest.skip("no native `true` to copy")
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    shutil.copyfile(true, tool)
    tool.chmod(0o755)
    return tool


def _asker(answer: str | None = "v1.0.0"):
    asked: list[int] = []

    def ask() -> str | None:
        asked.append(1)
        return answer

    return asked, ask


def test_what_a_native_tool_says_is_kept_for_that_very_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    tool = _native(tmp_path / "bin", "helm")
    asked, ask = _asker()
    assert [remembered(str(tool), "version", ask) for _ in range(3)] == ["v1.0.0"] * 3
    assert len(asked) == 1  # once: the next scans read it from kubehop's cache
    assert remembered(str(tool), "env {}", ask) == "v1.0.0" and len(asked) == 2  # another question
    time.sleep(0.01)
    shutil.copyfile(shutil.which("true"), tool)  # the tool updated in place: asked again
    assert remembered(str(tool), "version", ask) == "v1.0.0" and len(asked) == 3


def test_a_script_or_a_version_managers_shim_is_always_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "bin" / "helm"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho v3.14.0\n")  # asdf's shims are scripts: the version depends on the folder
    script.chmod(0o755)
    shim = tmp_path / "shims" / "helm"
    shim.parent.mkdir()
    shim.symlink_to(_native(tmp_path / "mise", "mise"))  # mise's shims: links to mise itself
    for tool in (script, shim):
        asked, ask = _asker()
        assert [remembered(str(tool), "version", ask) for _ in range(2)] == ["v1.0.0"] * 2 and len(asked) == 2


def test_a_question_the_tool_did_not_answer_is_asked_again(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    tool = _native(tmp_path / "bin", "helm")
    asked, ask = _asker(None)
    assert remembered(str(tool), "version", ask) is None and remembered(str(tool), "version", ask) is None
    assert len(asked) == 2
