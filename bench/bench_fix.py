#!/usr/bin/env python3
"""`kubehop fix` against `kubehop scan` of the same tree: N extensions/v1beta1 Ingresses, all in one
file and one per file.

    python bench/bench_fix.py                  # N = 300, 1000, 3000
    python bench/bench_fix.py -n 100 -n 500 --runs 3

Prints, for each N and layout, the median wall time of a whole `kubehop fix` process (diff mode, the
diff sent to /dev/null) and of a whole `kubehop scan` process, and their ratio. fix should grow
linearly with N and stay within about 2x the scan.
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

INGRESS = """\
# ingress {i}
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web-{i}
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
spec:
  backend:
    serviceName: default-{i}   # the 404 page
    servicePort: 8080
  rules:
  - host: web-{i}.example.com
    http:
      paths:
      - path: /
        backend:
          serviceName: web-{i}
          servicePort: http
      - path: /api
        backend: {{serviceName: api-{i}, servicePort: 9000}}
"""


def make_tree(root: Path, count: int, one_file: bool) -> None:
    root.mkdir(parents=True)
    if one_file:
        (root / "ingresses.yaml").write_text("---\n".join(INGRESS.format(i=i) for i in range(count)))
    else:
        for i in range(count):
            (root / f"ingress-{i:05}.yaml").write_text(INGRESS.format(i=i))


_PYCACHE = tempfile.mkdtemp(prefix="kubehop-bench-pycache-")


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": _PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run([sys.executable, "-m", "scanner", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, action="append", help="objects (repeatable; default 300, 1000, 3000)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'N':>6} {'layout':<10} {'fix s':>8} {'scan s':>8} {'fix/scan':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.n or [300, 1000, 3000]:
            for one_file in (True, False):
                tree = Path(tmp) / f"{count}-{'one' if one_file else 'many'}"
                make_tree(tree, count, one_file)
                done = run("fix", "--no-config", "--target", "1.36", str(tree))
                summary = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
                if not summary.startswith(f"{count} objects to migrate"):
                    sys.exit(f"fix did not migrate all {count} objects: {summary or done.returncode}")
                fix = median_time(lambda: run("fix", "--no-config", "--target", "1.36", str(tree)), args.runs)
                scan = median_time(lambda: run("scan", "--no-config", "--target", "1.36", "--format", "json",
                                               str(tree)), args.runs)
                layout = "one file" if one_file else f"{count} files"
                print(f"{count:>6} {layout:<10} {fix:>8.2f} {scan:>8.2f} {fix / scan:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
