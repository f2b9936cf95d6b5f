"""How old kubehop's facts are: every data file's `data_checked`, the oldest of them, and the
notice a command prints when that is long ago.

kubehop knows only the releases its data was checked against: a component release or a
Kubernetes change published after a file's `data_checked` is unknown to it. The oldest date is
what the tool reports (`--version`, the JSON `tool` block, the reports), since the facts are only
as fresh as their stalest file. A component file checked recently against an older copy of the
project's sources (a dormant repository) says so with `sources_as_of`: kubehop names those
components with their dates next to the data date, rather than letting one of them date it all.
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
_SOURCES_AS_OF = re.compile(r'^sources_as_of:\s*"?(\d{4}-\d{2}-\d{2})"?\s*(?:#.*)?$', re.MULTILINE)
_HEAD = 4096
COMPONENTS = "compat-matrix"
CRD_RULES = "rules/crds"  # a component's CRD rules: dated with the component


def read_data_checked(text: str) -> str | None:
    return _top_level(_DATA_CHECKED, "data_checked:", text)


def read_sources_as_of(text: str) -> str | None:
    return _top_level(_SOURCES_AS_OF, "sources_as_of:", text)


def _top_level(pattern: re.Pattern, key: str, text: str) -> str | None:
    head = text[:_HEAD]
    # The key looked for first: a line-anchored search over a head without it tries every position
    # (most component files have no sources_as_of: 2 ms of every plan's header, 0.2 ms so).
    match = pattern.search(head) if key in head else None
    return match.group(1) if match else None


def _fact_files(root: str) -> list[str]:
    """The fact files (relative to the data root), listed with os: every command reads their dates."""
    found: list[str] = []
    for entry in FACT_FILES:
        if entry.endswith(".yaml"):
            found.append(entry)
            continue
        try:
            found += [f"{entry}/{name}" for name in sorted(os.listdir(os.path.join(root, entry))) if name.endswith(".yaml")]
        except OSError:
            continue
    return found


@functools.cache
def _dates() -> dict[str, tuple[str | None, str | None]]:
    """data file (relative to the data root) -> its data_checked and sources_as_of, read from the first
    _HEAD bytes of each (200 files), as bytes (pathlib and text files took twice as long), or kept from
    a run that read the same files (scanner.data.kept_by_metadata)."""
    root = str(data.data_root())
    files = _fact_files(root)
    return data.kept_by_metadata(b"dates\0" + repr(files).encode(), [os.path.join(root, f) for f in files],
                                 lambda: _read_dates(root, files))


def _read_dates(root: str, files: list[str]) -> dict[str, tuple[str | None, str | None]]:
    dates: dict[str, tuple[str | None, str | None]] = {}
    for file in files:
        try:
            with open(os.path.join(root, file), "rb") as handle:
                head = handle.read(_HEAD).decode("utf-8", "replace")
        except OSError:
            continue
        dates[file] = (read_data_checked(head), read_sources_as_of(head))
    return dates


@functools.cache
def checked_dates() -> dict[str, str]:
    """data file (relative to the data root) -> its data_checked; files without one are left out."""
    return {path: checked for path, (checked, _) in _dates().items() if checked}


@functools.cache
def sources_dates() -> dict[str, str]:
    """component file (relative to the data root) -> its sources_as_of; files without one are left out."""
    return {path: as_of for path, (_, as_of) in _dates().items() if path.startswith(COMPONENTS + "/") and as_of}


def data_checked() -> str:
    """The oldest data_checked of all fact files: the day up to which kubehop's facts are known."""
    dates = checked_dates()
    return min(dates.values()) if dates else "unknown"


def older_sources() -> dict[str, str]:
    """component -> the day of its sources, for each component whose sources_as_of is older than
    data_checked(): its releases after that day are unknown to kubehop, whatever the data date says."""
    oldest = data_checked()
    return {path.removeprefix(COMPONENTS + "/").removesuffix(".yaml"): as_of
            for path, as_of in sorted(sources_dates().items()) if as_of < oldest}


def older_sources_line(components) -> str | None:
    """What a report that states the data date adds for the components it names whose sources are older."""
    older = older_sources()
    named = sorted({c for c in components if c in older})
    if not named:
        return None
    dates = ", ".join(f"{c} as of {older[c]}" for c in named)
    return f"older sources: {dates}: their releases after {'those days' if len(named) > 1 else 'it'} are unknown to kubehop"


def version_line() -> str | None:
    """What `kubehop --version` adds under the data date when some components' sources are older."""
    older = older_sources()
    if not older:
        return None
    return (f"{len(older)} components from older sources (the oldest of {min(older.values())}): "
            "`kubehop components` dates their rows, JSON tool.older_sources lists them")


def oldest_files() -> list[str]:
    oldest = data_checked()
    return sorted(path for path, checked in checked_dates().items() if checked == oldest)


# What the running command relies on (`relied_on`): None until it reads the data; then the components
# whose facts it judged by (an empty set: the Kubernetes rules only). The notice is dated by those.
_relied: set[str] | None = None


def forget_relied() -> None:
    """A new command starts: it has relied on nothing yet (tests run many in one process)."""
    global _relied
    _relied = None


def relied_on(components=()) -> None:
    """The command judged by the Kubernetes rules and by these components' facts."""
    global _relied
    _relied = (_relied or set()) | set(components)


def relied_notice(today: dt.date | None = None) -> str | None:
    """The stale-data notice for what the command relied on, or None (it read no data, or that is recent)."""
    return None if _relied is None else stale_notice(today, components=_relied)


def stale_notice(today: dt.date | None = None, components=None) -> str | None:
    """One notice when a fact file a run relies on was checked more than STALE_AFTER_DAYS before today,
    else None. `components`: the components the run judged or whose CRDs' objects it read (the other
    components' files, compat-matrix/ and rules/crds/, do not date it); None: every file."""
    dates = checked_dates()
    if components is not None:
        used = {f"{folder}/{name}.yaml" for name in components for folder in (COMPONENTS, CRD_RULES)}
        dates = {path: checked for path, checked in dates.items() if _component_of(path) is None or path in used}
    try:
        checked = dt.date.fromisoformat(min(dates.values()))
    except ValueError:
        return None
    now = today or _today()
    age = (now - checked).days
    if age <= STALE_AFTER_DAYS:
        return None
    stale = sorted(path for path, day in dates.items() if (now - dt.date.fromisoformat(day)).days > STALE_AFTER_DAYS)
    return (f"kubehop's data was last checked against its sources on {checked.isoformat()}, {age} days ago "
            f"({_stale_files(stale)}): component releases and Kubernetes changes published after that day are "
            "unknown to kubehop. Install a newer kubehop (or use a newer ref of its GitHub Action) to get newer data.")


def _component_of(path: str) -> str | None:
    """The component a data file speaks of: its compat-matrix file, and its CRD rules (rules/crds/<name>.yaml
    is read for the objects of that component's CRDs); None for the Kubernetes rules."""
    folder, _, name = path.rpartition("/")
    return name.removesuffix(".yaml") if folder in (COMPONENTS, CRD_RULES) else None


def _stale_files(paths: list[str]) -> str:
    """What is stale, for the notice: the components by name, the Kubernetes rules as one."""
    names = sorted({name for path in paths if (name := _component_of(path)) is not None})
    rules = sum(_component_of(path) is None for path in paths)
    said = ([f"the Kubernetes rules ({rules} {'file' if rules == 1 else 'files'})"] if rules else [])
    if names:
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        said.append(f"{'component' if len(names) == 1 else 'components'} {shown}")
    return "; ".join(said) + f" older than {STALE_AFTER_DAYS} days"


def _today() -> dt.date:
    """Today, or the day SOURCE_DATE_EPOCH names (the reproducible-builds convention): the same
    tree and data then give the same output whatever day they run, as a test suite needs."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    try:
        return dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc).date()
    except (ValueError, OverflowError, OSError):
        return dt.date.today()
