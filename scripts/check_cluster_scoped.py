"""Check rules/cluster-scoped.yaml against the paths Kubernetes serves each built-in kind at.

A kind is cluster-scoped when none of its API paths has a `namespaces/{namespace}` segment. The
paths come from Kubernetes' OpenAPI data (api/openapi-spec in kubernetes/kubernetes), as generated
into the PyPI package `kubernetes` (the official Python client, one major per minor: 37.x is 1.37):
every API module's methods name their resource path and, in their docstring, their kind. Several
client releases are read so that kinds served only by older minors (PodSecurityPolicy, ClusterCIDR,
ResourceClass) stay listed. The wheels are downloaded with `pip download --no-deps` into a cache
(default ~/.cache/kubehop/kubernetes-client/) and read straight from the archive; nothing is
installed and the scanner never imports them. A development tool, like gen_served_apis.py.

    python scripts/check_cluster_scoped.py            # exit 1 when the file and the paths differ
    python scripts/check_cluster_scoped.py --versions 24.2.0 37.0.2
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "rules" / "cluster-scoped.yaml"
# 24.x is the last client with policy/v1beta1 (1.24); the newest one has the newest minor's kinds.
DEFAULT_VERSIONS = ("24.2.0", "26.1.0", "28.1.0", "30.1.0", "33.1.0", "37.0.2")
_KIND = re.compile(r"(?:create an?|list or watch objects of kind|list objects of kind) ([A-Z]\w*)")
_PATH = re.compile(r"'(/apis?/[^' ]+)'")
_SUFFIXES = ("_serialize", "_with_http_info", "_without_preload_content")


def _method_base(name: str) -> str:
    name = name.lstrip("_")
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def _group_and_scope(path: str) -> tuple[str, bool] | None:
    """(group, namespaced) of a collection or object path; None for subresources and watch paths."""
    parts = [p for p in path.split("/") if p]
    if "watch" in parts or len(parts) < 3 or "{" in parts[1]:
        return None
    group = "core" if parts[0] == "api" else parts[1]
    resource_at = 2 if parts[0] == "api" else 3
    namespaced = parts[resource_at:resource_at + 2] == ["namespaces", "{namespace}"]
    if namespaced:
        resource_at += 2
    if len(parts) > resource_at + 2:
        return None  # pods/{name}/eviction and the like
    return group, namespaced


def scopes(wheel: Path) -> dict[tuple[str, str], set[bool]]:
    """(group, kind) -> the namespaced flags of its paths, from one client wheel."""
    found: dict[tuple[str, str], set[bool]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if not re.fullmatch(r"kubernetes/client/api/\w+_api\.py", member):
                continue
            kinds: dict[str, str] = {}
            paths: dict[str, list[str]] = {}
            for chunk in archive.read(member).decode().split("\n    def ")[1:]:
                base = _method_base(chunk.split("(", 1)[0])
                if kind := _KIND.search(chunk):
                    kinds.setdefault(base, kind.group(1))
                paths.setdefault(base, []).extend(_PATH.findall(chunk))
            for base, kind in kinds.items():
                for path in paths.get(base, ()):
                    if (scope := _group_and_scope(path)) is not None:
                        found.setdefault((scope[0], kind), set()).add(scope[1])
    return found


def _wheel(version: str, cache: Path) -> Path:
    wheel = cache / f"kubernetes-{version}-py2.py3-none-any.whl"
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache),
                        f"kubernetes=={version}"], check=True)
    return wheel


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="+", default=DEFAULT_VERSIONS)
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get(
        "KUBEHOP_CLIENT_CACHE", Path.home() / ".cache" / "kubehop" / "kubernetes-client")))
    args = parser.parse_args()
    served: dict[tuple[str, str], set[bool]] = {}
    for version in args.versions:
        for key, flags in scopes(_wheel(version, args.cache)).items():
            served.setdefault(key, set()).update(flags)
    cluster = {key for key, flags in served.items() if flags == {False}}
    listed = {(entry["group"], kind) for entry in yaml.safe_load(DATA.read_text())["kinds"]
              for kind in entry["kinds"]}
    missing, extra = sorted(cluster - listed), sorted(listed - cluster)
    for group, kind in missing:
        print(f"missing: {group} {kind} (served only without a namespace)")
    for group, kind in extra:
        namespaced = served.get((group, kind))
        print(f"listed but {'namespaced' if namespaced else 'not found'}: {group} {kind}")
    if not missing and not extra:
        print(f"{DATA.relative_to(ROOT)} agrees with the paths of {len(cluster)} cluster-scoped kinds "
              f"(clients {', '.join(args.versions)})")
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
