"""How old kubehop's facts are: every data file's `data_checked`, the oldest of them, and the
notice a command prints when that is long ago.

kubehop knows only the releases its data was checked against: a component release or a
Kubernetes change published after a file's `data_checked` is unknown to it. The oldest date is
what the tool reports (`--version`, the JSON `tool` block, the reports), since the facts are only
as fresh as their stalest file.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re

from scanner import data

STALE_AFTER_DAYS = 120
# The data folders and files that hold facts from public sources, each with its data_checked.
FACT_FILES = ("rules/kubernetes.yaml", "rules/core", "rules/fields", "rules/crds", "rules/hop-notes", "rules/references.yaml",
              "compat-matrix", "rules/distro-releases.yaml", "rules/upgrade-orders.yaml",
              "rules/lifecycle/version-skew.yaml", "rules/cluster-config", "rules/client-tools.yaml",
              "rules/lifecycle/api-calls.yaml")
# A top-level key near the top of the file: read without parsing the YAML (start-up stays light;
# tests/test_freshness.py holds this reading to the parsed value of every file).
_DATA_CHECKED = re.compile(r'^data_checked:\s*"?(\d{4}-\d{2}-\d{2})"?\s*(?:#.*)?$', re.MULTILINE)
_HEAD = 4096


def read_data_checked(text: str) -> str | None:
    match = _DATA_CHECKED.search(text[:_HEAD])
    return match.group(1) if match else None


@functools.cache
def checked_dates() -> dict[str, str]:
    """data file (relative to the data root) -> its data_checked; files without one are left out."""
    root = data.data_root()
    dates: dict[str, str] = {}
    for entry in FACT_FILES:
        path = root / entry
        for file in ([path] if path.suffix == ".yaml" else sorted(path.glob("*.yaml"))):
            try:
                with open(file, encoding="utf-8") as handle:
                    checked = read_data_checked(handle.read(_HEAD))
            except OSError:
                continue
            if checked:
                dates[file.relative_to(root).as_posix()] = checked
    return dates


def data_checked() -> str:
    """The oldest data_checked of all fact files: the day up to which kubehop's facts are known."""
    dates = checked_dates()
    return min(dates.values()) if dates else "unknown"


def oldest_files() -> list[str]:
    oldest = data_checked()
    return sorted(path for path, checked in checked_dates().items() if checked == oldest)


def stale_notice(today: dt.date | None = None) -> str | None:
    """One notice when the oldest data_checked is more than STALE_AFTER_DAYS before today, else None."""
    try:
        checked = dt.date.fromisoformat(data_checked())
    except ValueError:
        return None
    age = ((today or _today()) - checked).days
    if age <= STALE_AFTER_DAYS:
        return None
    return (f"kubehop's data was last checked against its sources on {checked.isoformat()}, {age} days ago: "
            "component releases and Kubernetes changes published after that day are unknown to kubehop. "
            "Install a newer kubehop (or use a newer ref of its GitHub Action) to get newer data.")


def _today() -> dt.date:
    """Today, or the day SOURCE_DATE_EPOCH names (the reproducible-builds convention): the same
    tree and data then give the same output whatever day they run, as a test suite needs."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    try:
        return dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc).date()
    except (ValueError, OverflowError, OSError):
        return dt.date.today()
