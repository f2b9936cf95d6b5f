"""The configuration cannot hide its effect (issue 21): what `exclude` left out is counted and said, a
scan that read nothing does not say "nothing blocks", and every format says where the target and
the from-minor came from (the flag, the configuration file, the default, the tree)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_runner
from scanner.cli import cli

BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\nspec: {}\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "ingress.yaml").write_text(BLOCKER)
    (tmp_path / "apps" / "config.yaml").write_text(CONFIGMAP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan(*args: str) -> tuple[int, str]:
    result = cli_runner().invoke(cli, ["scan", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def report(*args: str) -> tuple[int, dict]:
    code, out = scan("--format", "json", *args)
    return code, json.loads(out)


# --- exclusions ------------------------------------------------------------------------------------

def test_excluding_everything_is_counted_and_is_not_nothing_blocks(repo):
    (repo / ".kubehop.yaml").write_text("exclude: ['*']\n")
    code, found = report("--target", "1.36", "apps")
    assert code == 0 and found["summary"]["objects"] == 0
    assert found["summary"]["silenced"]["excluded"] == 2
    assert found["notices"] == ["files left out by `exclude` (the configuration's, or --exclude): 2"]
    _, text = scan("--target", "1.36", "apps")
    assert text.splitlines()[-1] == ("nothing checked for 1.36: no Kubernetes object was read, 2 files left out "
                                     "by `exclude` (0 blockers, 0 warnings)")
    assert "nothing blocks" not in text
    _, markdown = scan("--target", "1.36", "--format", "markdown", "apps")
    assert ("⚠️ **nothing checked for 1.36: no Kubernetes object was read, 2 files left out by `exclude`** "
            "(0 blockers, 0 warnings)") in markdown
    _, github = scan("--target", "1.36", "--format", "github", "apps")
    assert github.splitlines()[-1].startswith("kubehop: nothing checked for 1.36")
    _, sarif = scan("--target", "1.36", "--format", "sarif", "apps")
    assert json.loads(sarif)["runs"][0]["properties"]["excludedFiles"] == 2


def test_files_left_out_are_counted_beside_what_was_scanned(repo):
    (repo / ".kubehop.yaml").write_text("exclude: ['apps/config.yaml']\n")
    code, found = report("--target", "1.36", "--exclude", "apps/missing.yaml", "apps")
    assert code == 1 and found["summary"]["silenced"]["excluded"] == 1 and found["summary"]["objects"] == 1
    _, text = scan("--target", "1.36", "apps")
    assert "notice: files left out by `exclude` (the configuration's, or --exclude): 1" in text
    assert text.splitlines()[-1].startswith("blocked: 1.36 cannot be reached as is")


def test_a_scan_that_reads_no_object_says_so(repo):
    (repo / "values").mkdir()
    (repo / "values" / "values.yaml").write_text("replicas: 3\n")
    code, text = scan("--target", "1.36", "values")
    assert code == 0 and text.splitlines()[-1] == ("nothing checked for 1.36: no Kubernetes objects found in values "
                                                   "(0 blockers, 0 warnings)")
    assert "notice: no Kubernetes objects found in values" in text


# --- where the minors came from --------------------------------------------------------------------

@pytest.mark.parametrize("config, args, target_source, from_source, words", [
    ("target: '1.21'\nfrom: '1.20'\n", (), "configuration", "configuration",
     "target 1.21 set by the configuration .kubehop.yaml; from 1.20 set by the configuration .kubehop.yaml"),
    ("target: '1.21'\n", ("--target", "1.36", "--from", "1.31"), "flag", "flag",
     "target 1.36 set by --target; from 1.31 set by --from"),
    ("from: '1.31'\n", (), "default", "configuration",
     "target 1.37 by default (the newest minor kubehop knows); from 1.31 set by the configuration .kubehop.yaml"),
    (None, (), "default", None, "target 1.37 by default (the newest minor kubehop knows)"),
])
def test_every_format_says_where_the_minors_came_from(repo, config, args, target_source, from_source, words):
    if config:
        (repo / ".kubehop.yaml").write_text(config)
    _, found = report(*args, "apps")
    assert (found["target_source"], found["from_source"]) == (target_source, from_source)
    assert found["configuration"] == (".kubehop.yaml" if config else None)
    _, text = scan(*args, "apps")
    assert text.splitlines()[1] == words
    _, github = scan("--format", "github", *args, "apps")
    assert f"kubehop: {words}" in github.splitlines()
    _, markdown = scan("--format", "markdown", *args, "apps")
    assert f"{words[0].upper()}{words[1:]}.".replace(".kubehop.yaml", "`.kubehop.yaml`") in markdown.splitlines()
    _, sarif = scan("--format", "sarif", *args, "apps")
    properties = json.loads(sarif)["runs"][0]["properties"]
    assert (properties["targetSource"], properties["fromSource"]) == (target_source, from_source)


def test_the_from_minor_read_from_the_tree_says_where(repo):
    (repo / "apps" / "plan.yaml").write_text(
        "apiVersion: upgrade.cattle.io/v1\nkind: Plan\nmetadata: {name: k3s-server, namespace: system-upgrade}\n"
        "spec:\n  version: v1.31.4+k3s1\n  nodeSelector:\n    matchExpressions:\n"
        "      - {key: node-role.kubernetes.io/control-plane, operator: Exists}\n")
    _, found = report("--target", "1.36", "apps")
    assert (found["from"], found["from_source"]) == ("1.31", "upgrade-orders")
    _, text = scan("--target", "1.36", "apps")
    assert text.splitlines()[1] == "target 1.36 set by --target; from 1.31 read from the tree's upgrade orders"


def test_a_configuration_path_from_the_tree_is_printed_escaped(repo):
    """The configuration's folder is named by the tree: a newline in it stays on its line."""
    folder = repo / "odd\n::error::spoofed"
    (folder / "apps").mkdir(parents=True)
    (folder / "apps" / "ingress.yaml").write_text(BLOCKER)
    (folder / ".kubehop.yaml").write_text("target: '1.36'\n")
    for fmt in ("text", "github"):
        _, out = scan("--format", fmt, str(folder / "apps"))
        assert not any(line.startswith("::error::spoofed") for line in out.splitlines()), out
