#!/usr/bin/env python3
"""Scan speed against a bare libyaml parse, and the wall time of a one-file (pre-commit) run.

    python bench/bench_scan.py /tmp/kubehop-corpus      # built by bench/make_corpus.py

Prints, for the whole corpus: the median wall time of a bare PyYAML CSafeLoader `load_all` of every
file, of kubehop's scan (in process, and as a whole `kubehop scan` process against a whole process
doing the bare parse), and their ratios; then the median wall time of `kubehop scan` on one small file.

On a shared machine, pair the whole processes run by run instead (farm-bench runs A and B in turn):

    farm-bench -n 7 --vs "python -c '<BARE_PARSE>' CORPUS" -- \
        env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=/tmp/pyc python -m scanner scan --no-config \
        --target 1.36 --format json -o /dev/null CORPUS
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

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


def median_time(fn, runs: int) -> float:
    fn()  # warm-up: file cache, imports
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


_PYCACHE = tempfile.mkdtemp(prefix="kubehop-bench-pycache-")


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    """`cmd` with kubehop's bytecode cached as an installed kubehop has it: with PYTHONDONTWRITEBYTECODE
    (set on some machines) every run would compile kubehop's modules again (~0.1 s of each start)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": _PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from scanner.scan import scan
    from scanner.versions import Minor

    documents = int(run([sys.executable, "-c", BARE_PARSE, str(args.corpus)]).stdout)
    files = sum(1 for p in args.corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    result = scan([str(args.corpus)], target=Minor(1, 36))
    print(f"corpus: {files} files, {documents} YAML documents, {result.objects} Kubernetes objects, "
          f"{len(result.findings)} findings")

    import yaml

    def bare() -> None:
        for top, _, names in os.walk(args.corpus):
            for name in names:
                if name.endswith((".yaml", ".yml", ".json")):
                    with open(os.path.join(top, name), "rb") as handle:
                        for _ in yaml.load_all(handle.read().decode("utf-8"), Loader=yaml.CSafeLoader):
                            pass

    t_bare = median_time(bare, args.runs)
    t_scan = median_time(lambda: scan([str(args.corpus)], target=Minor(1, 36)), args.runs)
    print(f"in process:    bare parse {t_bare:.3f} s, kubehop scan {t_scan:.3f} s, ratio {t_scan / t_bare:.2f}")

    p_bare = median_time(lambda: run([sys.executable, "-c", BARE_PARSE, str(args.corpus)]), args.runs)
    p_scan = median_time(lambda: run([sys.executable, "-m", "scanner", "scan", "--target", "1.36",
                                      "--format", "json", str(args.corpus)]), args.runs)
    print(f"whole process: bare parse {p_bare:.3f} s, kubehop scan {p_scan:.3f} s, ratio {p_scan / p_bare:.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "deployment.yaml"
        one.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                       "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
                       "    spec:\n      containers: [{name: web, image: nginx:1.27}]\n")
        t_one = median_time(lambda: run([sys.executable, "-m", "scanner", "scan", "--target", "1.36", str(one)]),
                            max(args.runs, 10))
    print(f"one file (pre-commit): {t_one:.3f} s")


if __name__ == "__main__":
    main()
