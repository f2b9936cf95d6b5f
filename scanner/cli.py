"""Command line: `kubehop scan`, `kubehop rules`. Heavy modules are imported inside commands."""

from __future__ import annotations

import os
import sys

import click

from scanner import __version__
from scanner.model import FAIL_ON_LEVELS
from scanner.report import FORMATS
from scanner.versions import Minor, parse_minor

EXIT_USAGE = 2


def _version_message() -> str:
    from scanner.rulebook import load_rulebook

    return f"kubehop {__version__} (data checked {load_rulebook().checked})"


class MinorType(click.ParamType):
    """A Kubernetes minor the data knows: 1.36, v1.36 and v1.36.2 all mean 1.36."""

    name = "MINOR"

    def convert(self, value, param, ctx) -> Minor:
        if isinstance(value, Minor):
            return value
        from scanner.rulebook import load_rulebook

        book = load_rulebook()
        try:
            minor = parse_minor(value)
        except ValueError:
            self.fail(f"{value!r} is not a Kubernetes version; known minors: {book.oldest} to {book.newest}",
                      param, ctx)
        if not book.known(minor):
            self.fail(f"{value!r}: kubehop knows Kubernetes {book.oldest} to {book.newest}", param, ctx)
        return minor


MINOR = MinorType()


def _print_version(ctx, param, value) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version_message())
        ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and the date the data was last checked.")
def cli() -> None:
    """What breaks when a cluster moves from one Kubernetes minor to the next.

    \b
    Example:
      kubehop scan --target 1.36 platform/
    """


def _parse_reports(ctx, param, values) -> list[tuple[str, str]]:
    reports = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not path:
            raise click.BadParameter(f"{value!r}: expected FORMAT=FILE, e.g. sarif=kubehop.sarif", ctx, param)
        if fmt not in FORMATS:
            raise click.BadParameter(f"{value!r}: format must be one of {', '.join(FORMATS)}", ctx, param)
        reports.append((fmt, path))
    return reports


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--target", "-t", type=MINOR, default=None,
              help="Minor to reach (default: the newest the data knows).")
@click.option("--from", "current", type=MINOR, default=None,
              help="Minor the cluster runs today: hops start there.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to a file instead of standard output.")
@click.option("--report", "reports", multiple=True, metavar="FORMAT=FILE", callback=_parse_reports,
              help="Also write a report in FORMAT to FILE; repeatable (e.g. --report sarif=kubehop.sarif).")
@click.option("--fail-on", type=click.Choice(FAIL_ON_LEVELS), default="error", show_default=True,
              help="Findings that make the exit code 1: blockers only, any finding, or none.")
@click.option("--values", "-f", "values_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Helm values file for every chart found (repeatable; later files win).")
@click.option("--helm-releases", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Output of `kubectl get secrets -A -l owner=helm -o yaml`: scan what Helm has deployed.")
@click.option("--allow-network", is_flag=True,
              help="Let helm download the remote charts of Flux HelmReleases and kustomize fetch remote "
                   "bases (nothing is downloaded without it).")
@click.option("--no-render", is_flag=True,
              help="Read Helm templates as text and do not build kustomizations.")
@click.option("--cluster-state", "cluster_state", multiple=True, type=click.Path(exists=True),
              help="File or folder of kubectl dumps (get crd / get <resource> -A / get nodes -o yaml, "
                   "version -o json): checks stored versions, objects and node skew. Repeatable.")
def scan(paths, target, current, fmt, output, reports, fail_on, values_files, helm_releases, allow_network,
         no_render, cluster_state) -> None:
    """Report what blocks each hop up to --target, with file and line.

    PATHS are files or folders of YAML/JSON manifests; '-' reads standard input
    (they may be left out with --helm-releases).
    Helm charts (folders with Chart.yaml) are rendered with helm for the target
    minor; folders with a kustomization are built with kustomize (or kubectl).

    \b
    Examples:
      kubehop scan --target 1.36 platform/
      kubehop scan --from 1.31 --target 1.36 platform/ apps/
      helm template x ./chart | kubehop scan --target 1.36 -
      kubehop scan --format json platform/ > report.json
      kubehop scan --target 1.33 --values prod.yaml charts/web
      kubectl get secrets -A -l owner=helm -o yaml > releases.yaml
      kubehop scan --target 1.33 --helm-releases releases.yaml platform/
      kubehop scan --cluster-state dump/ --target 1.36 platform/
      kubehop scan --format github --report sarif=kubehop.sarif --report markdown=summary.md platform/

    \b
    Formats: text, json, sarif (GitHub code scanning), markdown (pull-request
    comment, step summary), github (workflow annotations).

    \b
    Exit codes: 0 nothing blocks the target; 1 blockers found (with
    --fail-on warning: any finding; with --fail-on never: never);
    2 usage error; 3 some input could not be read (the rest was scanned).
    """
    from scanner.report import render
    from scanner.rulebook import load_rulebook
    from scanner.scan import ScanOptions
    from scanner.scan import scan as run_scan

    if not paths and not helm_releases:
        raise click.UsageError("give PATHS to scan, or --helm-releases")
    target = target or load_rulebook().newest
    if current is not None and current > target:
        raise click.UsageError(f"--from {current} is newer than --target {target}")
    _check_outputs([output] + [path for _, path in reports])
    options = ScanOptions(allow_network=allow_network, values_files=values_files, helm_releases=helm_releases,
                          render=not no_render, cluster_state=tuple(cluster_state), fail_on=fail_on)
    result = run_scan(list(paths), target=target, current=current, options=options)
    for report_fmt, path in reports:
        _write(path, render(result, report_fmt))
    text = render(result, fmt, color=fmt == "text" and output is None and _use_color())
    if output:
        _write(output, text)
    else:
        click.echo(text, nl=False)
    sys.exit(result.exit_code)


def _check_outputs(paths: list[str | None]) -> None:
    """Fail before scanning, not after, when a report could not be written."""
    given = [p for p in paths if p]
    seen = set()
    for path in given:
        real = os.path.realpath(path)
        if real in seen:
            raise click.UsageError(f"{path}: two reports would be written to the same file")
        seen.add(real)
        folder = os.path.dirname(real)
        if os.path.isdir(real):
            raise click.UsageError(f"{path} is a folder; give a file to write the report to")
        if not os.path.isdir(folder):
            raise click.UsageError(f"{path}: folder {folder} does not exist")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise click.UsageError(f"cannot write {path}: {err.strerror or err}") from err


@cli.command("rules")
@click.option("--removed-in", type=MINOR, default=None, help="Only rules whose API stops being served in this minor.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--fields", is_flag=True,
              help="List the field rules instead: volume types, fields, annotations and node labels.")
def rules_command(removed_in, fmt, fields) -> None:
    """List the API removal rules kubehop knows.

    \b
    Examples:
      kubehop rules
      kubehop rules --removed-in 1.32
      kubehop rules --format json
      kubehop rules --fields --removed-in 1.33
    """
    import json

    from scanner.rulebook import load_rulebook

    if fields:
        _echo_field_rules(sorted((r for r in load_rulebook().field_rules.rules
                                  if removed_in is None or r.removed_in == removed_in),
                                 key=lambda r: (r.removed_in or Minor(99, 0), r.id)), fmt)
        return
    rules = [r for r in load_rulebook().rules() if removed_in is None or r.removed_in == removed_in]
    if fmt == "json":
        click.echo(json.dumps([{
            "id": r.id, "apiVersion": r.api_version, "kind": r.kind,
            "deprecated_in": str(r.deprecated_in),
            "removed_in": str(r.removed_in) if r.removed_in else None,
            "replacement": r.replacement, "note": r.note, "source": r.source,
        } for r in rules], indent=2))
        return
    for r in rules:
        removed = f"removed in {r.removed_in}" if r.removed_in else "deprecated only"
        click.echo(f"{r.id:<60} deprecated {r.deprecated_in}, {removed}; use {r.replacement or '(no successor)'}")
    click.echo(f"{len(rules)} rules")


def _echo_field_rules(rules, fmt: str) -> None:
    def minor(value) -> str | None:
        return str(value) if value else None

    if fmt == "json":
        import json

        click.echo(json.dumps([{
            "id": r.id, "title": r.title,
            "deprecated_in": minor(r.deprecated_in), "removed_in": minor(r.removed_in),
            "replacement": r.replacement, "note": r.note, "source": r.source,
        } for r in rules], indent=2))
        return
    for r in rules:
        deprecated = f"deprecated {r.deprecated_in}" if r.deprecated_in else "deprecated"
        when = f"stops working in {r.removed_in}" if r.removed_in else deprecated
        click.echo(f"{r.id:<48} {when}; use {r.replacement or '(nothing)'}")
    click.echo(f"{len(rules)} field rule{'' if len(rules) == 1 else 's'}")


def _use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def main() -> None:
    cli(prog_name="kubehop")


# The component and plan commands live in their own module; importing it registers them.
import scanner.cli_plan  # noqa: E402,F401  (after `cli` and MINOR exist)
