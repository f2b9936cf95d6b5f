#!/usr/bin/env python3
"""Processor time of `kubehop scan` on one file, as the pre-commit hook runs it, against Python's own start.

    python bench/bench_startup.py                     # this checkout
    python bench/bench_startup.py --rounds 15
    python bench/bench_startup.py --compare /tmp/old  # and another checkout (e.g. `git archive main`), side by side
    python bench/bench_startup.py --against main      # the same, for a git ref of this repository

Each round starts, in turn, `python -c pass`, `python -c 'import scanner.cli'` and the hook's command
(`kubehop scan --target 1.36 FILE` in the folder holding FILE, one small manifest with one removed API),
and, with --compare (or --against, a ref archived into a temporary folder), the same command of the
other checkout. Each side's processor time (user +
system, the kernel's accounting of the finished child) is printed as the best and the median of the
rounds, and the hook's ratio to each other side is taken round by round (the machine drifts; pairs
do not), its best and median printed.

kubehop's bytecode is compiled once into a temporary PYTHONPYCACHEPREFIX, as `pip install` (which
pre-commit runs to build the hook's environment) compiles it, PYTHONDONTWRITEBYTECODE or not;
--no-bytecode measures kubehop's modules compiled on every start instead (a copy without
__pycache__, run with PYTHONDONTWRITEBYTECODE=1), as a checkout that never wrote its bytecode runs.
The data cache (scanner/data.py) is a temporary one, filled by a first run that is not counted, as a
hook's second commit finds it.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MANIFEST = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\nspec: {}\n"


def cpu_seconds(command: list[str], env: dict, cwd: Path) -> float:
    """User + system seconds of `command` and everything it waited for."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: the manifest's blocker
        sys.exit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(command)}")
    return usage.ru_utime + usage.ru_stime


def environment(repo: Path, tmp: Path, bytecode: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(repo), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp / "cache"),
           "KUBEHOP_CACHE_DIR": str(tmp / "cache" / "kubehop")}
    env.pop("KUBEHOP_NO_CACHE", None)
    env.pop("KUBEHOP_DATA_DIR", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / f"pycache-{abs(hash(str(repo)))}")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def bare_copy(repo: Path, tmp: Path) -> Path:
    """kubehop's modules and data without a __pycache__ folder: compiled on every start, as a checkout
    whose bytecode was never written (Python's own and the packages' keep theirs)."""
    copy = tmp / f"checkout-{abs(hash(str(repo)))}"
    for part in ("scanner", "rules", "compat-matrix"):
        shutil.copytree(repo / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def archived(ref: str, tmp: Path) -> Path:
    """The checkout of `ref` (a branch, tag or commit of this repository), as `git archive` gives it."""
    if ref.startswith("-"):
        sys.exit(f"not a git ref: {ref}")
    tree = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref], capture_output=True, check=True)
    folder = tmp / "against"
    with tarfile.open(fileobj=io.BytesIO(tree.stdout)) as archive:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: nothing outside the folder
            archive.extractall(folder, filter="data")
        else:
            archive.extractall(folder)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--compare", type=Path, help="another kubehop checkout, run in turn with this one")
    parser.add_argument("--against", metavar="REF", help="a git ref of this repository (e.g. main), run as --compare")
    parser.add_argument("--no-bytecode", action="store_true", help="compile kubehop's modules on every start")
    args = parser.parse_args()
    python = sys.executable
    hook = ["-m", "scanner", "scan", "--target", "1.36", "ingress.yaml"]
    with tempfile.TemporaryDirectory(prefix="kubehop-bench-startup-") as name:
        tmp = Path(name)
        (tmp / "gitops").mkdir()
        (tmp / "gitops" / "ingress.yaml").write_text(MANIFEST)
        if args.against:
            args.compare = archived(args.against, tmp)
        checkouts = [REPO] + ([args.compare.resolve()] if args.compare else [])
        if args.no_bytecode:
            checkouts = [bare_copy(checkout, tmp) for checkout in checkouts]
        here = environment(checkouts[0], tmp, not args.no_bytecode)
        sides = {"python -c pass": ([python, "-c", "pass"], here),
                 "import scanner.cli": ([python, "-c", "import scanner.cli"], here),
                 "hook": ([python, *hook], here)}
        if args.compare:
            sides["hook (--compare)"] = ([python, *hook], environment(checkouts[1], tmp, not args.no_bytecode))
        for command, env in sides.values():  # compiles the bytecode, fills the data cache
            cpu_seconds(command, env, tmp / "gitops")
        times: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, (command, env) in sides.items():
                times[side].append(cpu_seconds(command, env, tmp / "gitops"))
    print(f"processor seconds, {args.rounds} rounds ({'no bytecode' if args.no_bytecode else 'bytecode compiled'}):")
    for side, seconds in times.items():
        print(f"  {side:<26} best {min(seconds):.3f}  median {statistics.median(seconds):.3f}")
    for side, seconds in times.items():
        if side != "hook":
            ratios = [hook_time / other for hook_time, other in zip(times["hook"], seconds) if other > 0]
            print(f"  {'hook / ' + side:<26} best {min(ratios):.2f}x  median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
