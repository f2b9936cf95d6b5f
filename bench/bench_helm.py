#!/usr/bin/env python3
"""Helm-heavy scan: N real charts rendered with helm for one target, cold cache then warm cache.

    python bench/bench_helm.py                      # 50 charts of ../shared/corpora/helm-charts-2019/stable
    python bench/bench_helm.py --charts 100 --target 1.25 --corpus /path/to/stable

The charts are read in place (never copied). Prints the wall time of a whole `kubehop scan` with an
empty render cache and again with the cache it left, plus what was rendered and found.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "helm-charts-2019" / "stable"


def scan(charts: list[Path], target: str, cache: str) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "KUBEHOP_CACHE_DIR": cache}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scanner", "scan", "--format", "json", "--target", target,
                           *map(str, charts)], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"kubehop failed ({done.returncode}): {done.stderr}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--charts", type=int, default=50)
    parser.add_argument("--target", default="1.25")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from scanner.sources.tools import find_tool

    helm = find_tool("helm")
    if helm is None:
        sys.exit("helm not found: run scripts/get-tools.sh or set KUBEHOP_HELM")
    os.environ["KUBEHOP_HELM"] = helm  # the tool cache may live under the default cache dir
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is not there (it is in ../shared, not in a user's clone)")
    charts = sorted(p.parent for p in args.corpus.glob("*/Chart.yaml"))[:args.charts]
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-cache-") as cache:
        cold, report = scan(charts, args.target, cache)
        warm, again = scan(charts, args.target, cache)
    assert report["findings"] == again["findings"], "a warm scan must find what a cold one found"
    summary = report["summary"]
    print(f"{len(charts)} charts from {args.corpus}, target {args.target}, helm {helm}, {os.cpu_count()} CPUs")
    print(f"  rendered objects {summary['objects']}, template files {summary['files']}, "
          f"findings {len(report['findings'])}, charts not rendered {summary['unrendered']}")
    print(f"  cold cache: {cold:.2f} s ({cold / len(charts) * 1000:.0f} ms per chart)")
    print(f"  warm cache: {warm:.2f} s")


if __name__ == "__main__":
    main()
