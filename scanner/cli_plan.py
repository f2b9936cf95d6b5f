"""Commands about components and the hop plan: `kubehop components`, `plan`, `inventory`.

Registered on the `kubehop` group (scanner/cli_shared.py) when the group first looks one of them up
(cli_shared.ELSEWHERE); heavy modules are imported inside commands.
"""

from __future__ import annotations

import sys

import click

from scanner.cli_shared import (MINOR, analysis_inputs, check_outputs, chosen_output, cli, config_for, config_options,
                                emit, emit_all, minor_sources, options_of, output_options, report_option,
                                scan_options, settings, unknown_option)
from scanner.model import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK

PLAN_FORMATS = ("text", "json", "yaml", "markdown")


def _paths_argument(function):
    return click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))(function)


def _json_or_yaml(json_text: str, fmt: str) -> str:
    if fmt != "yaml":
        return json_text
    from scanner.report.yaml_report import from_json

    return from_json(json_text)


def _report_input_problems(source) -> bool:
    """What the sources could not read, and what they left out, on standard error; True on errors."""
    from scanner.report.plain import log_line, printable

    errors = [d for d in source.diagnostics if d.level == "error"]
    for problem in errors:
        click.echo(log_line(f"kubehop: {printable(problem)}"), err=True)
    for notice in source.notices:
        click.echo(log_line(f"kubehop: notice: {printable(notice)}"), err=True)
    return bool(errors)


def _analysis(paths: tuple[str, ...], config_file: str | None, no_config: bool):
    """The analysis `scan` makes of the tree at the newest minor, read as the configuration says
    (exclusions, the kustomize load restrictor): what `components` and `inventory` show."""
    from scanner.analysis import analyse
    from scanner.baseline import BaselineError
    from scanner.data import DataError
    from scanner.rulebook import load_rulebook

    config = config_for(config_file, no_config, paths)
    try:
        return analyse(list(paths), load_rulebook().newest, options=scan_options(config, (), (), (), None, None))
    except (BaselineError, DataError) as problem:  # as `scan` says them (a configuration's missing baseline)
        raise click.UsageError(str(problem)) from None


@cli.command()
@_paths_argument
@click.option("--output", "-o", "--format", "fmt", type=click.Choice(["text", "json", "yaml"]), default="text",
              show_default=True, help="Output format.")
@config_options
def components(paths, fmt, config_file, no_config) -> None:
    """List the components a tree pins: version or range, release, supported Kubernetes, file:line.

    \b
    Examples:
      kubehop components platform/
      kubehop components -o json platform/ infra/
    """
    from scanner.components.catalog import load_catalog
    from scanner.report import components as report

    analysis = _analysis(paths, config_file, no_config)
    tree, timeline = analysis.tree, analysis.timeline
    if fmt == "text":
        click.echo(report.render_text(tree, load_catalog(), timeline), nl=False)
    else:
        click.echo(_json_or_yaml(report.render_json(tree, timeline), fmt), nl=False)
    sys.exit(EXIT_INPUT if _report_input_problems(analysis) else EXIT_OK)


@cli.command("plan")
@_paths_argument
@click.option("--target", "-t", type=MINOR, default=None,
              help="Minor to reach (default: the configuration's, else the newest the data knows).")
@click.option("--from", "current", type=MINOR, default=None,
              help="Minor the cluster runs today (default: the configuration's, else read from the tree "
                   "or --cluster-version-file).")
@click.option("--distro", default=None, help="kubernetes, k3s or rke2 (default: read from the cluster's version).")
@output_options(PLAN_FORMATS, "plan")
@report_option(PLAN_FORMATS, "json=plan.json")
@click.option("--orders", "orders_folder", type=click.Path(file_okay=False, writable=True), default=None,
              help="Write each window's upgrade orders (system-upgrade Plans, KubernetesNodeUpgrade) to "
                   "DIR/NN-<minor>/, at the paths of the tree's own orders. DIR must be outside the tree.")
@click.option("--window", "window", type=click.IntRange(min=1), default=None,
              help="Window N as the change set its pull request needs: what it writes and what is left to a "
                   "person (-o markdown: the pull request's body).")
@click.option("--diff", "diff", is_flag=True, help="With --window: print the change set as a diff (| git apply); "
                                                   "the report goes to --output-file, if given.")
@click.option("--write", "write", is_flag=True, help="With --window: write the change set into the tree.")
@config_options
@analysis_inputs
@unknown_option
def plan_command(paths, target, current, distro, output, fmt, output_file, reports, orders_folder, window, diff,
                 write, config_file, no_config, unknown, **inputs) -> None:
    """One window per hop: what moves before it, what it breaks, what may move after.

    \b
    Examples:
      kubehop plan --from 1.31 --target 1.36 platform/ infra/
      kubehop plan --target 1.36 .            (the cluster version is read from the tree)
      kubehop plan --from 1.31 -o markdown . >> "$GITHUB_STEP_SUMMARY"
      kubehop plan --from 1.31 --orders ../orders cluster/   (cluster/'s orders for each hop)
      kubehop plan --from 1.31 --window 1 --diff . | git apply   (W1 as a change set)
      kubehop plan --from 1.31 --window 1 --write -o markdown --output-file pr.md .
      kubehop plan --from 1.31 --window 1 --diff --report json=w1.json . > w1.diff

    \b
    Exit codes: 0 nothing known blocks the target; 1 blockers found;
    2 usage error; 3 some input could not be read; 4 kubehop failed (a bug).
    With --window: 0 the change set is the whole window; 1 steps are left
    to a person.
    """
    from scanner.baseline import BaselineError
    from scanner.data import DataError
    from scanner.fleet import FleetChoiceError
    from scanner.fleet_plan import FleetPlan, plan_paths
    from scanner.plan import PlanInputError, PlanRequest

    fmt, output = chosen_output(output, fmt, output_file, PLAN_FORMATS)
    check_outputs([output] + [path for _, path in reports])
    if (diff or write) and window is None:
        raise click.UsageError("--diff and --write need --window N: the window whose change set to make")
    if diff and write:
        raise click.UsageError("give --diff or --write, not both")
    if window is not None and "-" in paths:
        raise click.UsageError("--window writes the tree's own files; it cannot read standard input")
    config = config_for(config_file, no_config, paths)
    sources = minor_sources(config, target, current)
    _, target, current = settings(config, paths, target, current, None)
    if distro is not None:
        _known_distro(distro)
    options, version_file = options_of(config, inputs, unknown=unknown, **sources)  # as `scan` reads the tree
    try:
        plan, analysis = plan_paths(PlanRequest(list(paths), target, current, distro, version_file, options.unknown,
                                                options, cluster=inputs["cluster"]))
    except (PlanInputError, BaselineError, DataError, FleetChoiceError) as problem:  # as `scan` says them
        raise click.UsageError(str(problem)) from None
    if isinstance(plan, FleetPlan):
        if window is not None:  # a pull request moves one cluster
            raise click.UsageError(f"--window makes one cluster's change set, and the tree holds {len(plan.plans)} "
                                   f"clusters ({', '.join(c.name for c, _ in plan.plans)}): give --cluster NAME "
                                   "with it")
        _emit_fleet(plan, [(fmt, output), *reports], orders_folder)
        sys.exit(EXIT_INPUT if _report_input_problems(analysis) else EXIT_BLOCKED if plan.blocked else EXIT_OK)
    _attach_orders(plan, analysis.orders, paths, orders_folder)
    if window is not None:
        from scanner.cli_changes import change_set_command

        scope = analysis.clusters[0].cluster.paths if analysis.clusters else paths  # --cluster's own paths
        others = [c for c in analysis.fleet if c.name != inputs["cluster"]]  # they deploy shared files too
        code = change_set_command(plan, analysis, paths, scope, options, window, diff, write, fmt, output, others,
                                  reports)
        sys.exit(EXIT_INPUT if _report_input_problems(analysis) else code)
    for report_fmt, path in [*reports, (fmt, output)]:  # each report's module only when it is asked for
        if report_fmt == "markdown":
            from scanner.report import comment, plan_markdown

            emit_all(comment.outputs(lambda limit, full: plan_markdown.render(plan, limit, full), path))
        elif report_fmt == "text":
            from scanner.report import plan_text

            emit(plan_text.render(plan), path)
        else:
            from scanner.report import plan_json

            emit(_json_or_yaml(plan_json.render(plan), report_fmt), path)
    if _report_input_problems(analysis):
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_BLOCKED if plan.blocked else EXIT_OK)


def _emit_fleet(fleet, outputs: list[tuple[str, str | None]], orders_folder: str | None) -> None:
    """Each cluster's plan (its orders from its own paths, into DIR/<cluster>/ with --orders), in each
    (format, file) of `outputs` (None: standard output)."""
    import os

    from scanner.report import plan_fleet

    for cluster, plan in fleet.plans:
        folder = os.path.join(orders_folder, cluster.name) if orders_folder else None
        if folder:
            os.makedirs(folder, exist_ok=True)
        _attach_orders(plan, plan.analysis.orders, cluster.paths, folder)
    render = {"text": plan_fleet.render_text, "json": plan_fleet.render_json, "markdown": plan_fleet.render_markdown,
              "yaml": lambda plans: _json_or_yaml(plan_fleet.render_json(plans), "yaml")}
    for fmt, output in outputs:
        emit(render[fmt](fleet), output)


def _known_distro(distro: str) -> None:
    """--distro names a distribution the data knows (read only when --distro is given)."""
    from scanner.components.catalog import load_catalog
    from scanner.orders.version import cluster_distros

    distros = sorted({"kubernetes", *cluster_distros(), *load_catalog().distros})
    if distro not in distros:
        raise click.BadParameter(f"{distro!r}: known distributions are {', '.join(distros)}", param_hint="--distro")


def _attach_orders(plan, orders, paths, folder: str | None) -> None:
    """The upgrade orders (the analysis') of each window, shown in the plan; written under `folder` when given."""
    import os

    on_disk = [os.path.abspath(p) for p in paths if p != "-"]
    if not on_disk:
        return
    roots = [p if os.path.isdir(p) else os.path.dirname(p) for p in on_disk]
    root = os.path.commonpath(roots)
    if folder is not None:
        target = os.path.abspath(folder)
        if any(os.path.commonpath([target, r]) == r for r in roots):
            raise click.BadParameter(f"{folder} is inside a scanned path: each window's orders would be read "
                                     "as part of the tree; give a folder outside it", param_hint="--orders")
    if orders:  # their writer (and ruamel.yaml) only for a tree that has some
        from pathlib import Path

        from scanner.orders.write import orders_for_windows, write

        result = orders_for_windows(orders, [(w.number, w.source, w.target) for w in plan.windows], root)
        for window in plan.windows:
            window.orders = result.for_window(window.number)
        plan.order_notes = result.notes
        if folder is not None:
            write(result, Path(folder))
    if folder is not None:
        plan.orders_folder = folder


@cli.command()
@_paths_argument
@click.option("--output", "-o", "--format", "fmt", type=click.Choice(["text", "json", "yaml"]), default="text",
              show_default=True, help="Output format.")
@config_options
def inventory(paths, fmt, config_file, no_config) -> None:
    """The API surface a tree uses: apiVersion/kind counts and the minors that serve each.

    \b
    Examples:
      kubehop inventory platform/ apps/
      kubehop inventory -o json . | jq '.[] | select(.served == "CRD")'
    """
    from scanner import inventory as api_inventory
    from scanner.components.catalog import load_catalog
    from scanner.rulebook import load_rulebook

    analysis = _analysis(paths, config_file, no_config)
    served = load_rulebook().served
    uses = api_inventory.inventory(analysis.manifests, served, load_catalog())
    click.echo(_json_or_yaml(api_inventory.render_json(uses), fmt) if fmt != "text"
               else api_inventory.render_text(uses, served.minors), nl=False)
    sys.exit(EXIT_INPUT if _report_input_problems(analysis) else EXIT_OK)
