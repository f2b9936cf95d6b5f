#!/usr/bin/env python3
"""Helm-heavy scan against helm itself: N real charts, a cold `kubehop scan` beside a plain
sequential `helm template` loop over the same charts, timed in turn in one run.

    python bench/bench_helm.py                            # all charts of ../shared/corpora/helm-charts-2019/stable
    python bench/bench_helm.py --charts 50 --target 1.25 --rounds 3
    python bench/bench_helm.py --command plan --from 1.31 # `kubehop plan` instead of `kubehop scan`
    python bench/bench_helm.py --kubehop /path/to/other/checkout   # e.g. the code before a change
    python bench/bench_helm.py --against /path/to/other/checkout   # both, side by side in each round

Each round runs the helm loop (`helm template x CHART` for one chart after another, the way a
person checks charts by hand), then kubehop with an empty render cache, then kubehop again with
the cache it left. Printed per round: the three wall times and the ratio cold / helm loop; then
the median ratio. With --against, the other checkout runs cold in each round too, right after this
one, and the ratio this / that is printed. The charts are read in place (never copied).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "helm-charts-2019" / "stable"


def helm_loop(helm: str, charts: list[Path]) -> float:
    start = time.perf_counter()
    for chart in charts:
        subprocess.run([helm, "template", "x", str(chart)], capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def kubehop(args: argparse.Namespace, charts: list[Path], cache: str, checkout: Path | None = None) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(checkout or args.kubehop), "NO_COLOR": "1", "KUBEHOP_CACHE_DIR": cache}
    command = [args.command, "--format", "json", "--target", args.target]
    if args.command == "plan":
        command += ["--from", args.current]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scanner", *command, *map(str, charts)], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"kubehop failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--charts", type=int, default=0, help="the first N charts (default: all)")
    parser.add_argument("--target", default="1.36")
    parser.add_argument("--from", dest="current", default="1.31", help="the cluster's minor, for --command plan")
    parser.add_argument("--command", choices=("scan", "plan"), default="scan")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--kubehop", type=Path, default=REPO, help="the checkout whose kubehop runs")
    parser.add_argument("--against", type=Path, help="another checkout, timed cold in the same rounds")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from scanner.sources.tools.find import find_tool, tool_version

    helm = find_tool("helm")
    if helm is None:
        sys.exit("helm not found: run `kubehop tools install` or set KUBEHOP_HELM")
    os.environ["KUBEHOP_HELM"] = helm  # the tool cache may live under the default cache dir
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is not there (it is in ../shared, not in a user's clone)")
    charts = sorted(p.parent for p in args.corpus.glob("*/Chart.yaml"))[:args.charts or None]
    print(f"{len(charts)} charts from {args.corpus}; kubehop {args.command} --target {args.target} from "
          f"{args.kubehop}; helm {tool_version(helm)} ({helm}); {os.cpu_count()} CPUs")
    ratios, against = [], []
    for round_ in range(1, args.rounds + 1):
        loop = helm_loop(helm, charts)
        with tempfile.TemporaryDirectory(prefix="kubehop-bench-cache-") as cache:
            cold, report = kubehop(args, charts, cache)
            warm, again = kubehop(args, charts, cache)
        assert report.get("findings") == again.get("findings"), "a warm run must find what a cold one found"
        ratios.append(cold / loop)
        print(f"  round {round_}: helm loop {loop:6.2f} s   kubehop cold {cold:6.2f} s   warm {warm:6.2f} s   "
              f"cold / helm loop {cold / loop:.2f}")
        if args.against:
            with tempfile.TemporaryDirectory(prefix="kubehop-bench-cache-") as cache:
                other, theirs = kubehop(args, charts, cache, args.against)
            assert report.get("findings") == theirs.get("findings"), "both checkouts must find the same"
            against.append(cold / other)
            print(f"           {args.against}: cold {other:6.2f} s   this / that {cold / other:.2f}")
    if args.command == "scan":
        summary = report["summary"]
        print(f"  rendered objects {summary['objects']}, template files {summary['files']}, "
              f"findings {len(report['findings'])}, charts not rendered {summary['unrendered']}")
    print(f"median cold / helm loop: {statistics.median(ratios):.2f}")
    if against:
        print(f"median cold, this / {args.against}: {statistics.median(against):.2f}")


if __name__ == "__main__":
    main()
