"""A loopback stand-in for a Kubernetes API server's discovery, for exact Helm Capabilities.

`helm template` alone fills `.Capabilities.APIVersions` with its built-in list, which still names
long-removed versions (`--api-versions` only adds to it). When helm talks to a server it asks that
server's discovery instead. This server answers discovery with what the target minor serves (from
kubehop's served-API data, plus the APIs of CRDs in the scanned tree) and "not found" to everything
else, so templates render as they would against a real cluster of that minor. It binds 127.0.0.1
only and lives as long as its `with` block.
"""

from __future__ import annotations

import json
import os
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
    """URL path -> JSON body for /version, /api, /apis and every group-version."""
    kinds: dict[str, list[str]] = defaultdict(list)
    for api_version, kind in served:
        kinds[api_version].append(kind)
    documents: dict[str, dict] = {
        "/version": {"major": str(minor.major), "minor": str(minor.minor),
                     "gitVersion": f"v{minor}.0", "platform": "linux/amd64"},
        "/api": {"kind": "APIVersions", "versions": ["v1"] if "v1" in kinds else [],
                 "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    }
    groups: dict[str, list[str]] = defaultdict(list)
    for api_version in sorted(kinds):
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        documents[path] = _resource_list(api_version, kinds[api_version])
        if "/" in api_version:
            group, version = api_version.split("/")
            groups[group].append(version)
    documents["/apis"] = {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": group, "versions": [_group_version(group, v) for v in versions],
         "preferredVersion": _group_version(group, versions[-1])}
        for group, versions in sorted(groups.items())]}
    return documents


def _group_version(group: str, version: str) -> dict:
    return {"groupVersion": f"{group}/{version}", "version": version}


def _resource_list(api_version: str, kinds: list[str]) -> dict:
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version, "resources": [
        {"name": kind.lower(), "singularName": kind.lower(), "namespaced": True, "kind": kind,
         "verbs": _VERBS} for kind in sorted(kinds)]}


_NOT_FOUND = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "reason": "NotFound", "code": 404, "message": "not found"}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: helm asks for every group-version at once
    documents: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.documents.get(self.path.split("?")[0].rstrip("/") or "/")
        self._reply(200 if body else 404, body or _NOT_FOUND)

    def _reply(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PUT = do_PATCH = do_DELETE = lambda self: self._reply(404, _NOT_FOUND)  # noqa: E731

    def log_message(self, format: str, *args) -> None:  # quiet: helm's errors say enough
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 drops helm's burst of connections (1 s retries)


class FakeDiscovery:
    """`with FakeDiscovery(minor, served) as kubeconfig:` a kubeconfig file pointing helm at it."""

    def __init__(self, minor: Minor, served: Iterable[tuple[str, str]]):
        documents = {path: json.dumps(doc).encode() for path, doc in discovery_documents(minor, served).items()}
        self._handler = type("Handler", (_Handler,), {"documents": documents})
        self._server: _Server | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> str:
        self._server = _Server(("127.0.0.1", 0), self._handler)
        threading.Thread(target=self._server.serve_forever, name="kubehop-discovery", daemon=True).start()
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
