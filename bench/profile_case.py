#!/usr/bin/env python3
"""A profile of one of issue 27's cases, in-process (cProfile): where the time goes before changing anything.

    python bench/profile_case.py plain /tmp/kubehop-corpus           # bench/make_corpus.py's corpus
    python bench/profile_case.py hook                                # the pre-commit hook's one-file scan
    python bench/profile_case.py plan ../shared/corpora/helm-charts-2019/stable/*/ --charts 60
    python bench/profile_case.py plain /tmp/kubehop-corpus --sort tottime --top 60 --out /tmp/plain.prof

plain: `kubehop scan --format json` of the corpus, its files read in the scan's own process (the
worker processes of sources/files/parallel.py would hide the work per document from the profiler):
the work per document beyond the parse is what is not under yamldoc._compose_all. hook: `kubehop scan
--target 1.36 FILE` in the folder of one small manifest (imports, data loading, the first lookups).
plan: `kubehop plan` and `kubehop scan` of the same paths (--target 1.36 --from 1.31), then the
functions whose cumulative time differs most: what plan does beyond the scan's analysis. Run each
case twice for a warm file cache and bytecode; a profiler slows Python calls several times, so read
the shares, and time with bench_scan.py, bench_startup.py and bench_plan.py.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MANIFEST = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\nspec: {}\n"


def profiled(argv: list[str], cwd: str | None = None) -> pstats.Stats:
    """The profile of `kubehop ARGV` run in this process (its output thrown away); the first one's
    includes importing kubehop."""
    profile, here = cProfile.Profile(), os.getcwd()
    os.chdir(cwd or here)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            profile.enable()
            try:
                from scanner.cli import cli

                cli.main(argv, prog_name="kubehop", standalone_mode=False)
            except SystemExit:
                pass
            finally:
                profile.disable()
    finally:
        os.chdir(here)
    return pstats.Stats(profile)


def cumulative(stats: pstats.Stats) -> dict[str, tuple[int, float]]:
    return {f"{os.path.relpath(f, REPO) if f.startswith(str(REPO)) else f}:{line}({name})": (calls, cum)
            for (f, line, name), (_, calls, _, cum, _) in stats.stats.items()}  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", choices=("plain", "hook", "plan"))
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--charts", type=int, default=60, help="plan: at most so many of the paths")
    parser.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"))
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--out", help="write the profile (plan: of the plan) to this file for pstats")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    if args.case == "plain":
        if len(args.paths) != 1:
            sys.exit("plain: give the corpus folder (bench/make_corpus.py)")
        from scanner.sources.files import parallel

        parallel.PARALLEL_FROM = 1 << 30  # every file in this process, where the profiler sees it
        argv = ["scan", "--no-config", "--target", "1.36", "--format", "json", args.paths[0]]
        profiled(argv)  # warm-up: the file cache, the data cache
        stats = profiled(argv)
    elif args.case == "hook":
        with tempfile.TemporaryDirectory(prefix="kubehop-hook-") as folder:
            Path(folder, "ingress.yaml").write_text(MANIFEST)
            stats = profiled(["scan", "--target", "1.36", "ingress.yaml"], folder)  # imports and all, once
    else:
        paths = [os.path.abspath(p) for p in args.paths][:args.charts]
        if not paths:
            sys.exit("plan: give the chart folders (or any tree) that both commands read")
        minors = ["--target", "1.36", "--from", "1.31"]
        profiled(["scan", *minors, *paths])  # warm-up: renders (the render cache), imports
        scan, stats = cumulative(profiled(["scan", *minors, *paths])), profiled(["plan", *minors, *paths])
        plan = cumulative(stats)
        rows = sorted(((plan.get(k, (0, 0.0))[1] - scan.get(k, (0, 0.0))[1], k) for k in {*scan, *plan}),
                      reverse=True)
        print("cumulative seconds, plan - scan (first the most plan spends beyond the scan):")
        for difference, key in rows[:args.top] + [(0.0, "...")] + rows[-10:]:
            print(f"  {difference:+.4f}  {key}")
    if args.out:
        stats.dump_stats(args.out)
    if args.case != "plan":
        stats.sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
