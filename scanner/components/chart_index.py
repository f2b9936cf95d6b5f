"""Chart versions and their `kubeVersion`, from where helm keeps them: the tree, helm's cache, the network.

Read in order: a chart kept in the tree (its Chart.yaml, already read by the sources); helm's
local repository cache (`<name>-index.yaml` files, named by repositories.yaml, and downloaded
`<chart>-<version>.tgz` archives); with --allow-network, the `index.yaml` of each repository the
tree names (an OCI registry has no index: the pinned version's own Chart.yaml, through helm).
Nothing from the tree becomes a path: cache files are matched by name against a listing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from scanner import data
from scanner.components.chart_pins import ChartPin, ChartVersion, repository_key
from scanner.components.library import library_type

MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_CHART_YAML_BYTES = 1024 * 1024
FETCH_TIMEOUT = 20
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class ChartVersions:
    """Versions per (repository, chart), with what could not be read (notices, never input errors)."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, str], list[ChartVersion]] = {}
        self.notices: list[str] = []

    def add(self, repository: str | None, version: ChartVersion) -> None:
        self.versions.setdefault((repository_key(repository), version.chart), []).append(version)

    def for_pin(self, pin: ChartPin) -> list[ChartVersion]:
        return self.versions.get(pin.key, [])


def chart_versions(pins: Iterable[ChartPin], allow_network: bool = False,
                   env: dict[str, str] | None = None) -> ChartVersions:
    found = ChartVersions()
    pins = [p for p in pins if p.repository is not None and not p.git and not p.repository.startswith("tree:")]
    if not pins:
        return found
    wanted = {p.key for p in pins}
    _from_cache(found, wanted, pins, env or dict(os.environ))
    if allow_network:
        missing = sorted({p.repository for p in pins if not found.for_pin(p)
                          and not p.repository.startswith("oci://")})
        _from_network(found, wanted, missing)
    return found


# --- helm's cache -----------------------------------------------------------------------------------

def helm_paths(env: dict[str, str]) -> tuple[Path, Path]:
    """helm's repository cache folder and repositories.yaml, as helm finds them."""
    home = Path(env.get("HOME", str(Path.home())))
    cache = Path(env.get("HELM_CACHE_HOME") or Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "helm")
    config = Path(env.get("HELM_CONFIG_HOME") or Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "helm")
    return (Path(env.get("HELM_REPOSITORY_CACHE") or cache / "repository"),
            Path(env.get("HELM_REPOSITORY_CONFIG") or config / "repositories.yaml"))


def _from_cache(found: ChartVersions, wanted: set[tuple[str, str]], pins: list[ChartPin],
                env: dict[str, str]) -> None:
    cache, config = helm_paths(env)
    try:
        listing = set(os.listdir(cache))
    except OSError:
        return
    for name, url in _repositories(config).items():
        index = f"{name}-index.yaml"
        if index in listing and any(key[0] == repository_key(url) for key in wanted):
            _read_index(found, wanted, url, _read_bytes(cache / index, MAX_INDEX_BYTES), str(cache / index))
    for pin in pins:
        archive = f"{pin.chart}-{pin.pin.lstrip('v')}.tgz"
        if _NAME.match(archive) and archive in listing and not found.for_pin(pin):
            version = _archive_version(cache / archive, pin.chart)
            if version is not None:
                found.add(pin.repository, version)


def _repositories(config: Path) -> dict[str, str]:
    document = _yaml(_read_bytes(config, MAX_CHART_YAML_BYTES))
    entries = document.get("repositories") if isinstance(document, dict) else None
    return {str(e["name"]): str(e["url"]) for e in entries or () if isinstance(e, dict) and e.get("name")
            and e.get("url") and _NAME.match(str(e["name"]))}


def _archive_version(path: Path, chart: str) -> ChartVersion | None:
    """The Chart.yaml of a chart archive (<chart>/Chart.yaml, read without unpacking anything)."""
    import tarfile

    try:
        with tarfile.open(path, "r:gz") as archive:
            member = archive.getmember(f"{chart}/Chart.yaml")
            if not member.isfile() or member.size > MAX_CHART_YAML_BYTES:
                return None
            handle = archive.extractfile(member)
            document = _yaml(handle.read() if handle else None)
    except (OSError, KeyError, tarfile.TarError, EOFError):
        return None
    if not isinstance(document, dict) or document.get("name") != chart or not document.get("version"):
        return None
    return ChartVersion(chart, str(document["version"]), _text(document.get("kubeVersion")), str(path),
                        library=library_type(document.get("type")))


# --- the network --------------------------------------------------------------------------------------

def _from_network(found: ChartVersions, wanted: set[tuple[str, str]], urls: list[str]) -> None:
    import urllib.error  # imported here: a scan without --allow-network never loads the HTTP stack
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor
    def fetch(url: str) -> tuple[str, bytes | None, str | None]:
        index = url.rstrip("/") + "/index.yaml"
        if not index.startswith(("https://", "http://")):
            return url, None, "not an http(s) repository"
        try:
            with urllib.request.urlopen(index, timeout=FETCH_TIMEOUT) as response:  # noqa: S310 (scheme checked)
                body = response.read(MAX_INDEX_BYTES + 1)
        except (OSError, urllib.error.URLError, ValueError) as err:
            return url, None, str(getattr(err, "reason", err))
        if len(body) > MAX_INDEX_BYTES:
            return url, None, f"index.yaml is over {MAX_INDEX_BYTES // 1048576} MiB"
        return url, body, None

    with ThreadPoolExecutor(max_workers=min(8, len(urls) or 1)) as pool:
        for url, body, problem in pool.map(fetch, urls):
            if problem is not None:
                found.notices.append(f"{url}: index.yaml not read ({problem}); its charts' kubeVersion unknown")
            else:
                _read_index(found, wanted, url, body, url.rstrip("/") + "/index.yaml")


def _read_index(found: ChartVersions, wanted: set[tuple[str, str]], url: str, body: bytes | None,
                where: str) -> None:
    document = _yaml(body)
    entries = document.get("entries") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        if body is not None:
            found.notices.append(f"{where}: not a Helm repository index; its charts' kubeVersion unknown")
        return
    key = repository_key(url)
    for chart, versions in entries.items():
        if (key, chart) not in wanted or not isinstance(versions, list):
            continue
        for entry in versions:
            if isinstance(entry, dict) and entry.get("version"):
                found.add(url, ChartVersion(str(chart), str(entry["version"]), _text(entry.get("kubeVersion")),
                                            where, _month(entry.get("created")), library_type(entry.get("type"))))


# --- small helpers ------------------------------------------------------------------------------------

def _read_bytes(path: Path, limit: int) -> bytes | None:
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _yaml(body: bytes | None) -> Any:
    if not body:
        return None
    try:
        return data.parse_yaml(body)
    except Exception:  # noqa: BLE001 - any unreadable index is the same "not read"
        return None


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def _month(value: Any) -> str | None:
    match = re.match(r"^(20\d\d-\d\d)", str(value or ""))
    return match.group(1) if match else None
