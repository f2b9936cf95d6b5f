"""Data age is visible: every fact file says when it was last checked against its sources, and
kubehop says how old its data is (`--version`, JSON, reports) and warns once it is stale."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scanner import data, freshness

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples"


def fact_files() -> list[str]:
    files = []
    for entry in freshness.FACT_FILES:
        path = REPO / entry
        files += [entry] if path.suffix == ".yaml" else sorted(f"{entry}/{p.name}" for p in path.glob("*.yaml"))
    return files


@pytest.mark.parametrize("relative", fact_files())
def test_every_fact_file_has_a_data_checked_the_fast_reading_finds(relative: str) -> None:
    document = data.load(relative)
    assert "data_checked" in document, f"{relative} has no data_checked"
    assert freshness.checked_dates()[relative] == document["data_checked"]
    assert dt.date.fromisoformat(document["data_checked"]) <= dt.date.today()


@pytest.mark.parametrize("relative", [f for f in fact_files() if f.startswith("compat-matrix/")])
def test_the_fast_reading_finds_every_sources_as_of_and_it_is_older_than_the_files_check(relative: str) -> None:
    document = data.load(relative)
    assert freshness.sources_dates().get(relative) == document.get("sources_as_of")
    if "sources_as_of" in document:
        assert document["sources_as_of"] < document["data_checked"], relative


def test_components_from_older_sources_are_named_with_their_date_and_leave_the_data_date_alone() -> None:
    older = freshness.older_sources()
    assert older["hajimari"] == "2023-05-24"  # toboshii/hajimari's newest commit
    assert all(date < freshness.data_checked() for date in older.values())
    assert freshness.data_checked() == min(freshness.checked_dates().values()) > "2023-05-24"
    # cert-manager's facts were read from sources as new as its data_checked: it is not named.
    assert "cert-manager" not in older
    assert freshness.older_sources_line(["cert-manager", "hajimari"]) == (
        "older sources: hajimari as of 2023-05-24: their releases after it are unknown to kubehop")
    assert freshness.older_sources_line(["cert-manager"]) is None


def test_the_tool_reports_the_oldest_file() -> None:
    dates = freshness.checked_dates()
    assert freshness.data_checked() == min(dates.values())
    assert all(dates[f] == freshness.data_checked() for f in freshness.oldest_files())


def test_the_notice_appears_only_past_120_days() -> None:
    checked = dt.date.fromisoformat(freshness.data_checked())
    assert freshness.stale_notice(checked + dt.timedelta(days=120)) is None
    notice = freshness.stale_notice(checked + dt.timedelta(days=121))
    assert notice is not None and f"on {checked.isoformat()}, 121 days ago" in notice
    assert "unknown to kubehop" in notice and "newer kubehop" in notice


def kubehop(*args: str, data_root: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KUBEHOP_NO_CACHE": "1"}
    if data_root is not None:
        env["KUBEHOP_DATA_DIR"] = str(data_root)
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True, env=env, cwd=REPO)


def _set_checked(root: Path, relative: str, day: str) -> None:
    path = root / relative
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'data_checked: "{freshness.read_data_checked(text)}"', f'data_checked: "{day}"'),
                    encoding="utf-8")


def _data_copy(tmp_path_factory, checked: dict[str, str] | None = None) -> Path:
    """A copy of kubehop's data with these files (relative path -> day) checked on these days."""
    root = tmp_path_factory.mktemp("data")
    shutil.copytree(REPO / "rules", root / "rules")
    shutil.copytree(REPO / "compat-matrix", root / "compat-matrix")
    for relative, day in (checked or {}).items():
        _set_checked(root, relative, day)
    return root


@pytest.fixture(scope="module")
def stale_data(tmp_path_factory) -> Path:
    """kubehop's data with one Kubernetes rules file checked long ago: every command relies on it."""
    return _data_copy(tmp_path_factory, {"rules/hop-notes/kubernetes.yaml": "2020-01-15"})


@pytest.mark.parametrize("command", [
    ["scan", "--target", "1.36", str(EXAMPLE)], ["scan", "--format", "json", "--target", "1.36", str(EXAMPLE)],
    ["plan", "--from", "1.31", "--target", "1.36", str(EXAMPLE)], ["components", str(EXAMPLE)],
    ["inventory", str(EXAMPLE)], ["rules"], ["fix", "--target", "1.36", str(EXAMPLE)]])
def test_every_command_prints_the_notice_once_when_the_data_is_stale(stale_data: Path, command) -> None:
    proc = kubehop(*command, data_root=stale_data)
    stderr = proc.stderr.decode()
    assert stderr.count("last checked against its sources on 2020-01-15") == 1, stderr
    assert "(the Kubernetes rules (1 file) older than 120 days)" in stderr
    assert "last checked" not in proc.stdout.decode()


@pytest.mark.parametrize("command", [["--help"], ["scan", "--help"], ["tools", "--help"]])
def test_help_prints_no_notice(stale_data: Path, command) -> None:
    proc = kubehop(*command, data_root=stale_data)
    assert proc.returncode == 0 and "last checked" not in proc.stderr.decode()


@pytest.fixture(scope="module")
def stale_components(tmp_path_factory) -> Path:
    """kubehop's data with two components checked long ago: flux, which the example deploys, and redis,
    which it does not."""
    return _data_copy(tmp_path_factory, {"compat-matrix/flux.yaml": "2020-01-15", "compat-matrix/redis.yaml": "2019-06-01"})


def test_the_notice_is_dated_by_the_components_the_tree_deploys(stale_components: Path, tmp_path: Path) -> None:
    for command in (["scan", "--target", "1.36", str(EXAMPLE)], ["components", str(EXAMPLE)]):
        stderr = kubehop(*command, data_root=stale_components).stderr.decode()
        assert stderr.count("last checked against its sources on 2020-01-15") == 1, stderr
        assert "(component flux older than 120 days)" in stderr and "redis" not in stderr
    # A tree that deploys neither, and `rules`, rely on no component's facts: no notice.
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", encoding="utf-8")
    for command in (["scan", "--target", "1.36", str(tmp_path)], ["rules"]):
        assert "last checked" not in kubehop(*command, data_root=stale_components).stderr.decode()
    # The version line and reports still date the data by its oldest file.
    assert kubehop("--version", data_root=stale_components).stdout.decode().splitlines()[0].endswith(
        "(data checked 2019-06-01)")


def test_the_notice_names_what_is_stale() -> None:
    assert freshness._stale_files(["compat-matrix/flux.yaml", "compat-matrix/redis.yaml", "rules/core/apps.yaml"]) == (
        "the Kubernetes rules (1 file); components flux, redis older than 120 days")
    many = [f"compat-matrix/c{i}.yaml" for i in range(8)]
    assert freshness._stale_files(many) == "components c0, c1, c2, c3, c4, c5 and 2 more older than 120 days"


def test_fresh_data_prints_no_notice() -> None:
    # conftest pins "today" (SOURCE_DATE_EPOCH) to the day the data was checked
    proc = kubehop("rules")
    assert "last checked" not in proc.stderr.decode()


def test_source_date_epoch_is_today(monkeypatch) -> None:
    checked = dt.datetime.fromisoformat(freshness.data_checked()).replace(tzinfo=dt.timezone.utc)
    later = checked + dt.timedelta(days=200)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(later.timestamp())))
    assert "200 days ago" in freshness.stale_notice()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "not a number")
    assert freshness._today() == dt.date.today()


def test_version_json_and_reports_carry_the_date(stale_data: Path) -> None:
    version = kubehop("--version", data_root=stale_data).stdout.decode()
    assert version.splitlines()[0].endswith("(data checked 2020-01-15)")
    report = json.loads(kubehop("scan", "--format", "json", "--target", "1.36", str(EXAMPLE),
                                data_root=stale_data).stdout)
    assert report["tool"]["data_checked"] == "2020-01-15"
    plan = json.loads(kubehop("plan", "--format", "json", "--from", "1.31", "--target", "1.36", str(EXAMPLE),
                              data_root=stale_data).stdout)
    assert plan["tool"]["data_checked"] == "2020-01-15"
    for fmt in ("text", "markdown"):
        out = kubehop("scan", "--format", fmt, "--target", "1.36", str(EXAMPLE), data_root=stale_data).stdout
        assert "data checked 2020-01-15" in out.decode(), fmt


@pytest.fixture(scope="module")
def older_copy(tmp_path_factory) -> Path:
    """kubehop's data with Flux's facts read from a copy of its sources of 2024-03-01."""
    root = _data_copy(tmp_path_factory)
    flux = root / "compat-matrix" / "flux.yaml"
    text = flux.read_text(encoding="utf-8")
    checked = f'data_checked: "{freshness.read_data_checked(text)}"\n'
    own = freshness.read_sources_as_of(text)  # the file's own copy date, replaced
    if own:
        text = text.replace(f'sources_as_of: "{own}"\n', "")
    flux.write_text(text.replace(checked, checked + 'sources_as_of: "2024-03-01"\n'), encoding="utf-8")
    return root


def test_an_older_copy_is_named_by_version_json_and_reports_and_the_data_date_stays(older_copy: Path) -> None:
    version = kubehop("--version", data_root=older_copy).stdout.decode().splitlines()
    assert version[0].endswith(f"(data checked {freshness.data_checked()})")
    assert version[1].startswith(f"{len(set(freshness.older_sources()) | {'flux'})} components from older sources "
                                 "(the oldest of 2023-05-24)")
    proc = kubehop("plan", "--format", "json", "--from", "1.31", "--target", "1.36", str(EXAMPLE), data_root=older_copy)
    tool = json.loads(proc.stdout)["tool"]
    assert (tool["data_checked"], tool["older_sources"]["flux"]) == (freshness.data_checked(), "2024-03-01")
    assert "last checked" not in proc.stderr.decode()  # the stale notice stays about data_checked
    plan = kubehop("plan", "--from", "1.31", "--target", "1.36", str(EXAMPLE), data_root=older_copy).stdout.decode()
    assert "  older sources: flux as of 2024-03-01: their releases after it are unknown to kubehop" in plan
    listed = kubehop("components", str(EXAMPLE), data_root=older_copy).stdout.decode()
    assert [line for line in listed.splitlines() if line.startswith("flux ")][0].count("sources as of 2024-03-01")


@pytest.fixture(scope="module")
def stale_crd_rules(tmp_path_factory) -> Path:
    """kubehop's data with external-secrets' CRD rules checked long ago."""
    return _data_copy(tmp_path_factory, {"rules/crds/external-secrets.yaml": "2020-01-15"})


def test_a_components_crd_rules_date_only_the_runs_that_read_its_objects(stale_crd_rules: Path, tmp_path: Path) -> None:
    """rules/crds/<component>.yaml is that component's: a tree with none of its objects does not rely on it
    (before, external-secrets' CRD rules, checked 2026-08-08, would have made every command on every tree warn)."""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "es.yaml").write_text(
        "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: a, namespace: b}\n", encoding="utf-8")
    stderr = kubehop("scan", "--target", "1.36", str(tmp_path / "secret"), data_root=stale_crd_rules).stderr.decode()
    assert "last checked against its sources on 2020-01-15" in stderr and "(component external-secrets older" in stderr
    for command in (["scan", "--target", "1.36", str(EXAMPLE)], ["rules"]):
        assert "last checked" not in kubehop(*command, data_root=stale_crd_rules).stderr.decode()
