"""Which components real GitOps trees deploy, and how many of their pins kubehop's data covers.

    python bench/component_census.py [--no-render] [--top 30] [--json FILE] TREE [TREE ...]

Each tree is read as `kubehop components` reads it (the one analysis, in process, from the tree's
parent folder, with a render cache of its own unless KUBEHOP_CACHE_DIR is set). A pin is a row of
`kubehop components`: a chart, a remote base, a variable, a label or an image that installs a
component. Each pin is counted as
  - catalog: a component compat-matrix/ knows (and whether the release it pins is listed there),
  - chart kubeVersion: a chart whose pinned version states its own kubeVersion (kept in the tree or
    in helm's cache),
  - no data: everything else the tree deploys.
Printed: a row per tree, the totals with the coverage (catalog + chart kubeVersion over all pins),
and the components with no data, most pinned first (pins, trees). Nothing of the trees is copied.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scanner.analysis import analyse  # noqa: E402
from scanner.options import ScanOptions  # noqa: E402
from scanner.report.components import CATALOG, CHART_KUBE_VERSION, NONE, rows  # noqa: E402
from scanner.rulebook import load_rulebook  # noqa: E402

KINDS = (CATALOG, CHART_KUBE_VERSION, NONE)


@contextlib.contextmanager
def _in(folder: Path):
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def census(tree: Path, render: bool) -> dict:
    """The pins of one tree: [(kind, component, release listed)], as `kubehop components` lists them."""
    with _in(tree.parent):
        analysis = analyse([tree.name], load_rulebook().newest, options=ScanOptions(render=render))
    pins = [(kind, d.component, bool(d.releases)) for kind, d in rows(analysis.tree, analysis.timeline)]
    return {"tree": tree.name, "pins": pins}


def coverage(pins: list[tuple[str, str, bool]]) -> float:
    covered = sum(kind in (CATALOG, CHART_KUBE_VERSION) for kind, _, _ in pins)
    return 100.0 * covered / len(pins) if pins else 100.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--no-render", action="store_true", help="read charts as text, build no kustomization")
    parser.add_argument("--top", type=int, default=30, help="how many components with no data to list")
    parser.add_argument("--json", dest="json_file", help="also write every tree's pins to this file")
    args = parser.parse_args()
    if "KUBEHOP_CACHE_DIR" not in os.environ:
        fresh = tempfile.mkdtemp(prefix="kubehop-census-")
        tools = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubehop" / "tools"
        if tools.is_dir():  # the fetched helm/kubectl stay findable
            os.symlink(tools, Path(fresh) / "tools")
        os.environ["KUBEHOP_CACHE_DIR"] = fresh
    results = [census(tree.resolve(), not args.no_render) for tree in args.trees]
    print("| tree | pins | catalog | release listed | chart kubeVersion | no data | coverage % |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    every: list[tuple[str, str, bool]] = []
    for result in results:
        pins = result["pins"]
        every += pins
        print(_row(result["tree"], pins))
    print(_row("**all**", every))
    unknown = collections.Counter(name for kind, name, _ in every if kind == NONE)
    trees = {name: sum(any(k == NONE and n == name for k, n, _ in r["pins"]) for r in results) for name in unknown}
    print(f"\nno data, most pinned first ({len(unknown)} components):")
    for name, pins in unknown.most_common(args.top):
        print(f"  {pins:4d} pins in {trees[name]:2d} trees  {name}")
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(results, indent=1) + "\n")


def _row(name: str, pins: list[tuple[str, str, bool]]) -> str:
    by_kind = collections.Counter(kind for kind, _, _ in pins)
    listed = sum(kind == CATALOG and known for kind, _, known in pins)
    return (f"| {name} | {len(pins)} | {by_kind[CATALOG]} | {listed} | {by_kind[CHART_KUBE_VERSION]} | "
            f"{by_kind[NONE]} | {coverage(pins):.1f} |")


if __name__ == "__main__":
    main()
