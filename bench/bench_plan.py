#!/usr/bin/env python3
"""`kubehop plan` against `kubehop scan` of the same tree, interleaved in one run: what plan costs beyond
the analysis it is a view of (issue 27: no more than the scan).

    python bench/bench_plan.py                                  # 60 charts of the 2019 corpus, warm render cache
    python bench/bench_plan.py --rounds 9 /tmp/kubehop-corpus   # a plain corpus (bench/make_corpus.py)
    python bench/bench_plan.py --from '' ../repos/OWNER+NAME    # a tree that says its own current minor
    python bench/bench_plan.py --against /path/to/other/checkout

Both commands get the same paths, --target and --from (none with --from ''), and print their text
report. One run of each first fills the render cache (a fresh one, in a temporary folder) and the
bytecode cache, so every counted run renders nothing, as a second run on a person's machine. Each
round runs scan and plan, in turn (the first of the two alternates), and takes the ratio plan / scan
of the pair's wall and processor seconds (the process and its children's); with --against, the
other checkout's pair in the same round. Printed: each round, then the median ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "helm-charts-2019" / "stable"
_PYCACHE = tempfile.mkdtemp(prefix="kubehop-bench-pycache-")


def timed(command: list[str], checkout: Path, cache: str) -> tuple[float, float]:
    """Wall and processor seconds of one whole process (its children included)."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1", "KUBEHOP_CACHE_DIR": cache,
           "PYTHONPYCACHEPREFIX": _PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed kubehop has its bytecode cached
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # In the checkout: `python -m` puts the working directory first on the path, before PYTHONPATH.
    done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, cwd=checkout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(command[3:5])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pair(args: argparse.Namespace, paths: list[str], checkout: Path, cache: str, plan_first: bool) -> tuple:
    """(plan wall, plan cpu), (scan wall, scan cpu): one after the other."""
    minors = ["--target", args.target] + (["--from", args.current] if args.current else [])
    runs = {c: [sys.executable, "-m", "scanner", c, *minors, *paths] for c in ("plan", "scan")}
    order = ("plan", "scan") if plan_first else ("scan", "plan")
    times = {c: timed(runs[c], checkout, cache) for c in order}
    return times["plan"], times["scan"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="what both read (default: the first --charts charts of --corpus)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--charts", type=int, default=60)
    parser.add_argument("--target", default="1.36")
    parser.add_argument("--from", dest="current", default="1.31", help="the cluster's minor ('': read from the tree)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout, its pair timed in the same rounds")
    args = parser.parse_args()
    paths = [os.path.abspath(p) for p in args.paths] or \
        [str(p.parent) for p in sorted(args.corpus.resolve().glob("*/Chart.yaml"))[:args.charts]]
    if not paths:
        sys.exit(f"no charts under {args.corpus} (it is in ../shared, not in a user's clone): give PATHS")
    checkouts = [REPO] + ([args.against.resolve()] if args.against else [])
    ratios: dict[Path, tuple[list[float], list[float]]] = {c: ([], []) for c in checkouts}
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-cache-") as cache:
        tools = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubehop" / "tools"
        if tools.is_dir():
            os.symlink(tools, Path(cache) / "tools")
        for checkout in checkouts:
            pair(args, paths, checkout, cache, True)  # warm-up: renders, bytecode, the file cache
        print(f"{len(paths)} paths; plan / scan, --target {args.target}"
              + (f" --from {args.current}" if args.current else ""))
        for round_ in range(1, args.rounds + 1):
            for checkout in checkouts:
                (p_wall, p_cpu), (s_wall, s_cpu) = pair(args, paths, checkout, cache, round_ % 2 == 1)
                ratios[checkout][0].append(p_wall / s_wall)
                ratios[checkout][1].append(p_cpu / s_cpu)
                print(f"  round {round_} {checkout}: scan {s_wall:5.2f} s ({s_cpu:5.2f} s cpu)   plan {p_wall:5.2f} s "
                      f"({p_cpu:5.2f} s cpu)   plan / scan {p_wall / s_wall:.3f} wall, {p_cpu / s_cpu:.3f} cpu",
                      flush=True)
    for checkout, (wall, cpu) in ratios.items():
        print(f"{checkout}: plan / scan, median {statistics.median(wall):.3f} wall, {statistics.median(cpu):.3f} cpu")


if __name__ == "__main__":
    main()
