#!/usr/bin/env python3
"""Plain-YAML scan speed against a bare libyaml parse, both sides interleaved in one run.

    python bench/make_corpus.py ../shared/corpora/helm-charts-2019/stable /tmp/kubehop-corpus
    python bench/bench_scan.py /tmp/kubehop-corpus --rounds 5
    python bench/bench_scan.py /tmp/kubehop-corpus --against /path/to/other/checkout

Each round runs, one after the other: a whole process doing a bare PyYAML CSafeLoader `load_all` of
every file (one process, as a person's script would), then `kubehop scan --target 1.36 --format json`
of the corpus as a whole process (its worker processes included), then, with --against, the other
checkout's scan. Printed per round: the wall and processor seconds of each, the ratio kubehop /
bare parse (wall), and this / that; then the medians and the best of each ratio. kubehop runs with
its bytecode cached, as an installed kubehop has it (with PYTHONDONTWRITEBYTECODE, set on some
machines, every run would compile its modules again).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BARE_PARSE = """
import os, sys, yaml
n = 0
for top, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(('.yaml', '.yml', '.json')):
            with open(os.path.join(top, name), 'rb') as f:
                for doc in yaml.load_all(f.read().decode('utf-8'), Loader=yaml.CSafeLoader):
                    n += 1
print(n)
"""

_PYCACHE = tempfile.mkdtemp(prefix="kubehop-bench-pycache-")


def timed(command: list[str], checkout: Path = REPO) -> tuple[float, float, str]:
    """Wall and processor seconds (the command's and its children's) of one whole process; its output."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": _PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=checkout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def scan_command(corpus: Path) -> list[str]:
    return [sys.executable, "-m", "scanner", "scan", "--no-config", "--target", "1.36", "--format", "json",
            str(corpus)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, scanned in the same rounds")
    args = parser.parse_args()
    corpus = args.corpus.resolve()

    bare = [sys.executable, "-c", BARE_PARSE, str(corpus)]
    timed(bare), timed(scan_command(corpus))  # warm-up: the file cache, the bytecode
    if args.against:
        timed(scan_command(corpus), args.against)
    ratios, cpu_ratios, against = [], [], []
    report: dict = {}
    for round_ in range(1, args.rounds + 1):
        b_wall, b_cpu, documents = timed(bare)
        k_wall, k_cpu, out = timed(scan_command(corpus))
        report = json.loads(out)
        ratios.append(k_wall / b_wall)
        cpu_ratios.append(k_cpu / b_cpu)
        line = (f"  round {round_}: bare parse {b_wall:5.2f} s ({b_cpu:5.2f} s cpu)   kubehop {k_wall:5.2f} s "
                f"({k_cpu:5.2f} s cpu)   kubehop / bare {k_wall / b_wall:.2f} wall, {k_cpu / b_cpu:.2f} cpu")
        if args.against:
            o_wall, _, theirs = timed(scan_command(corpus), args.against)
            assert json.loads(theirs)["findings"] == report["findings"], "both checkouts must find the same"
            against.append(k_wall / o_wall)
            line += f"   that {o_wall:5.2f} s, this / that {k_wall / o_wall:.2f}"
        print(line, flush=True)
    summary = report["summary"]
    print(f"corpus: {summary['files']} files, {documents.strip()} YAML documents, {summary['objects']} objects, "
          f"{len(report['findings'])} findings")
    print(f"kubehop / bare parse, wall: median {statistics.median(ratios):.2f}, best {min(ratios):.2f}; "
          f"processor time: median {statistics.median(cpu_ratios):.2f}")
    if against:
        print(f"this / {args.against}, wall: median {statistics.median(against):.2f}, best {min(against):.2f}")


if __name__ == "__main__":
    main()
