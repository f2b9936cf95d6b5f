"""What a chart's own Chart.yaml states at each of its releases: the facts a compat-matrix/ entry cites.

    python scripts/chart_history.py GIT_DIR CHART_YAML [--tags PREFIX] [--minors]

Reads a Git repository (a bare mirror is enough: nothing is checked out) and prints, for every tag
starting with PREFIX (default: every tag) whose tree holds CHART_YAML, the chart's version, its
appVersion and kubeVersion, and the tag's date. `--minors` keeps the first release of each chart
minor and every later release that changes appVersion's minor or kubeVersion (the lines a data file
lists). Each row names the file at the tag, the `source` a release entry cites. Nothing is fetched.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import yaml


def git(git_dir: str, *args: str) -> str:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def minor(version: str) -> tuple[int, ...]:
    parts = version.lstrip("vV").split("-")[0].split(".")
    try:
        return tuple(int(p) for p in parts[:2])
    except ValueError:
        return ()


def history(git_dir: str, path: str, prefix: str) -> list[dict]:
    rows = []
    for tag in git(git_dir, "tag", "-l", f"{prefix}*").split():
        text = git(git_dir, "show", f"{tag}:{path}")
        try:
            chart = yaml.safe_load(text) if text else None
        except yaml.YAMLError:
            chart = None
        if not isinstance(chart, dict) or not chart.get("version"):
            continue
        date = git(git_dir, "log", "-1", "--format=%cs", tag).strip()
        rows.append({"tag": tag, "version": str(chart["version"]), "app": str(chart.get("appVersion") or ""),
                     "kube": str(chart.get("kubeVersion") or ""), "date": date})
    return sorted(rows, key=lambda r: [int(p) if p.isdigit() else 0 for p in r["version"].lstrip("v").split("-")[0].split(".")])


def lines(rows: list[dict]) -> list[dict]:
    """The first release of each chart minor, and each later one that changes the app minor or kubeVersion."""
    kept, last = [], None
    for row in rows:
        key = (minor(row["version"]), minor(row["app"]), row["kube"])
        if last is None or key != last:
            kept.append(row)
        last = key
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("chart_yaml")
    parser.add_argument("--tags", default="", help="only tags starting with this")
    parser.add_argument("--minors", action="store_true", help="only the rows a data file lists")
    args = parser.parse_args()
    rows = history(args.git_dir, args.chart_yaml, args.tags)
    if args.minors:
        rows = lines(rows)
    if not rows:
        sys.exit(f"no tag starting with {args.tags!r} holds {args.chart_yaml}")
    for row in rows:
        print(f"{row['version']:>12}  app {row['app'] or '-':<12} kubeVersion {row['kube'] or '-':<22} "
              f"{row['date']}  {row['tag']}:{args.chart_yaml}")


if __name__ == "__main__":
    main()
