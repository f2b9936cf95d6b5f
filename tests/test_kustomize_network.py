"""kustomize never reaches the network without --allow-network: every field it can fetch is found before
the build, and the build itself runs where no socket can be opened (a loopback server must see nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import kustomize_or_skip, run_kubehop
from scanner.scan import ScanOptions
from scanner.sources import collect
from scanner.sources.kustomize import build as kustomize
from scanner.sources.tools import no_network
from scanner.sources.kustomize.refs import Closure

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        body = CONFIG_MAP.format(name="fetched").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    handler = type("Handler", (_Recorder,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.seen
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def kustomize_env(monkeypatch) -> dict[str, str]:
    command = kustomize_or_skip()
    name = "KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL"
    monkeypatch.setenv(name, command[0])
    return {name: command[0]}


# Each field kustomize can fetch from, as a kustomization fragment naming {url}.
FIELDS = {
    "resources": "resources:\n  - cm.yaml\n  - {url}/r.yaml\n",
    "bases": "resources:\n  - cm.yaml\nbases:\n  - {url}/base.git\n",
    "components": "resources:\n  - cm.yaml\ncomponents:\n  - {url}/component\n",
    "crds": "resources:\n  - cm.yaml\ncrds:\n  - {url}/crd.json\n",
    "configurations": "resources:\n  - cm.yaml\nconfigurations:\n  - {url}/conf.yaml\n",
    "openapi.path": "resources:\n  - cm.yaml\nopenapi:\n  path: {url}/schema.json\n",
    "generators": "resources:\n  - cm.yaml\ngenerators:\n  - {url}/gen.yaml\n",
    "transformers": "resources:\n  - cm.yaml\ntransformers:\n  - {url}/t.yaml\n",
    "validators": "resources:\n  - cm.yaml\nvalidators:\n  - {url}/v.yaml\n",
    "inline transformer path": ("resources:\n  - cm.yaml\ntransformers:\n  - |-\n    apiVersion: builtin\n"
                                "    kind: PatchTransformer\n    metadata:\n      name: p\n    path: {url}/p.yaml\n"),
    "patchesStrategicMerge": "resources:\n  - cm.yaml\npatchesStrategicMerge:\n  - {url}/psm.yaml\n",
    "patches.path": "resources:\n  - cm.yaml\npatches:\n  - path: {url}/patch.yaml\n",
    "patchesJson6902.path": ("resources:\n  - cm.yaml\npatchesJson6902:\n  - target: {{kind: ConfigMap, name: x}}\n"
                             "    path: {url}/j.yaml\n"),
    "replacements.path": "resources:\n  - cm.yaml\nreplacements:\n  - path: {url}/rep.yaml\n",
    "configMapGenerator.files": ("resources:\n  - cm.yaml\nconfigMapGenerator:\n  - name: g\n"
                                 "    files:\n      - key={url}/f.txt\n"),
    "configMapGenerator.envs": "resources:\n  - cm.yaml\nconfigMapGenerator:\n  - name: g\n    envs:\n      - {url}/e\n",
    "secretGenerator.env": "resources:\n  - cm.yaml\nsecretGenerator:\n  - name: s\n    env: {url}/e\n",
    "helmCharts.valuesFile": "resources:\n  - cm.yaml\nhelmCharts:\n  - name: c\n    valuesFile: {url}/v.yaml\n",
    "a field kubehop does not know": "resources:\n  - cm.yaml\nsomeFutureField:\n  source: {url}/x.yaml\n",
}


@pytest.mark.parametrize("field", FIELDS)
def test_a_remote_reference_in_any_field_is_listed_and_never_fetched(field, tmp_path, server, kustomize_env):
    url, seen = server
    (tmp_path / "cm.yaml").write_text(CONFIG_MAP.format(name="local"))
    (tmp_path / "kustomization.yaml").write_text(FIELDS[field].format(url=url))
    proc = run_kubehop("scan", "--format", "json", "--target", "1.30", str(tmp_path), env=kustomize_env)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    reasons = [u["reason"] for u in report["unrendered"] if u["file"] == str(tmp_path)]
    assert len(reasons) == 1 and url in reasons[0] and "--allow-network" in reasons[0]
    assert seen == []


def test_a_local_folder_named_like_a_remote_base_is_remote(tmp_path, kustomize_env):
    """kustomize reads github.com/org/repo as a git URL even when a folder of that name exists."""
    app = tmp_path / "app"
    local = app / "github.com" / "org" / "repo"
    local.mkdir(parents=True)
    (local / "kustomization.yaml").write_text("resources:\n  - cm.yaml\n")
    (local / "cm.yaml").write_text(CONFIG_MAP.format(name="inner"))
    (app / "kustomization.yaml").write_text("resources:\n  - github.com/org/repo\n")
    found = collect([str(app)], options=ScanOptions())
    (entry,) = [u for u in found.unrendered if u.path == str(app)]
    assert "resources github.com/org/repo" in entry.message


def test_with_allow_network_the_server_is_reached(tmp_path, server, kustomize_env):
    """The counterpart of the tests above: the loopback server does see kustomize when it may go out."""
    url, seen = server
    (tmp_path / "kustomization.yaml").write_text(f"resources:\n  - {url}/r.yaml\n")
    found = collect([str(tmp_path)], options=ScanOptions(allow_network=True))
    assert seen == ["/r.yaml"]
    assert [m.name for m in found.manifests if m.kind == "ConfigMap"] == ["fetched"]


@pytest.mark.parametrize("reference", ["{url}/r.yaml", "{url}/org/repo.git//app?ref=main"])
def test_kustomize_cannot_reach_the_network_even_past_kubehops_reading(reference, tmp_path, server, kustomize_env,
                                                                       monkeypatch):
    """The last word: with the reading before the build switched off, kustomize (and the git it runs) still
    cannot open a socket, loopback included."""
    if not no_network.filtered():
        pytest.skip(f"no seccomp filter here ({no_network.isolation()})")
    url, seen = server
    monkeypatch.setattr(kustomize, "closure", lambda folder, root: Closure(folders=[folder]))
    (tmp_path / "cm.yaml").write_text(CONFIG_MAP.format(name="local"))
    (tmp_path / "kustomization.yaml").write_text(f"resources:\n  - cm.yaml\n  - {reference.format(url=url)}\n")
    found = collect([str(tmp_path)], options=ScanOptions())
    assert seen == []
    (entry,) = found.unrendered
    assert "kustomize tried to reach the network" in entry.message or "not built" in entry.message
    assert not [d for d in found.diagnostics if d.level == "error"]


def test_a_tool_run_without_network_cannot_open_a_socket_but_runs(tmp_path):
    if not no_network.filtered():
        pytest.skip(f"no seccomp filter here ({no_network.isolation()})")
    probe = "import socket\ntry:\n socket.socket()\nexcept PermissionError:\n print('refused')\n"
    done = no_network.run([sys.executable, "-c", probe], dict(os.environ), 30)
    assert (done.returncode, done.stdout) == (0, "refused\n")
    with pytest.raises(subprocess.TimeoutExpired):
        no_network.run([sys.executable, "-c", "import time; time.sleep(5)"], dict(os.environ), 0.5)
    with pytest.raises(OSError):
        no_network.run([str(tmp_path / "nothing")], dict(os.environ), 30)


def test_the_environment_closes_proxies_and_git_transports():
    env = no_network.environment({"NO_PROXY": "127.0.0.1", "HTTPS_PROXY": "http://proxy.example:3128"})
    assert "NO_PROXY" not in env and env["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    assert (env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"]) == ("protocol.allow", "never")
