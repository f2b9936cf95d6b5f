"""A loopback stand-in for a Kubernetes API server's discovery, for exact Helm Capabilities.

`helm template` alone fills `.Capabilities.APIVersions` with its built-in list, which still names
long-removed versions (`--api-versions` only adds to it). When helm talks to a server it asks that
server's discovery instead. This server answers discovery with what the target minor serves (from
kubehop's served-API data, plus the APIs of CRDs in the scanned tree) and "not found" to everything
else, so templates render as they would against a real cluster of that minor. It binds 127.0.0.1
only (or serves on a socket listening there that it is given: one in the network namespace helm runs
in, `tools/sandbox.py`) and lives as long as its `with` block.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterable

from scanner.versions import Minor

# Discovery must name a resource for each kind; nothing here ever reads one back, so any unique
# name works and no real plural is claimed.
_VERBS = ["get", "list", "create", "update", "patch", "delete"]


def discovery_documents(minor: Minor, served: Iterable[tuple[str, str]]) -> dict[str, dict]:
    """URL path -> JSON body for /version, /api, /apis and every group-version (the classic
    discovery, one request per group-version)."""
    kinds = _kinds_by_api_version(served)
    documents: dict[str, dict] = {
        "/version": {"major": str(minor.major), "minor": str(minor.minor),
                     "gitVersion": f"v{minor}.0", "platform": "linux/amd64"},
        "/api": {"kind": "APIVersions", "versions": ["v1"] if "v1" in kinds else [],
                 "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    }
    for api_version in kinds:
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        documents[path] = _resource_list(api_version, kinds[api_version])
    documents["/apis"] = {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": group, "versions": [_group_version(group, v) for v in versions],
         "preferredVersion": _group_version(group, versions[0])}
        for group, versions in _groups(kinds).items() if group]}
    return documents


def aggregated_documents(served: Iterable[tuple[str, str]], api_version: str) -> dict[str, dict]:
    """/api and /apis as aggregated discovery (`apidiscovery.k8s.io/v2` or `v2beta1`): everything in
    two responses, where the classic form takes one request per group-version. client-go asks for
    it first and asks again after every kind it cannot map, which a chart of removed APIs does often."""
    kinds = _kinds_by_api_version(served)
    items: dict[str, list[dict]] = {"": [], "apis": []}
    for group, versions in _groups(kinds).items():
        item = {"metadata": {"name": group}, "versions": [
            {"version": version, "freshness": "Current", "resources": [
                {"resource": kind.lower(), "singularResource": kind.lower(), "scope": "Namespaced",
                 "responseKind": {"group": group, "version": version, "kind": kind}, "verbs": _VERBS}
                for kind in kinds[f"{group}/{version}" if group else version]]}
            for version in versions]}
        items["apis" if group else ""].append(item)
    return {path: {"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items[key]}
            for path, key in (("/api", ""), ("/apis", "apis"))}


def _kinds_by_api_version(served: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    kinds: dict[str, set[str]] = defaultdict(set)
    for api_version, kind in served:
        kinds[api_version].add(kind)
    return {api_version: sorted(kinds[api_version]) for api_version in sorted(kinds)}


def _groups(kinds: dict[str, list[str]]) -> dict[str, list[str]]:
    """Group ("" for the core group) -> its versions, the preferred first (as Kubernetes orders them)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for api_version in kinds:
        group, _, version = api_version.rpartition("/")
        groups[group].append(version)
    return {group: sorted(versions, key=_version_priority) for group, versions in sorted(groups.items())}


def _version_priority(version: str) -> tuple:
    """Kubernetes' version order: GA before beta before alpha, higher numbers first; others last."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)
    major, stage, number = match.groups()
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -int(major), -int(number or 0), version)


def _group_version(group: str, version: str) -> dict:
    return {"groupVersion": f"{group}/{version}", "version": version}


def _resource_list(api_version: str, kinds: list[str]) -> dict:
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version, "resources": [
        {"name": kind.lower(), "singularName": kind.lower(), "namespaced": True, "kind": kind,
         "verbs": _VERBS} for kind in kinds]}


_NOT_FOUND = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "reason": "NotFound", "code": 404, "message": "not found"}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: helm asks for every group-version at once
    # Small replies on a kept-alive connection: without this, Nagle's algorithm meets the client's
    # delayed ACK and every request waits ~40 ms (it tripled a render's time).
    disable_nagle_algorithm = True
    documents: dict[str, bytes] = {}
    aggregated: dict[tuple[str, str], bytes] = {}  # (path, apidiscovery version) -> body

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?")[0].rstrip("/") or "/"
        version = _aggregated_version(self.headers.get("Accept", ""))
        if version and (path, version) in self.aggregated:
            self._reply(200, self.aggregated[path, version], f"application/json;g={_AGGREGATED_GROUP};"
                                                               f"v={version};as=APIGroupDiscoveryList")
            return
        body = self.documents.get(path)
        self._reply(200 if body else 404, body or _NOT_FOUND)

    def _reply(self, code: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PUT = do_PATCH = do_DELETE = lambda self: self._reply(404, _NOT_FOUND)  # noqa: E731

    def log_message(self, format: str, *args) -> None:  # quiet: helm's errors say enough
        pass


_AGGREGATED_GROUP = "apidiscovery.k8s.io"
_AGGREGATED_VERSIONS = ("v2", "v2beta1")  # client-go 0.30+ asks for v2 first; helm 3.13-3.15 knows v2beta1 only


def _aggregated_version(accept: str) -> str | None:
    """The first aggregated-discovery version the client accepts, in its own order of preference."""
    for media_type in accept.split(","):
        params = dict(part.strip().partition("=")[::2] for part in media_type.split(";")[1:])
        if (params.get("g"), params.get("as")) == (_AGGREGATED_GROUP, "APIGroupDiscoveryList") \
                and params.get("v") in _AGGREGATED_VERSIONS:
            return params["v"]
    return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 drops helm's burst of connections (1 s retries)


class FakeDiscovery:
    """`with FakeDiscovery(minor, served) as kubeconfig:` a kubeconfig file pointing helm at it;
    `listener`: a socket already listening on 127.0.0.1 to serve on, instead of one of its own."""

    def __init__(self, minor: Minor, served: Iterable[tuple[str, str]], listener: socket.socket | None = None):
        served = list(served)
        documents = {path: json.dumps(doc).encode() for path, doc in discovery_documents(minor, served).items()}
        aggregated = {(path, version): json.dumps(doc).encode() for version in _AGGREGATED_VERSIONS
                      for path, doc in aggregated_documents(served, f"{_AGGREGATED_GROUP}/{version}").items()}
        self._handler = type("Handler", (_Handler,), {"documents": documents, "aggregated": aggregated})
        self._listener = listener
        self._server: _Server | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> str:
        if self._listener is None:
            self._server = _Server(("127.0.0.1", 0), self._handler)
        else:
            self._server = _Server(("127.0.0.1", 0), self._handler, bind_and_activate=False)
            self._server.socket.close()
            self._server.socket, self._server.server_address = self._listener, self._listener.getsockname()
        # shutdown() waits for serve_forever's next poll: at the default 0.5 s every scan that
        # rendered paid up to half a second at its end.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                         name="kubehop-discovery", daemon=True).start()
        self._folder = tempfile.TemporaryDirectory(prefix="kubehop-discovery-")
        kubeconfig = os.path.join(self._folder.name, "kubeconfig")
        with open(kubeconfig, "w", encoding="utf-8") as handle:
            json.dump(_kubeconfig(self._server.server_address[1]), handle)
        return kubeconfig

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._folder.cleanup()


def _kubeconfig(port: int) -> dict:
    return {"apiVersion": "v1", "kind": "Config", "current-context": "kubehop",
            "clusters": [{"name": "kubehop", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
            "users": [{"name": "kubehop", "user": {}}],
            "contexts": [{"name": "kubehop", "context": {"cluster": "kubehop", "user": "kubehop",
                                                          "namespace": "default"}}]}
