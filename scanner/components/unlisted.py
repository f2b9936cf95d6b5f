"""What the tree deploys that compat-matrix/ does not know: each is a component with no data.

A chart (a HelmRelease's, an Argo CD source's, a K3s HelmChart's, a Chart.yaml dependency, a
kustomization's helmCharts entry), a remote Kustomize base, a remote Git source a Flux Kustomization
applies, or an operator's image in a plain manifest (components.detect) that no data file names is
still deployed: its support for every hop is unknown, and unknown is never fine. Each becomes a
component of its own whose releases nobody lists, so the component state reports it at every hop
(rule `component/<name>/no-data`) unless the chart's own `kubeVersion` states its range
(components.charts: then it is judged by that).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, Iterable, Sequence
from urllib.parse import urlsplit

from yaml.nodes import MappingNode

from scanner import data
from scanner.components.catalog import Catalog, Component
from scanner.components.chart_pins import ChartPin
from scanner.components.pins import Detection, component_for_chart, origin_of
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.semver import parse_version
from scanner.sources.files.walk import KUSTOMIZATION_FILES

NO_DATA = "no data"  # what a report says of a component kubehop has no data on
# Hosts whose URLs name a repository as owner/name (a remote base is named after the repository).
_HOSTED = re.compile(r"^(?:git::)?(?:[a-z+]+://)?(?:[^@/]+@)?(?:www\.)?"
                     r"(github\.com|gitlab\.com|bitbucket\.org|raw\.githubusercontent\.com)[/:]([^/]+)/([^/?#]+)(.*)$")
_REF = re.compile(r"[?&](?:ref|version)=([^&#]+)")
_RELEASE_PATH = re.compile(r"/releases/download/([^/]+)/")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 100
_REMOTE = ("http://", "https://", "git::", "ssh://", "git@", "github.com/", "gitlab.com/", "bitbucket.org/")


def unlisted_charts(charts: Iterable[ChartPin], catalog: Catalog) -> list[Detection]:
    """The chart pins of charts no data file names. A chart in the tree (named by a path in a Git source,
    a `file://` dependency: kubehop renders it, it is the tree's own) is not a component, nor is a
    library chart (components.library: it deploys nothing of its own)."""
    found = []
    for pin in charts:
        if pin.library or "/" in pin.chart or pin.chart.startswith(".") \
                or (pin.repository or "").startswith(("tree:", "file://")):
            continue
        repository = None if pin.git else pin.repository
        if component_for_chart(catalog, pin.chart, repository) is not None:
            continue
        # A chart named like a component's, from a repository its data does not list: a fork, a chart
        # of someone else's (components.repositories); or two data files name it, from neither's.
        named = repository and any(c.has_chart(pin.chart) for c in catalog.components.values())
        what = f"{pin.what} from {repository}, a repository no data file lists for chart {pin.chart}" if named else pin.what
        found.append(Detection(pin.chart, pin.pin, (), pin.origin, "chart", what))
    return found


def unlisted_remotes(documents: Iterable[tuple[str, Any]], catalog: Catalog) -> list[Detection]:
    """Remote resources of kustomizations that no data file names (a known one is read by file_pins)."""
    found = []
    for path, node in documents:
        if not isinstance(node, MappingNode) or os.path.basename(path) not in KUSTOMIZATION_FILES:
            continue
        for key in ("resources", "bases", "components"):
            for item in sequence_items(mapping_get(node, key)):
                url = scalar(item) or ""
                if not url.startswith(_REMOTE) or known_url(url, catalog):
                    continue
                name = remote_name(url)
                if name:
                    found.append(Detection(name, remote_ref(url) or "*", (), origin_of(path, item), "kustomize",
                                           f"remote resource {url}"))
    return found


def unlisted_urls(urls: Iterable[tuple[str, Any]], catalog: Catalog,
                  what: str = "Talos extraManifests URL") -> list[Detection]:
    """The release URLs Talos applies (cluster.extraManifests) of repositories no data file names, each
    at the release it names (a known one is read by file_pins.manifest_url_pins); a URL at a branch is
    no release."""
    found = []
    for url, origin in urls:
        ref = remote_ref(url) if url.startswith(_REMOTE) else None
        if ref is None or parse_version(ref) is None:
            continue  # a branch (`main`): a file that moves with it, often the tree's own, no release
        name = remote_name(url) if not known_url(url, catalog) else None
        if name:
            found.append(Detection(name, ref, (), origin, "url", f"{what} {url}"))
    return found


def known_url(url: str, catalog: Catalog) -> Component | None:
    """The component whose repository a remote URL is in (its kustomize_urls; a raw.githubusercontent.com
    or git URL of that repository too)."""
    repository = repository_of(url)
    return next((c for c in catalog.components.values()
                 if any(f in url or (repository and repository_of(f) == repository) for f in c.kustomize_urls)),
                None)


def repository_of(url: str) -> str | None:
    """"github.com/owner/name" for a URL of a hosted repository (raw.githubusercontent.com files are
    GitHub's; `.git` and case dropped), else None."""
    hosted = _HOSTED.match(url)
    if not hosted:
        return None
    host = "github.com" if hosted.group(1) == "raw.githubusercontent.com" else hosted.group(1)
    return f"{host}/{hosted.group(2)}/{hosted.group(3).removesuffix('.git')}".lower()


def remote_name(url: str) -> str | None:
    """The component a remote resource installs, named after its repository ("github.com/rancher/
    system-upgrade-controller?ref=v0.13.4": system-upgrade-controller), or after its top folder in a
    catalog repository (rules/kustomize.yaml); another host: host/first folder."""
    hosted = _HOSTED.match(url)
    if hosted:
        if repository_of(url) in _catalogs():
            path = re.split(r"[?#]", hosted.group(4), maxsplit=1)[0]
            item = next((p for p in path.split("/") if p), "")
            if item and not item.startswith("."):
                return item
        return hosted.group(3).removesuffix(".git") or None
    parts = urlsplit(url)
    if not parts.netloc:
        return None
    first = next((p for p in parts.path.split("/") if p), "")
    return f"{parts.netloc}/{first}" if first else parts.netloc


@functools.cache
def _catalogs() -> frozenset[str]:
    return frozenset(entry["repository"] for entry in data.load("rules/kustomize.yaml")["remote_catalogs"])


def remote_ref(url: str) -> str | None:
    """The version a remote resource names as written: ?ref=, a release download's tag, the ref of a
    raw.githubusercontent.com path ("refs/tags/v0.3.0" is v0.3.0). None: the default branch."""
    for pattern in (_REF, _RELEASE_PATH):
        m = pattern.search(url)
        if m:
            return m.group(1)
    if "/releases/latest/download/" in url:
        return "latest"
    hosted = _HOSTED.match(url)
    if hosted and hosted.group(1) == "raw.githubusercontent.com":
        rest = [p for p in hosted.group(4).split("/") if p]
        if rest[:2] == ["refs", "tags"] and len(rest) > 2:
            return rest[2]
        return rest[0] if rest else None
    return None


def no_data_components(detections: Sequence[Detection], taken: Iterable[str]) -> tuple[dict[str, Component],
                                                                                      list[Detection]]:
    """A component with no releases for each name the unlisted pins give, and those pins renamed to it
    when a name is already a component's (a chart named like another component's file)."""
    taken = set(taken)
    components: dict[str, Component] = {}
    renamed = []
    for detection in detections:
        name = _SAFE_NAME.sub("-", detection.component)[:_MAX_NAME] or "unnamed"  # it becomes part of a rule id
        if name in taken:
            name = f"{name} ({detection.source})"
        if name not in components:
            components[name] = Component(name, name, None, (), no_data=True)
        renamed.append(detection if name == detection.component else Detection(
            name, detection.pin, (), detection.origin, detection.source, detection.what))
    return components, renamed

