#!/usr/bin/env python3
"""A Kustomize-heavy tree: `kubehop scan` against a sequential `kubectl kustomize` loop over the same folders.

    python bench/bench_kustomize.py /work/repos/kubeflow+manifests [--target 1.36] [--rounds 1]

The folders are the kustomizations kubehop's walk finds (components are built only inside the
kustomizations that use them, so they are left out of the loop too). Each round runs the loop and
the scan back to back (kubehop with an empty render cache), so both see the same machine; the
printed ratio is kubehop's wall time over the loop's. Nothing of the tree is copied.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def folders(tree: Path) -> list[str]:
    from scanner.sources.files.walk import KustomizeFolder, walk
    from scanner.sources.kustomize.refs import read_kustomization

    found = [item.path for item in walk([str(tree)]) if isinstance(item, KustomizeFolder)]
    return [folder for folder in found if read_kustomization(folder).document.get("kind") != "Component"]


def loop(command: list[str], paths: list[str]) -> tuple[float, int]:
    failed = 0
    began = time.perf_counter()
    for path in paths:
        done = subprocess.run([*command, path], capture_output=True, stdin=subprocess.DEVNULL)
        failed += done.returncode != 0
    return time.perf_counter() - began, failed


def scan(tree: Path, target: str) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-kustomize-") as cache:
        env["KUBEHOP_CACHE_DIR"] = cache
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "scanner", "scan", "--target", target, "--format", "json",
                               tree.name], cwd=tree.parent, env=env, capture_output=True, text=True)
        return time.perf_counter() - began, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--target", default="1.36")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from scanner.sources.tools.find import kustomize_command

    command = kustomize_command()
    if command is None:
        sys.exit("neither kustomize nor kubectl found: run `kubehop tools install`")
    for name, value in (("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL", command[0]),):
        os.environ[name] = value  # the tool cache may live under the default cache dir
    tree = args.tree.resolve()
    os.chdir(tree.parent)
    paths = folders(Path(tree.name))
    print(f"{tree.name}: {len(paths)} kustomizations, {' '.join(command)}, {os.cpu_count()} CPUs")
    for round_number in range(args.rounds):
        loop_s, failed = loop(command, paths)
        scan_s, code = scan(tree, args.target)
        print(f"  round {round_number + 1}: loop {loop_s:.1f} s ({failed} failed builds), kubehop scan {scan_s:.1f} s "
              f"(exit {code}): ratio {scan_s / loop_s:.2f}x")


if __name__ == "__main__":
    main()
