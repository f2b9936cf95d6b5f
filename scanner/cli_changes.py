"""`kubehop plan --window N`: one window as the change set its pull request needs.

Called by `plan` (scanner/cli_plan.py) once the plan is made: prints the diff (`--diff`), writes it
(`--write`), and the report in the chosen format (Markdown: the pull request's body) to standard
output, or to --output-file when the diff takes standard output.
"""

from __future__ import annotations

import click

from scanner.cli_shared import emit, emit_all
from scanner.model import EXIT_BLOCKED, EXIT_OK


def change_set_command(plan, analysis, paths, scope, options, number: int, diff: bool, write: bool, fmt: str,
                       output: str | None, others=(), reports: list[tuple[str, str]] = ()) -> int:
    """Make, print or write window `number`'s change set; the exit code (0: the whole window is written,
    1: steps are left to a person or files could not be written). `paths`: the tree given (nothing
    outside it is written); `scope`: the paths of the cluster planned (all of them, but in a fleet);
    `others`: the fleet's other clusters, which move with an edit to a file they deploy too; `reports`:
    more (format, file) of the same change set (--report)."""
    from scanner.changes import NoSuchWindow, change_set, tree_root
    from scanner.report import change_diff, change_markdown, change_text, comment
    from scanner.paths import repo_path
    from scanner.report.plain import log_line, printable
    from scanner.report.yaml_report import from_json

    try:
        changes = change_set(plan, analysis, number, list(scope), options, root=tree_root(paths))
    except NoSuchWindow as why:
        raise click.BadParameter(str(why), param_hint="--window") from None
    if analysis.clusters:  # one cluster of a fleet (--cluster)
        from scanner.fleet_shared import deployed_elsewhere

        changes.cluster = analysis.clusters[0].cluster.name
        changes.shared = deployed_elsewhere([f.path for f in changes.files], others, tree_root(paths))
    problems: list[str] = []
    if write:
        from scanner.changes.apply import apply

        for change, why in apply(changes, tree_root(paths)):
            problems.append(f"{repo_path(change.path)}: {why}")
    elif diff:
        text, left_out = change_diff.render(changes)
        click.echo(text, nl=False)
        problems += left_out
    report = {"text": change_text.render, "json": change_text.render_json,
              "yaml": lambda changes: from_json(change_text.render_json(changes))}
    outputs = [*reports, *([(fmt, output)] if not (diff or write) or output else [])]
    for report_fmt, path in outputs:
        if report_fmt == "markdown":
            emit_all(comment.outputs(lambda limit, full: change_markdown.render(changes, limit, full), path))
        else:
            emit(report[report_fmt](changes), path)
    if diff or write:
        for manual in changes.manual:
            for line in change_text.manual_lines(manual, ""):
                click.echo(log_line(f"kubehop: left to a person: {printable(line.strip())}"), err=True)
        changed = len(changes.files) - len(problems) if write else len(changes.files)
        click.echo(log_line(f"kubehop: W{number}: {changed} file(s) {'written' if write else 'in the diff'}; "
                            f"{len(changes.manual)} step(s) left to a person"), err=True)
        for line in change_text.shared_lines(changes):
            click.echo(log_line(f"kubehop: notice: {printable(line)}"), err=True)
    for problem in problems:
        click.echo(log_line(f"kubehop: notice: {printable(problem)}"), err=True)
    return EXIT_OK if changes.complete and not problems else EXIT_BLOCKED
