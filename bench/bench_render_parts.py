#!/usr/bin/env python3
"""Where a cold chart render's time goes: helm alone, then each part kubehop adds, chart by chart.

    python bench/bench_render_parts.py    # the first 20 charts of ../shared/corpora/helm-charts-2019/stable
    python bench/bench_render_parts.py --charts 40 --rounds 3

For each chart, in turn (so the machine's drift falls on every variant alike), one process each:

  helm        `helm template x CHART`, as a person runs it;
  discovery   + kubehop's loopback discovery (`--kubeconfig`, `--dry-run=server`): exact Capabilities;
  capture     + kubehop's post-renderer (helm 4's plugin, helm 3's executable): how the stream is kept;
  kubehop     + the Go runtime settings kubehop gives helm (`render_limits.go_runtime`): what it runs;

then the whole cold `kubehop scan` of the same charts beside a sequential `helm template` loop (as
bench_helm.py). Printed: per chart, the median processor and wall milliseconds of each variant (helm's
own, its post-renderer's and the discovery server's, which runs in this process), what each part adds,
the renders kubehop runs at once, and the ratio of the cold scan to the loop.
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


def seconds(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, env=env, stdin=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


def cost(command: list[str], env: dict) -> tuple[float, float]:
    """(processor seconds: the process, what it waited for, and this process's discovery threads; wall)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    served = after.ru_utime + after.ru_stime - mine.ru_utime - mine.ru_stime
    return usage.ru_utime + usage.ru_stime + served, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--charts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--target", default="1.36")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from scanner.rulebook import load_rulebook
    from scanner.sources.helm.capture import CAPTURE_ENV, Capture
    from scanner.sources.helm.discovery import FakeDiscovery
    from scanner.sources.tools.find import find_tool, tool_version
    from scanner.sources.tools.render_limits import RenderLimits, go_runtime, pool_size
    from scanner.versions import parse_minor

    helm = find_tool("helm")
    if helm is None:
        sys.exit("helm not found: run `kubehop tools install` or set KUBEHOP_HELM")
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is not there (it is in ../shared, not in a user's clone)")
    charts = sorted(p.parent for p in args.corpus.resolve().glob("*/Chart.yaml"))[:args.charts]
    target = parse_minor(args.target)
    served = load_rulebook().served.served_at(target)
    print(f"{len(charts)} charts, helm {tool_version(helm)}, {os.cpu_count()} CPUs, "
          f"kubehop renders {pool_size(RenderLimits())} at once")

    costs: dict[str, list[tuple[float, float]]] = {"helm": [], "discovery": [], "capture": [], "kubehop": []}
    with FakeDiscovery(target, served) as kubeconfig, tempfile.TemporaryDirectory() as work:
        capture = Capture(helm, work)
        base_env = {**os.environ, "KUBECACHEDIR": os.devnull}
        stream = os.path.join(work, "stream.yaml")
        captured_env = {**base_env, **capture.environment(stream), CAPTURE_ENV: stream}
        for _ in range(args.rounds):
            for chart in charts:
                plain = [helm, "template", "x", str(chart)]
                served_by_us = [helm, "template", f"--kubeconfig={kubeconfig}", "--disable-openapi-validation",
                                "--dry-run=server", "x", str(chart)]
                captured = [helm, "template", f"--kubeconfig={kubeconfig}", "--disable-openapi-validation",
                            *capture.arguments(), "x", str(chart)]
                costs["helm"].append(cost(plain, base_env))
                costs["discovery"].append(cost(served_by_us, base_env))
                costs["capture"].append(cost(captured, captured_env))
                costs["kubehop"].append(cost(captured, go_runtime(captured_env, RenderLimits())))
    cpu = {name: statistics.median(c for c, _ in values) * 1000 for name, values in costs.items()}
    wall = {name: statistics.median(w for _, w in values) * 1000 for name, values in costs.items()}
    print("per chart, median processor (wall) ms:  " + ";  ".join(
        f"{name} {cpu[name]:.1f} ({wall[name]:.0f}) = helm x{cpu[name] / cpu['helm']:.2f}" for name in costs))

    for round_ in range(1, args.rounds + 1):
        start = time.perf_counter()
        for chart in charts:
            subprocess.run([helm, "template", "x", str(chart)], capture_output=True, stdin=subprocess.DEVNULL)
        loop = time.perf_counter() - start
        with tempfile.TemporaryDirectory(prefix="kubehop-bench-cache-") as cache:
            env = {**os.environ, "PYTHONPATH": str(REPO), "KUBEHOP_CACHE_DIR": cache, "KUBEHOP_HELM": helm}
            cold = seconds([sys.executable, "-m", "scanner", "scan", "--no-config", "--format", "json", "--target",
                            args.target, *map(str, charts)], env)
        print(f"  round {round_}: helm loop {loop:.2f} s, kubehop cold {cold:.2f} s, cold / loop {cold / loop:.2f}")


if __name__ == "__main__":
    main()
