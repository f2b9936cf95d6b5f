"""Command line entry point: `kubehop scan`, `fix`, `rules` (the component and plan commands are in
scanner/cli_plan.py, `tools` in scanner/cli_tools.py, each imported when its command is asked for; what they
share in scanner/cli_shared.py). Heavy modules are imported inside commands."""

from __future__ import annotations

import gc
import os
import sys

import click

from scanner.cli_shared import (MINOR, analysis_inputs, check_outputs, chosen_output, cli, config_for, config_options,
                                emit_all, minor_sources, options_of, output_options, report_option, settings,
                                unknown_option, use_color)
from scanner.config import CONFIG_FILE
from scanner.model import EXIT_BLOCKED, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, FAIL_ON_LEVELS
from scanner.report import FORMATS
from scanner.versions import Minor
from scanner.words import count


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--target", "-t", type=MINOR, default=None,
              help="Minor to reach (default: the configuration's, else the newest the data knows).")
@click.option("--from", "current", type=MINOR, default=None,
              help="Minor the cluster runs today: hops start there.")
@output_options(FORMATS)
@config_options
@click.option("--write-baseline", type=click.Path(dir_okay=False), default=None,
              help="Record today's findings in this baseline file (then they no longer fail the scan).")
@report_option(FORMATS, "sarif=kubehop.sarif")
@click.option("--fail-on", type=click.Choice(FAIL_ON_LEVELS), default="error", show_default=True,
              help="Findings that make the exit code 1: blockers only, any finding, or none.")
@analysis_inputs
@unknown_option
def scan(paths, target, current, output, fmt, output_file, config_file, no_config, write_baseline, reports, fail_on,
         unknown, **inputs) -> None:
    """Report what blocks each hop up to --target, with file and line.

    PATHS are files or folders of YAML/JSON manifests; '-' reads standard input
    (they may be left out with --helm-releases).
    Helm charts (folders with Chart.yaml) are rendered with helm for the target
    minor; folders with a kustomization are built with kustomize (or kubectl).
    Without PATHS, the configuration's `paths` are scanned.

    \b
    Examples:
      kubehop scan --target 1.36 platform/
      kubehop scan --from 1.31 --target 1.36 platform/ apps/
      helm template x ./chart | kubehop scan --target 1.36 -
      kubehop scan -o json platform/ > report.json
      kubehop scan -o wide platform/                (one line per finding)
      kubehop scan -o csv --output-file findings.csv platform/
      kubehop scan --target 1.33 --values prod.yaml charts/web
      kubectl get secrets -A -l owner=helm -o yaml > releases.yaml
      kubehop scan --target 1.33 --helm-releases releases.yaml platform/
      kubehop scan --write-baseline .kubehop-baseline.json platform/
      kubehop scan --cluster-state dump/ --target 1.36 platform/
      kubehop scan -o github --report sarif=kubehop.sarif --report markdown=summary.md platform/

    \b
    Findings are silenced in the manifests themselves with a comment, on the
    finding's line or at the top of a document:
      # kubehop: ignore[extensions/v1beta1/Ingress] -- migrated by the platform team in Q3

    Formats (-o): text, wide (one line per finding), json, yaml, csv (a row
    per finding), sarif (GitHub code scanning), markdown (pull-request comment,
    step summary), github (workflow annotations).

    \b
    Exit codes: 0 nothing blocks the target; 1 blockers found (with
    --fail-on warning: any finding; with --fail-on never: never);
    2 usage error; 3 some input could not be read (the rest was scanned);
    4 kubehop failed (a bug: please report it).
    """
    from scanner.baseline import BaselineError
    from scanner.data import DataError
    from scanner.fleet import FleetChoiceError
    from scanner.report import documents
    from scanner.scan import scan as run_scan

    fmt, output = chosen_output(output, fmt, output_file, FORMATS)
    config = config_for(config_file, no_config, paths)
    missing = None if inputs["helm_releases"] else f"give PATHS to scan, or --helm-releases, or `paths` in {CONFIG_FILE}"
    sources = minor_sources(config, target, current)
    paths, target, current = settings(config, paths, target, current, missing)
    check_outputs([output] + [path for _, path in reports])
    options, version_file = options_of(config, inputs, write_baseline=write_baseline, fail_on=fail_on,
                                       unknown=unknown, **sources)
    try:
        result = run_scan(paths, target=target, current=current, options=options, version_file=version_file,
                          cluster=inputs["cluster"])
    except (BaselineError, DataError, FleetChoiceError) as err:
        raise click.UsageError(str(err)) from None
    for report_fmt, path in reports:
        emit_all(documents(result, report_fmt, path))
    emit_all(documents(result, fmt, output, color=fmt == "text" and output is None and use_color()))
    sys.exit(result.exit_code)


@cli.command("fix")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--target", "-t", type=MINOR, default=None,
              help="Minor to reach (default: the configuration's, else the newest the data knows).")
@click.option("--from", "current", type=MINOR, default=None,
              help="Minor the cluster runs today: APIs it does not serve yet are left alone.")
@click.option("--write", is_flag=True, help="Write the changes to the files instead of showing a diff.")
@config_options
def fix_command(paths, target, current, write, config_file, no_config) -> None:
    """Rewrite deprecated apiVersions that have a mechanical migration.

    The apiVersion moves with the field changes that go with it (Ingress backends
    and pathType, flowcontrol's nominalConcurrencyShares...). Comments, key order,
    quoting and every untouched line stay as they are. Helm chart templates only get
    a plain `apiVersion:` line rewritten. Without --write, a unified diff is printed
    (apply it with `git apply`); what needs a person is listed on standard error.

    \b
    Examples:
      kubehop fix --target 1.36 platform/
      kubehop fix --target 1.36 platform/ | git apply
      kubehop fix --from 1.31 --target 1.36 --write platform/

    \b
    Exit codes: 0 nothing is left to migrate by hand; 1 some objects need a person;
    2 usage error; 3 some input could not be read; 4 kubehop failed (a bug).
    """
    from scanner.data import DataError
    from scanner.fix import fix
    from scanner.report import patch
    from scanner.report.plain import log_line, printable
    from scanner.fix.plan import Planner
    from scanner.fix.write import NotWritten, Stopped, die_of, write_fixed
    from scanner.model import Diagnostic
    from scanner.rulebook import load_rulebook
    from scanner.exclusions import Exclusions
    from scanner.freshness import relied_on

    if "-" in paths:
        raise click.UsageError("fix rewrites files; it cannot read standard input")
    config = config_for(config_file, no_config, paths)
    paths, target, current = settings(config, paths, target, current,
                                       f"give PATHS to fix, or `paths` in {CONFIG_FILE}")
    relied_on()
    try:
        result = fix(paths, Planner(target, current, load_rulebook(config.rules), config.ignore),
                     [Exclusions(str(config.folder), config.exclude)])
    except DataError as err:
        raise click.UsageError(str(err)) from None
    result.diagnostics[:0] = config.problems
    unwritten = []  # files left as they were: their objects are left to a person
    for change in result.files:
        if write:
            try:
                write_fixed(change.path, change.fixed)
            except NotWritten as reason:
                unwritten.append(change)
                result.diagnostics.append(Diagnostic(change.path, str(reason), level="notice"))
            except OSError as err:
                unwritten.append(change)
                result.diagnostics.append(Diagnostic(change.path, f"cannot write: {err.strerror or err}"))
            except Stopped as stop:  # the file being written was left as it was, its temporary file removed
                done = result.files.index(change) - len(unwritten)
                click.echo(f"stopped by signal {stop.signum}: {count(done, 'file')} written, the rest left as "
                           "they were", err=True)
                die_of(stop.signum)
        else:
            diff = patch.unified_diff(os.path.relpath(change.path), change.original, change.fixed, change.pieces)
            unsafe = patch.unsafe_line(diff)
            if unsafe is None:
                click.echo(diff, nl=False)
            else:  # a line of the file itself would be a workflow command or a terminal control in a log
                unwritten.append(change)
                result.diagnostics.append(Diagnostic(change.path, (
                    f"its diff is not printed: line {unsafe} of it would be read as a command by a CI log or a "
                    "terminal; `kubehop fix --write` applies it"), level="notice"))
    for line in [*(f"not migrated: {left}" for left in result.left), *map(str, result.diagnostics)]:
        click.echo(log_line(printable(line)), err=True)
    changed = [f for f in result.files if f not in unwritten]
    click.echo(f"{count(sum(f.migrated for f in changed), 'object')} {'migrated' if write else 'to migrate'} in "
               f"{count(len(changed), 'file')}; {len(result.left) + sum(f.migrated for f in unwritten)} left to "
               "a person", err=True)
    sys.exit(EXIT_INPUT if any(d.level == "error" for d in result.diagnostics)
             else EXIT_BLOCKED if result.left or unwritten else EXIT_OK)


@cli.command("rules")
@click.option("--removed-in", type=MINOR, default=None, help="Only rules whose API stops being served in this minor.")
@click.option("--output", "-o", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
@click.option("--fields", is_flag=True,
              help="List the field rules instead: volume types, fields, annotations and node labels.")
@click.option("--checks", "every_check", is_flag=True,
              help="List every check instead, with its scope and the rules it declares (the ids `ignore` and "
                   "`severity` take).")
def rules_command(removed_in, fmt, fields, every_check) -> None:
    """List the API removal rules kubehop knows.

    \b
    Examples:
      kubehop rules
      kubehop rules --removed-in 1.32
      kubehop rules -o json
      kubehop rules --fields --removed-in 1.33
      kubehop rules --checks
    """
    from scanner.checks.registry import rules_from
    from scanner.freshness import data_checked, relied_on
    from scanner.report.plain import log_json, log_lines
    from scanner.rulebook import load_rulebook

    book = load_rulebook()
    relied_on()
    if every_check:
        if fields or removed_in is not None:
            raise click.UsageError("--checks lists every rule: it takes neither --fields nor --removed-in")
        _echo_checks(book, fmt)
        return
    if fields:
        _echo_field_rules(sorted((info.entry for info in rules_from("rules/fields", book).values()
                                  if removed_in is None or info.entry.removed_in == removed_in),
                                 key=lambda r: (r.removed_in or Minor(99, 0), r.id)), fmt)
        return
    rules = [info.entry for info in rules_from("rules/core", book).values()
             if removed_in is None or info.entry.removed_in == removed_in]
    if fmt == "json":
        click.echo(log_json([{
            "id": r.id, "apiVersion": r.api_version, "kind": r.kind,
            "deprecated_in": str(r.deprecated_in),
            "removed_in": str(r.removed_in) if r.removed_in else None,
            "replacement": r.replacement, "note": r.note, "source": r.source, "projected": r.projected,
        } for r in rules], ensure_ascii=True), nl=False)
        return
    lines = []
    for r in rules:
        removed = f"removed in {r.removed_in}" if r.removed_in else "deprecated only"
        if r.projected:
            removed += " (projected)"
        lines.append(f"{r.id:<60} deprecated {r.deprecated_in}, {removed}; use {r.replacement or '(no successor)'}")
    click.echo(log_lines([*lines, f"{count(len(rules), 'rule')} (data checked {data_checked()})"]), nl=False)


def _echo_field_rules(rules, fmt: str) -> None:
    def minor(value) -> str | None:
        return str(value) if value else None

    from scanner.freshness import data_checked
    from scanner.report.plain import log_json, log_lines

    if fmt == "json":
        click.echo(log_json([{
            "id": r.id, "title": r.title,
            "deprecated_in": minor(r.deprecated_in), "removed_in": minor(r.removed_in),
            "replacement": r.replacement, "note": r.note, "source": r.source,
        } for r in rules], ensure_ascii=True), nl=False)
        return
    lines = []
    for r in rules:
        deprecated = f"deprecated {r.deprecated_in}" if r.deprecated_in else "deprecated"
        when = f"stops working in {r.removed_in}" if r.removed_in else deprecated
        lines.append(f"{r.id:<48} {when}; use {r.replacement or '(nothing)'}")
    click.echo(log_lines([*lines, f"{count(len(rules), 'field rule')} (data checked {data_checked()})"]), nl=False)


def _echo_checks(book, fmt: str) -> None:
    """Every check and the rules it declares (scanner.checks.registry): in JSON all of them; in text, the
    rules the data declares (one per API, field, component...) as their pattern and count."""
    from scanner.checks.registry import Rules, check_name, checks, rules_of
    from scanner.report.plain import log_json, log_lines

    listed = []
    for check in checks():
        rules, declared = rules_of(check, book), check.RULES
        family = declared if isinstance(declared, Rules) and declared.pattern else None
        listed.append({"check": check_name(check), "scope": check.SCOPE, "pattern": family and family.pattern,
                       "data": family and family.data, "rules": [
                           {"id": rule_id, "severity": info.severity, "title": info.title,
                            "description": info.description, "help_url": info.help_url}
                           for rule_id, info in rules.items()]})
    if fmt == "json":
        click.echo(log_json(listed, ensure_ascii=True), nl=False)
        return
    lines = []
    for entry in listed:
        lines.append(f"{entry['check']} ({entry['scope']})")
        if entry["pattern"]:
            lines.append(f"  {entry['pattern']:<58} {count(len(entry['rules']), 'rule')} from {entry['data']}")
            continue
        lines.extend(f"  {r['id']:<48} {r['severity']:<8} {r['title']}" for r in entry["rules"])
    click.echo(log_lines([*lines, f"{count(len(listed), 'check')}, "
                                  f"{count(sum(len(e['rules']) for e in listed), 'rule')}"]), nl=False)


def main() -> None:
    from scanner.guard import debugging, describe

    # The process runs one command, and what it imports and reads lives until the process ends: the
    # cyclic collector's walks over that during the run (a tenth of a one-file run) would free nothing,
    # so it is paused for the command, as the analysis pauses it for its nodes (yamldoc.cyclic_gc_paused).
    # What is alive then is frozen, so that neither a last collection nor the exit walks it; files and
    # temporary folders are closed and removed by their own code (with-blocks, atexit), not by those walks.
    collecting = gc.isenabled()
    gc.disable()
    try:
        cli(prog_name="kubehop")  # usage errors are click's: exit code 2
    except Exception as err:  # noqa: BLE001 - anything else is a bug in kubehop, never "blockers found"
        if debugging():
            raise
        from scanner.report.plain import log_line, printable

        click.echo(log_line(f"kubehop: internal error ({printable(describe(err))}); please report it "
                            "(KUBEHOP_DEBUG=1 shows the traceback)"), err=True)
        sys.exit(EXIT_INTERNAL)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
