"""What the GitHub Action (action.yml) says around a scan, in the runner's own channels: workflow
commands in the job log (scanner.report.github.command escapes them) and Markdown in the step summary
(scanner.report.md). Run by the action's steps as `python -m scanner.report.action_steps STEP ...`.

- `usage-error STDERR SUMMARY`: kubehop stopped before scanning (a bad input, an unknown minor): the
  error as an annotation, and kubehop's own words in the step summary, which would be empty otherwise.
- `notices REPORT OUTPUT`: what the job's reader must not miss, from the JSON report: a tool kubehop
  could not use (helm not found, too old; no kustomize) as a warning annotation; each folder given
  that holds no Kubernetes object (a wrong path) as an error annotation, and `empty-paths=N` appended
  to OUTPUT ($GITHUB_OUTPUT): the action fails on it.
"""

from __future__ import annotations

import json
import sys

from scanner.report import md
from scanner.report.github import command

# kubehop's own words for a tool it could not use (scanner.sources.helm.source, helm.capture.unsupported).
_TOOL_NOTICES = ("helm was not found", "neither kustomize nor kubectl found", "kubehop renders with helm ")


def usage_error(stderr: str) -> tuple[list[str], str]:
    """The annotations and the step summary for a run kubehop stopped with a usage error."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("Error:")] or lines[-1:] or ["kubehop stopped (no message)"]
    annotation = command("error", [line.removeprefix("Error:").strip() for line in said],
                         title="kubehop: usage error (nothing was scanned)")
    summary = "\n".join(["## kubehop: usage error", "", "Nothing was scanned. kubehop said:", "",
                         *md.fenced(lines or ["(nothing)"]), ""])
    return [annotation], md.document(summary) + "\n"


def notices(report: dict) -> tuple[list[str], int]:
    """The annotations for what the report's notices say about the tools and the paths, and how many
    paths held no Kubernetes object."""
    out = [command("warning", notice, title="kubehop: charts or kustomizations not rendered")
           for notice in report.get("notices", []) if any(words in notice for words in _TOOL_NOTICES)]
    empty = report.get("summary", {}).get("empty_paths", [])
    out += [command("error", f"no Kubernetes objects found in {path}: is the action's `paths` input right?",
                    title="kubehop: nothing checked") for path in empty]
    return out, len(empty)


def main(argv: list[str]) -> int:
    step, *args = argv
    if step == "usage-error":
        stderr_path, summary_path = args
        with open(stderr_path, encoding="utf-8", errors="replace") as handle:
            annotations, summary = usage_error(handle.read())
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(summary)
        print("\n".join(annotations))
        return 0
    if step == "notices":
        [report_path, output_path] = args
        with open(report_path, encoding="utf-8") as handle:
            annotations, empty = notices(json.load(handle))
        if annotations:
            print("\n".join(annotations))
        with open(output_path, "a", encoding="utf-8") as handle:
            handle.write(f"empty-paths={empty}\n")
        return 0
    print(f"unknown step {step!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
