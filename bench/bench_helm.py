#!/usr/bin/env python3
"""Helm-heavy scan against helm itself: N real charts, a cold `kubehop scan` beside a plain
sequential `helm template` loop over the same charts, timed in turn in one run.

    python bench/bench_helm.py                            # all charts of ../shared/corpora/helm-charts-2019/stable
    python bench/bench_helm.py --charts 50 --target 1.25 --rounds 3
    python bench/bench_helm.py --command plan --from 1.31 # `kubehop plan` instead of `kubehop scan`
    python bench/bench_helm.py --kubehop /path/to/other/checkout   # e.g. the code before a change
    python bench/bench_helm.py --against /path/to/other/checkout   # both, side by side in each round

    python bench/bench_helm.py --charts 60 --count     # and the processes each side starts (needs strace)

Each round runs the helm loop (`helm template x CHART` for one chart after another, the way a
person checks charts by hand), then kubehop with an empty render cache, then kubehop again with
the cache it left (cold: no render kept; what kubehop keeps of the tools themselves stays, as for
any scan but a user's first: --empty-cache clears that too). Printed per round: the three wall
times, the processor seconds of each side's whole process tree (every process it started, helm's
and its post-renderers' too: on Linux this process reaps what they leave behind, so each is
counted; far less noisy than wall time on a shared machine), and the ratios cold / helm loop; then
the medians. With --against, the other checkout runs cold in each round too, right after this one,
and the ratios this / that are printed. The charts are read in place (never copied).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "helm-charts-2019" / "stable"


def _subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux), so that their processor time is
    counted in RUSAGE_CHILDREN once they are reaped: kubehop's tool helper outlives kubehop."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _tree_cpu() -> float:
    """Processor seconds of every descendant reaped so far, after reaping what is left."""
    while True:
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def helm_loop(helm: str, charts: list[Path]) -> tuple[float, float]:
    """(wall seconds, processor seconds)."""
    cpu = _tree_cpu()
    start = time.perf_counter()
    for chart in charts:
        subprocess.run([helm, "template", "x", str(chart)], capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start, _tree_cpu() - cpu


def kubehop(args: argparse.Namespace, charts: list[Path], cache: str, checkout: Path | None = None,
            wrap: list[str] = ()) -> tuple[float, float, dict]:
    """(wall seconds, processor seconds of the whole tree, the JSON report)."""
    env = {**os.environ, "PYTHONPATH": str(checkout or args.kubehop), "NO_COLOR": "1", "KUBEHOP_CACHE_DIR": cache}
    command = [args.command, "--format", "json", "--target", args.target]
    if args.command == "plan":
        command += ["--from", args.current]
    cpu = _tree_cpu()
    start = time.perf_counter()
    # In the checkout: `python -m` puts the working folder before PYTHONPATH.
    done = subprocess.run([*wrap, sys.executable, "-m", "scanner", *command, *map(str, charts)], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, cwd=checkout or args.kubehop)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"kubehop failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, _tree_cpu() - cpu, json.loads(done.stdout)


def cold_cache(folder: str, empty: bool) -> str:
    """`folder` without the renders kept in it; with `empty`, without anything (what kubehop keeps of
    the tools themselves, their version and `helm env`, too: a user's very first scan)."""
    for name in os.listdir(folder):
        if empty or name == "renders":
            shutil.rmtree(os.path.join(folder, name))
    return folder


def processes(args: argparse.Namespace, charts: list[Path], checkout: Path, cache: str, helm: str) -> str:
    """What one cold run starts (as the timed ones: `cache` without its renders), counted by strace:
    per chart, and helm's by subcommand."""
    strace = shutil.which("strace")
    if strace is None:
        return "strace not found: processes not counted"
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-trace-") as traces:
        wrap = [strace, "-f", "-ff", "-qq", "-s", "64", "-e", "trace=execve", "-e", "signal=none",
                "-o", os.path.join(traces, "t")]
        kubehop(args, charts, cold_cache(cache, args.empty_cache), checkout, wrap)
        started: collections.Counter = collections.Counter()
        for name in os.listdir(traces):
            with open(os.path.join(traces, name), encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    match = re.match(r'execve\("([^"]+)", \[(.*?)\]', line)
                    if match and "= -1" not in line:  # PATH lookups that failed are not processes
                        argv = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2))
                        sub = argv[1] if match.group(1) == helm and len(argv) > 1 else ""
                        started[(os.path.basename(match.group(1)), sub)] += 1
    total = sum(started.values())
    of_helm = sum(n for (name, _), n in started.items() if name == os.path.basename(helm))
    detail = ", ".join(f"{name}{' ' + sub if sub else ''} {n}" for (name, sub), n in started.most_common())
    return (f"{total} processes ({total / len(charts):.2f} a chart), helm {of_helm} ({of_helm / len(charts):.2f} "
            f"a chart): {detail}")


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
    parser.add_argument("--count", action="store_true", help="count the processes of one more cold run (strace)")
    parser.add_argument("--empty-cache", action="store_true",
                        help="cold runs without what kubehop keeps of the tools either (a user's first scan)")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from scanner.sources.tools.find import cache_dir, find_tool, tool_version

    helm = find_tool("helm")
    if helm is None:
        sys.exit("helm not found: run `kubehop tools install` or set KUBEHOP_HELM")
    os.environ["KUBEHOP_HELM"] = helm  # the tool cache may live under the default cache dir
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is not there (it is in ../shared, not in a user's clone)")
    charts = sorted(p.parent for p in args.corpus.resolve().glob("*/Chart.yaml"))[:args.charts or None]
    print(f"{len(charts)} charts from {args.corpus}; kubehop {args.command} --target {args.target} from "
          f"{args.kubehop}; helm {tool_version(helm)} ({helm}); {os.cpu_count()} CPUs")
    reaps = _subreaper()
    walls, cpus, against, against_cpu = [], [], [], []
    # Beside kubehop's own cache, not in the temporary folder: its file system may differ (a tmpfs, or here a
    # folder where each new file costs ~1 ms of kernel time), and users keep the cache there.
    cache_dir().mkdir(parents=True, exist_ok=True)
    caches = {checkout: tempfile.TemporaryDirectory(prefix="bench-cache-", dir=cache_dir()) for checkout in
              (args.kubehop, args.against) if checkout}
    for round_ in range(1, args.rounds + 1):
        loop, loop_cpu = helm_loop(helm, charts)
        cold, cold_cpu, report = kubehop(args, charts, cold_cache(caches[args.kubehop].name, args.empty_cache))
        warm, warm_cpu, again = kubehop(args, charts, caches[args.kubehop].name)
        assert report.get("findings") == again.get("findings"), "a warm run must find what a cold one found"
        walls.append(cold / loop)
        cpus.append(cold_cpu / loop_cpu)
        print(f"  round {round_}: helm loop {loop:6.2f} s ({loop_cpu:5.2f} s CPU)   kubehop cold {cold:6.2f} s "
              f"({cold_cpu:5.2f} s CPU)   warm {warm:6.2f} s ({warm_cpu:5.2f} s CPU)   cold / helm loop: wall "
              f"{cold / loop:.2f}, CPU {cold_cpu / loop_cpu:.2f}")
        if args.against:
            other, other_cpu, theirs = kubehop(args, charts, cold_cache(caches[args.against].name, args.empty_cache),
                                               args.against)
            assert report.get("findings") == theirs.get("findings"), "both checkouts must find the same"
            against.append(cold / other)
            against_cpu.append(cold_cpu / other_cpu)
            print(f"           {args.against}: cold {other:6.2f} s ({other_cpu:5.2f} s CPU), cold / helm loop: wall "
                  f"{other / loop:.2f}, CPU {other_cpu / loop_cpu:.2f}   this / that: wall {cold / other:.2f}, "
                  f"CPU {cold_cpu / other_cpu:.2f}")
    if args.command == "scan":
        summary = report["summary"]
        print(f"  rendered objects {summary['objects']}, template files {summary['files']}, "
              f"findings {len(report['findings'])}, charts not rendered {summary['unrendered']}")
    if not reaps:
        print("  (no subreaper here: the CPU of processes kubehop's helper started and left is not counted)")
    print(f"median cold / helm loop: wall {statistics.median(walls):.2f}, CPU {statistics.median(cpus):.2f}")
    if against:
        print(f"median cold, this / {args.against}: wall {statistics.median(against):.2f}, "
              f"CPU {statistics.median(against_cpu):.2f}")
    if args.count:
        for checkout, cache in caches.items():
            print(f"processes of a cold run, {checkout}: {processes(args, charts, checkout, cache.name, helm)}")
    for cache in caches.values():
        cache.cleanup()

if __name__ == "__main__":
    main()
