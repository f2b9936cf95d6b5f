#!/usr/bin/env python3
"""Build the reference benchmark corpus: every chart under CHARTS rendered once with helm
into plain YAML, the whole set copied COPIES times under OUT (so it never lives in the repo).

    python bench/make_corpus.py ../shared/corpora/helm-charts-2019/stable /tmp/kubehop-corpus
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def find_helm() -> str:
    for candidate in (os.environ.get("KUBEHOP_HELM"), shutil.which("helm"),
                      str(Path.home() / ".cache/kubehop/tools/helm/helm")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("no helm found: run `kubehop tools install` or set KUBEHOP_HELM")


def render(helm: str, chart: Path, out: Path) -> bool:
    proc = subprocess.run([helm, "template", "bench", str(chart)], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return False
    (out / f"{chart.name}.yaml").write_text(proc.stdout)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("charts", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    helm = find_helm()
    first = args.out / "copy-0"
    first.mkdir(parents=True, exist_ok=True)
    charts = sorted(p.parent for p in args.charts.glob("*/Chart.yaml"))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        rendered = sum(pool.map(lambda c: render(helm, c, first), charts))
    for n in range(1, args.copies):
        shutil.copytree(first, args.out / f"copy-{n}", dirs_exist_ok=True)
    print(f"{rendered} of {len(charts)} charts rendered; {args.copies} copies under {args.out}")


if __name__ == "__main__":
    main()
