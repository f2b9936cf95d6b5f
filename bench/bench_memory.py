#!/usr/bin/env python3
"""Peak memory of a scan against the size of the tree, and of repeated scans in one process.

    python bench/bench_memory.py /tmp/kubehop-corpus                 # built by bench/make_corpus.py
    python bench/bench_memory.py /tmp/kubehop-corpus --files 500 5000 --repeat 5
    python bench/bench_memory.py --one-file 8000                     # one file of 8,000 Deployments

For each N in --files, the first N files of the corpus (cycled when it holds fewer) are copied into
a temporary tree and scanned in a fresh process: its peak RSS and that of a bare CSafeLoader
`load_all` of the same files, side by side. Then one process scans the N-file tree --repeat times
and prints the RSS after each scan: it must not grow from one scan to the next.

--one-file N writes one file of N Deployments (3.4 MiB for 8,000; one in ten at a removed API) and
prints, from one run, the peak RSS of its scan beside a bare CSafeLoader `load_all` that keeps every
document (what the issue measured against) and one that lets each go, each the best of --rounds
fresh processes, run in turn.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BARE_PARSE = """
import os, sys, yaml
for top, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        with open(os.path.join(top, name), 'rb') as f:
            for doc in yaml.load_all(f.read().decode('utf-8'), Loader=yaml.CSafeLoader):
                pass
"""

BARE_KEPT = """
import sys, yaml
with open(sys.argv[1], 'rb') as f:
    documents = list(yaml.load_all(f.read().decode('utf-8'), Loader=yaml.CSafeLoader))
"""

SCAN = """
import sys
from scanner.scan import scan
from scanner.versions import Minor
result = scan([sys.argv[1]], target=Minor(1, 36))
print(result.files_read, result.objects, len(result.findings))
"""

REPEATED = """
import sys
from scanner.scan import scan
from scanner.versions import Minor
def rss_mb():
    with open('/proc/self/status') as status:
        return next(int(line.split()[1]) for line in status if line.startswith('VmRSS')) / 1024
for n in range(int(sys.argv[2])):
    scan([sys.argv[1]], target=Minor(1, 36))
    print(f'{rss_mb():.1f}')
"""


def corpus_files(corpus: Path) -> list[Path]:
    """The corpus's distinct files (make_corpus.py's copies hold the same names)."""
    found: dict[str, Path] = {}
    for path in sorted(corpus.rglob("*")):
        if path.suffix in (".yaml", ".yml", ".json") and path.is_file():
            found.setdefault(path.name, path)
    return list(found.values())


def make_tree(files: list[Path], count: int, where: Path) -> Path:
    tree = where / f"tree-{count}"
    for n in range(count):
        source = files[n % len(files)]
        target = tree / f"copy-{n // len(files)}" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return tree


def peak_rss_mb(code: str, *args: str, repo: Path = REPO) -> tuple[float, str]:
    """Peak RSS of a fresh Python running `code`, in MB, and what it printed: the largest single process
    (the scan's, or one of the worker processes it read files in), as the kernel accounts it."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    # cwd: `python -c` puts it first on sys.path, before PYTHONPATH
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, env=env, text=True,
                               cwd=repo)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"failed ({process.returncode}): {code.strip().splitlines()[-1]}")
    return usage.ru_maxrss / 1024, out.strip()


DEPLOYMENT = """\
apiVersion: {api}
kind: Deployment
metadata:
  name: web-{n}
  namespace: team-{team}
  labels:
    app: web-{n}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web-{n}
  template:
    metadata:
      labels:
        app: web-{n}
    spec:
      containers:
      - name: web
        image: nginx:1.27.{patch}
        ports:
        - containerPort: 8080
        resources:
          limits: {{cpu: 500m, memory: 256Mi}}
"""


def one_file(count: int, rounds: int, repo: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-memory-") as tmp:
        path = Path(tmp) / "deployments.yaml"
        path.write_text("---\n".join(DEPLOYMENT.format(api="extensions/v1beta1" if n % 10 == 0 else "apps/v1", n=n,
                                                        team=n % 40, patch=n % 9) for n in range(count)))
        peaks: dict[str, list[float]] = {"scan": [], "load_all kept": [], "load_all streamed": []}
        for _ in range(rounds):
            peaks["scan"].append(peak_rss_mb(SCAN, str(path), repo=repo)[0])
            peaks["load_all kept"].append(peak_rss_mb(BARE_KEPT, str(path))[0])
            peaks["load_all streamed"].append(peak_rss_mb(BARE_PARSE, tmp)[0])
        _, out = peak_rss_mb(SCAN, str(path), repo=repo)
        best = {side: min(values) for side, values in peaks.items()}
        print(f"one file of {count} Deployments ({path.stat().st_size / 2**20:.1f} MiB; objects, findings: {out}), "
              f"peak RSS, best of {rounds}: scan {best['scan']:.1f} MB, bare load_all keeping the documents "
              f"{best['load_all kept']:.1f} MB, letting each go {best['load_all streamed']:.1f} MB")
        print(f"scan / load_all kept: {best['scan'] / best['load_all kept']:.2f}x; "
              f"scan / load_all streamed: {best['scan'] / best['load_all streamed']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, nargs="?")
    parser.add_argument("--files", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--one-file", type=int, metavar="N", help="one file of N Deployments instead of a corpus")
    parser.add_argument("--rounds", type=int, default=3, help="with --one-file: fresh processes per side")
    parser.add_argument("--repo", type=Path, default=REPO, help="the kubehop checkout to measure (another commit)")
    args = parser.parse_args()
    if args.one_file:
        one_file(args.one_file, args.rounds, args.repo)
        return
    if args.corpus is None:
        parser.error("give a corpus folder, or --one-file N")
    files = corpus_files(args.corpus)
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-memory-") as tmp:
        peaks = {}
        for count in args.files:
            tree = make_tree(files, count, Path(tmp))
            bare, _ = peak_rss_mb(BARE_PARSE, str(tree))
            scanned, out = peak_rss_mb(SCAN, str(tree), repo=args.repo)
            peaks[count] = scanned
            read, objects, findings = out.split()
            print(f"{count:>6} files ({objects} objects, {findings} findings): peak RSS scan {scanned:.1f} MB, "
                  f"bare load_all {bare:.1f} MB")
        smallest, largest = min(peaks), max(peaks)
        print(f"peak RSS {largest} vs {smallest} files: {peaks[largest] / peaks[smallest]:.2f}x")
        env = {**os.environ, "PYTHONPATH": str(args.repo)}
        tree = Path(tmp) / f"tree-{smallest}"
        done = subprocess.run([sys.executable, "-c", REPEATED, str(tree), str(args.repeat)], capture_output=True,
                              text=True, env=env, check=True, cwd=args.repo)
        print(f"RSS after each of {args.repeat} scans of {smallest} files in one process (MB): "
              + ", ".join(done.stdout.split()))


if __name__ == "__main__":
    main()
