"""kubehop on real GitOps trees: one row per tree, the figures a closing note reports.

    python bench/real_repos.py [--target 1.36] [--cache-dir DIR] [--extra ARG ...] TREE [TREE ...]

Each tree is scanned as a user would scan it (`python -m scanner scan --format json TREE`, run
from the tree's parent), with a fresh render cache unless --cache-dir is given. Printed per tree:
files, objects, findings by level, exit code, input problems (count, then the commonest reasons),
not-rendered count, wall time, and whether a traceback appeared. Nothing of the trees is copied.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def scan(tree: Path, target: str, cache_dir: str | None, extra: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(prefix="kubehop-real-") as fresh:
        env["KUBEHOP_CACHE_DIR"] = cache_dir or fresh
        tools = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubehop" / "tools"
        if not cache_dir and tools.is_dir():  # the fetched helm/kubectl stay findable
            os.symlink(tools, Path(fresh) / "tools")
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "scanner", "scan", "--target", target, "--format", "json",
                               *extra, tree.name], cwd=tree.parent, env=env, capture_output=True, text=True,
                              timeout=3600)
        wall = time.perf_counter() - began
    row = {"tree": tree.name, "exit": done.returncode, "wall": wall,
           "traceback": "Traceback" in done.stderr}
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["error"] = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return row
    summary = report["summary"]
    problems = [d for d in report["diagnostics"] if d.get("level", "error") == "error"]
    reasons = collections.Counter(_reason(d["message"]) for d in problems)
    row.update(files=summary["files"], objects=summary["objects"], errors=summary["errors"],
               warnings=summary["warnings"], input_errors=len(problems), unrendered=summary["unrendered"],
               reasons=reasons.most_common(4))
    return row


def _reason(message: str) -> str:
    """A problem's message with its particulars (names, paths, numbers) folded, to count kinds."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"|\S*/\S*|\d+", "…", message)
    return message[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--target", default="1.36")
    parser.add_argument("--cache-dir")
    parser.add_argument("--extra", action="append", default=[], help="one more scan argument (repeatable)")
    args = parser.parse_args()
    print("| tree | files | objects | errors | warnings | exit | input problems | not rendered | wall s | traceback |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    details = []
    for tree in args.trees:
        row = scan(tree.resolve(), args.target, args.cache_dir, args.extra)
        if "error" in row:
            print(f"| {row['tree']} | – | – | – | – | {row['exit']} | – | – | {row['wall']:.1f} | "
                  f"{'yes' if row['traceback'] else 'no'} |", flush=True)
            details.append((row["tree"], [(row["error"][0], 1)]))
            continue
        print(f"| {row['tree']} | {row['files']} | {row['objects']} | {row['errors']} | {row['warnings']} | "
              f"{row['exit']} | {row['input_errors']} | {row['unrendered']} | {row['wall']:.1f} | "
              f"{'yes' if row['traceback'] else 'no'} |", flush=True)
        if row["reasons"]:
            details.append((row["tree"], row["reasons"]))
    for tree, reasons in details:
        print(f"\n{tree}:")
        for reason, count in reasons:
            print(f"  {count} x {reason}")


if __name__ == "__main__":
    main()
