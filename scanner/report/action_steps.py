"""What the GitHub Action (action.yml) says around a scan, in the runner's own channels: workflow
commands in the job log (scanner.report.github.command escapes them) and Markdown in the step summary
(scanner.report.md). Run by the action's steps as `python -m scanner.report.action_steps STEP ...`.

- `usage-error STDERR SUMMARY`: kubehop stopped before scanning (a bad input, an unknown minor): the
  error as an annotation, and kubehop's own words in the step summary, which would be empty otherwise.
- `notices REPORT OUTPUT`: what the job's reader must not miss, from the JSON report: a tool kubehop
  could not use (helm not found, too old; no kustomize) as a warning annotation; each folder given
  that holds no Kubernetes object (a wrong path) as an error annotation, and `empty-paths=N` appended
  to OUTPUT ($GITHUB_OUTPUT): the action fails on it.
- `change-set STDERR REPORT SUMMARY`: the next window's change set (`plan --window 1`, its JSON
  report REPORT): each step it leaves to a person as a notice annotation at the pin it names, and a
  section of the step summary saying what the artifact holds; when kubehop made none (REPORT is not
  there: a usage error, a fleet without --cluster), its words as a warning annotation and in the
  summary. The job's verdict stays the scan's.
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


def change_set(report: dict | None, stderr: str) -> tuple[list[str], str]:
    """The annotations and the step summary's section for the change set of the next window."""
    if report is None:
        lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("kubehop: notice:")]
        said = [line.removeprefix("Error:").strip() for line in lines if line.startswith("Error:")] or lines[-1:] \
            or ["kubehop stopped (no message)"]
        summary = "\n".join(["### kubehop: no change set of the next window", "", "kubehop said:", "",
                             *md.fenced(lines or ["(nothing)"]), ""])
        return [command("warning", said, title="kubehop: no change set written")], md.document(summary) + "\n"
    number, manual = report["window"], report["manual"]
    title = f"kubehop: W{number} left to a person"
    annotations = [command("notice", [f"{step['what']}: {step['why']}", *([f"run: {step['command']}"]
                                                                           if step.get("command") else [])],
                           **_file_and_line(step.get("where") or ""), title=title) for step in manual]
    files = len(report["files"])
    head = (f"### kubehop: change set of W{number}, Kubernetes {report['from']} → {report['to']}\n\n"
            f"{files} file{'s' if files != 1 else ''} in the diff, {len(manual)} "
            f"step{'s' if len(manual) != 1 else ''} left to a person: the diff and the pull request's body are "
            "the run's artifact `kubehop-change-set`.")
    steps = [f"- **{md.text(step['what'])}**: {md.text(step['why'])}"  # as the pull request's body says them
             + (f" ({md.path(step['where'])})" if step.get("where") else "") for step in manual]
    return annotations, md.document("\n".join([head, "", *steps, ""]) if steps else head + "\n") + "\n"


def _file_and_line(where: str) -> dict[str, str]:
    """`path:line[:column]` (scanner.paths.where) as an annotation's file and line."""
    parts = where.split(":")
    numbers = 0
    while numbers < 2 and len(parts) - numbers > 1 and parts[-1 - numbers].isdigit():
        numbers += 1
    if not where:
        return {}
    path = ":".join(parts[:len(parts) - numbers])
    return {"file": path, **({"line": parts[len(parts) - numbers]} if numbers else {})}


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
    if step == "change-set":
        stderr_path, report_path, summary_path = args
        with open(stderr_path, encoding="utf-8", errors="replace") as handle:
            stderr = handle.read()
        try:
            with open(report_path, encoding="utf-8") as handle:
                report = json.load(handle)
        except FileNotFoundError:
            report = None
        annotations, summary = change_set(report, stderr)
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(summary)
        if annotations:
            print("\n".join(annotations))
        return 0
    print(f"unknown step {step!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
