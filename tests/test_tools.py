"""Finding helm, kubectl and kustomize."""

from __future__ import annotations

from scanner.sources.tools.find import find_tool


def test_a_folder_named_by_the_variable_is_not_the_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_HELM", str(tmp_path))
    assert find_tool("helm") is None
    tool = tmp_path / "helm"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("KUBEHOP_HELM", str(tool))
    assert find_tool("helm") == str(tool)
