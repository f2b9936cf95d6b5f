#!/usr/bin/env python3
"""The 2019 chart collection read whole: what helm could not render, what was still found, and
whether every finding's line lies inside its file.

    python bench/chart_corpus.py [--corpus DIR] [--target 1.22] [--extra ARG ...]

One `kubehop scan --format json` over every chart of the corpus (read in place, never copied), with a
fresh render cache. Prints: charts, charts helm could not render, templates with a removed-API
finding (rendered / read as text / latent), findings by rule family, and findings whose line is
0 or past the end of their file.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "helm-charts-2019" / "stable"


def line_count(path: str, cache: dict[str, int | None]) -> int | None:
    if path not in cache:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            cache[path] = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        except OSError:
            cache[path] = None
    return cache[path]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--target", default="1.22")
    parser.add_argument("--extra", action="append", default=[], help="one more scan argument (repeatable)")
    args = parser.parse_args()
    charts = sorted(p for p in args.corpus.iterdir() if (p / "Chart.yaml").is_file())
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(prefix="kubehop-corpus-") as cache:
        env.setdefault("KUBEHOP_CACHE_DIR", cache)
        tools = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubehop" / "tools"
        if tools.is_dir() and env["KUBEHOP_CACHE_DIR"] == cache:
            os.symlink(tools, Path(cache) / "tools")
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "scanner", "scan", "--format", "json", "--target",
                               args.target, *args.extra, *map(str, charts)], capture_output=True, text=True,
                              env=env, timeout=7200)
        wall = time.perf_counter() - began
    if "Traceback" in done.stderr:
        sys.exit(done.stderr)
    report = json.loads(done.stdout)
    failed = {d["file"] for d in report["diagnostics"] + report["unrendered"]
              if "helm could not render" in d.get("message", d.get("reason", ""))}
    unrendered = {u["file"] for u in report["unrendered"] if u["file"] in map(str, charts)}
    api = [f for f in report["findings"] if "/" in f["rule"] and not f["rule"].startswith(("field/", "crd", "helm/"))]
    kinds = collections.Counter()
    for finding in api:
        via = finding.get("via") or ""
        kinds["latent" if "latent" in via else "text" if "not rendered" in via or "read as text" in via
              else "rendered"] += 1
    templates = collections.defaultdict(set)
    for finding in api:
        via = finding.get("via") or ""
        kind = "latent" if "latent" in via else "text" if "not rendered" in via or "read as text" in via \
            else "rendered"
        templates[kind].add(finding["file"])
    sizes: dict[str, int | None] = {}
    outside = [f for f in report["findings"]
               if not f["line"] or (line_count(f["file"], sizes) or 0) < f["line"]]
    families = collections.Counter(f["rule"].split("/")[0] if f["rule"].startswith(("field", "crd", "helm/"))
                                   else "api" for f in report["findings"])
    print(f"charts: {len(charts)}  exit: {done.returncode}  wall: {wall:.1f} s")
    print(f"charts helm could not render: {len(failed)} (listed as not rendered: {len(unrendered)})")
    print(f"input errors: {sum(d['level'] == 'error' for d in report['diagnostics'])}")
    print("removed-API templates: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(templates.items()))
          + f"; all {len(set().union(*templates.values()))}")
    print("findings: " + ", ".join(f"{k} {v}" for k, v in sorted(families.items())))
    print(f"findings whose line is 0 or past the end of the file: {len(outside)}")
    for finding in outside[:10]:
        print(f"  {finding['file']}:{finding['line']} ({line_count(finding['file'], sizes)} lines) {finding['rule']}")


if __name__ == "__main__":
    main()
