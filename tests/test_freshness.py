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


@pytest.fixture(scope="module")
def stale_data(tmp_path_factory) -> Path:
    """kubehop's data with one file checked long ago."""
    root = tmp_path_factory.mktemp("data")
    shutil.copytree(REPO / "rules", root / "rules")
    shutil.copytree(REPO / "compat-matrix", root / "compat-matrix")
    flux = root / "compat-matrix" / "flux.yaml"
    text = flux.read_text(encoding="utf-8")
    flux.write_text(text.replace(f'data_checked: "{freshness.read_data_checked(text)}"',
                                 'data_checked: "2020-01-15"'), encoding="utf-8")
    return root


@pytest.mark.parametrize("command", [
    ["scan", "--target", "1.36", str(EXAMPLE)], ["scan", "--format", "json", "--target", "1.36", str(EXAMPLE)],
    ["plan", "--from", "1.31", "--target", "1.36", str(EXAMPLE)], ["components", str(EXAMPLE)],
    ["inventory", str(EXAMPLE)], ["rules"]])
def test_every_command_prints_the_notice_once_when_the_data_is_stale(stale_data: Path, command) -> None:
    proc = kubehop(*command, data_root=stale_data)
    assert proc.stderr.decode().count("last checked against its sources on 2020-01-15") == 1, proc.stderr
    assert "last checked" not in proc.stdout.decode()


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
