"""What the kubehop commands share: the command group, the minor type, the configuration and
settings every command reads the same way, and writing reports.

The commands register themselves on `cli` (scanner/cli.py: scan, fix, rules; scanner/cli_plan.py:
components, plan, inventory, and scanner/cli_tools.py: tools, each imported when one of its commands is
asked for: ELSEWHERE); heavy modules are imported inside functions.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import click

from scanner import __version__
from scanner.config import CONFIG_FILE
from scanner.versions import Minor, parse_minor


def _version_message() -> str:
    from scanner.freshness import data_checked, version_line
    from scanner.sources.tools import no_network, sandbox

    # How renders are kept from the network here without --allow-network (README, Security).
    older = version_line()
    return (f"kubehop {__version__} (data checked {data_checked()})\n" + (f"{older}\n" if older else "") +
            f"without --allow-network, helm runs with: {sandbox.isolation()}\n"
            f"without --allow-network, kustomize runs with: {no_network.isolation()}")


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
        if not book.accepts(minor):
            self.fail(f"{value!r}: kubehop knows Kubernetes {book.oldest} to {book.newest} "
                      f"(and {book.projected}, projected before its release)", param, ctx)
        return minor


MINOR = MinorType()


def _print_version(ctx, param, value) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version_message())
        ctx.exit()


# The commands other modules register on the group, by name: each module is imported when one of its
# commands is looked up (or all are listed), so that `kubehop scan` imports neither.
ELSEWHERE = {"components": "scanner.cli_plan", "plan": "scanner.cli_plan", "inventory": "scanner.cli_plan",
             "tools": "scanner.cli_tools"}


class _Group(click.Group):
    """The kubehop command group. A usage error may quote the tree (a configuration key, a baseline
    path a pull request wrote), and so may a library's warning (ruamel.yaml quotes the file's lines):
    both reach standard error printable, as every other line kubehop prints (scanner.report.plain)."""

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in ELSEWHERE:
            importlib.import_module(ELSEWHERE[cmd_name])
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx):
        for module in sorted(set(ELSEWHERE.values())):
            importlib.import_module(module)
        return super().list_commands(ctx)

    def invoke(self, ctx):
        import warnings

        from scanner.report.plain import log_line, printable

        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                # An anchor defined twice: YAML allows it, and kubehop reads it as YAML does.
                warnings.filterwarnings("ignore", message=r"\s*found duplicate anchor")
                return super().invoke(ctx)
        except click.ClickException as err:
            err.message = log_line(printable(err.message))
            raise


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from scanner.report.plain import log_line, printable

    click.echo(log_line(f"kubehop: warning: {printable(f'{category.__name__}: {message}')}"), err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and the date the data was last checked.")
def cli() -> None:
    """What breaks when a cluster moves from one Kubernetes minor to the next.

    \b
    Example:
      kubehop scan --target 1.36 platform/
    """
    from scanner.freshness import forget_relied

    forget_relied()
    click.get_current_context().call_on_close(_stale_data_notice)


def _stale_data_notice() -> None:
    """Once the command is done, the notice when the data it relied on is old: the Kubernetes rules and
    the components it judged, not the files of components the tree does not deploy (nor for --help)."""
    from scanner.freshness import relied_notice

    notice = relied_notice()
    if notice:
        click.echo(f"kubehop: notice: {notice}", err=True)


def unknown_option(command):
    """--unknown, for the commands that report component support."""
    return click.option(
        "--unknown", type=click.Choice(["warn", "block", "ignore"]), default=None,
        help="What a fact no source states counts as (a hop no release of a component states support for, "
             "a release kubehop cannot tell): a warning (default, or the configuration's `unknown`), a "
             "blocker, or nothing.")(command)


def config_options(command):
    """--config and --no-config, for every command that reads the configuration."""
    command = click.option("--no-config", is_flag=True, help="Ignore any configuration file.")(command)
    return click.option(
        "--config", "config_file", type=click.Path(dir_okay=False, exists=True), default=None,
        help=f"Configuration file (default: {CONFIG_FILE} or [tool.kubehop] in pyproject.toml, "
             "found from the first path upward).")(command)


def config_for(config_file: str | None, no_config: bool, paths: tuple[str, ...]):
    from scanner.config import Config, ConfigError, discover, load_config

    if no_config:
        return Config()
    try:
        return load_config(Path(config_file)) if config_file else discover(list(paths))
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def settings(config, paths: tuple[str, ...], target: Minor | None, current: Minor | None,
              missing: str | None) -> tuple[list[str], Minor, Minor | None]:
    """Paths and minors: the command line's, else the configuration's, else the defaults.
    `missing` is the usage error when no path is given anywhere (None: none are needed)."""
    from scanner.rulebook import load_rulebook

    paths = list(paths) or list(config.paths)
    if not paths and missing:
        raise click.UsageError(missing)
    target = target or _config_minor(config, "target", config.target) or load_rulebook().newest
    current = current or _config_minor(config, "from", config.current)
    if current is not None and current > target:
        raise click.UsageError(f"--from {current} is newer than --target {target}")
    return paths, target, current


def minor_sources(config, target: Minor | None, current: Minor | None) -> dict[str, str | None]:
    """Where `settings` takes each minor from, given the flags (None: not given): the ScanOptions fields
    the reports read to say so."""
    def source(flag: Minor | None, written: str | None, otherwise: str | None) -> str | None:
        return "flag" if flag is not None else "configuration" if written is not None else otherwise

    return {"target_source": source(target, config.target, "default"),
            "from_source": source(current, config.current, None),
            "configuration": str(config.path) if config.path else None}


def _config_minor(config, key: str, value: str | None) -> Minor | None:
    """A minor written in the configuration, checked like the flag it stands for."""
    if value is None:
        return None
    try:
        return MINOR.convert(value, None, None)
    except click.BadParameter as err:
        raise click.UsageError(f"{config.path}: {key}: {err.message}") from None


def analysis_inputs(command):
    """What the tree is read with and the findings judged by: the same options for every command that is
    a view of the analysis (`scan`, `plan`), so that both read the same inputs and count the same."""
    options = [
        click.option("--exclude", multiple=True, metavar="GLOB",
                     help="Leave out files matching GLOB (relative to the working folder); adds to the configuration's."),
        click.option("--ignore", multiple=True, metavar="RULE",
                     help="Drop findings of RULE (globs allowed); adds to the configuration's."),
        click.option("--rules", "rule_folders", multiple=True, type=click.Path(file_okay=False), metavar="DIR",
                     help="Extra rules folder laid out like kubehop's rules/; adds to the configuration's."),
        click.option("--baseline", type=click.Path(dir_okay=False), default=None,
                     help="Fail only on findings not recorded in this baseline file."),
        click.option("--values", "-f", "values_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
                     help="Helm values file for every chart found (repeatable; later files win)."),
        click.option("--helm-releases", multiple=True, type=click.Path(exists=True, dir_okay=False),
                     help="Output of `kubectl get secrets -A -l owner=helm -o yaml`: scan what Helm has deployed."),
        click.option("--allow-network", is_flag=True,
                     help="Let helm download the remote charts of Flux HelmReleases, kustomize fetch remote bases, "
                          "and kubehop read the index.yaml of the chart repositories the tree names (for their "
                          "kubeVersion); nothing is downloaded without it."),
        click.option("--no-render", is_flag=True, help="Read Helm templates as text and do not build kustomizations."),
        click.option("--all-templates", is_flag=True,
                     help="Also read as text the chart templates their values switch off (findings from them are "
                          "warnings marked latent): what a chart ships to whoever turns them on."),
        click.option("--cluster-state", "cluster_state", multiple=True, type=click.Path(exists=True),
                     help="File or folder of kubectl dumps (get crd / get <resource> -A / get nodes -o yaml, "
                          "version -o json): checks stored versions, objects and node skew. Repeatable."),
        click.option("--cluster-version-file", type=click.Path(exists=True, dir_okay=False), default=None,
                     help="Output of `kubectl version -o json`: the cluster's current version."),
        click.option("--cluster", "cluster", default=None, metavar="NAME",
                     help="Of a repository that deploys several clusters (`clusters:` in the configuration, or "
                          "the folders Flux is bootstrapped into), analyse this one only."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def options_of(config, inputs: dict, write_baseline: str | None = None, **flags):
    """The ScanOptions of `analysis_inputs` on top of the configuration, and the cluster pin of a
    --cluster-version-file (None without one); `flags`: the command's own options."""
    from scanner.components.cluster_pin import cluster_pin_from_version_json

    version_file = None
    if inputs["cluster_version_file"]:
        version_file = cluster_pin_from_version_json(inputs["cluster_version_file"])
        if version_file is None:
            raise click.UsageError(f"{inputs['cluster_version_file']}: no serverVersion.gitVersion (expected the "
                                   "output of `kubectl version -o json`)")
    flags["unknown"] = flags.get("unknown") or config.unknown or "warn"
    options = scan_options(config, inputs["exclude"], inputs["ignore"], inputs["rule_folders"], inputs["baseline"],
                           write_baseline, allow_network=inputs["allow_network"],
                           values_files=tuple(inputs["values_files"]), helm_releases=tuple(inputs["helm_releases"]),
                           render=not inputs["no_render"], all_templates=inputs["all_templates"],
                           cluster_state=tuple(inputs["cluster_state"]), **flags)
    return options, version_file


def scan_options(config, exclude, ignore, rule_folders, baseline, write_baseline, **flags):
    """The configuration, with the command line's flags on top; `flags` are the options the
    configuration does not cover."""
    from scanner.clusters import configured_clusters
    from scanner.options import ScanOptions
    from scanner.exclusions import Exclusions

    return ScanOptions(
        exclude=(Exclusions(str(config.folder), config.exclude), Exclusions(".", tuple(exclude))),
        ignore=config.ignore + tuple(ignore),
        severity=tuple(config.severity.items()),
        rule_folders=config.rules + tuple(Path(f).resolve() for f in rule_folders),
        baseline=write_baseline or baseline or config.baseline,
        write_baseline=write_baseline is not None,
        kustomize_unrestricted=config.kustomize_load_restrictor == "LoadRestrictionsNone",
        config_problems=config.problems,
        clusters=tuple(configured_clusters(config.clusters, ".")),
        rollout=config.rollout,
        **flags,
    )


def output_options(formats: tuple[str, ...], what: str = "report"):
    """-o/--output FORMAT (kubectl's, helm's, Pluto's), --format FORMAT its synonym, --output-file FILE."""
    def decorate(command):
        command = click.option("--output-file", type=click.Path(dir_okay=False, writable=True), default=None,
                               metavar="FILE", help=f"Write the {what} to FILE instead of standard output.")(command)
        command = click.option("--format", "fmt", type=click.Choice(formats), default=None,
                               help="The same as -o/--output.")(command)
        return click.option("--output", "-o", "output", metavar="FORMAT", default=None,
                            help=f"Output format: {', '.join(formats)} (default: text). (A file name here, "
                                 "once --output's meaning, still writes to that file, with a warning: use "
                                 "--output-file.)")(command)
    return decorate


def report_option(formats: tuple[str, ...], example: str):
    """--report FORMAT=FILE, repeatable: more reports of the same run."""
    def parse(ctx, param, values) -> list[tuple[str, str]]:
        reports = []
        for value in values:
            fmt, sep, path = value.partition("=")
            if not sep or not path:
                raise click.BadParameter(f"{value!r}: expected FORMAT=FILE, e.g. {example}", ctx, param)
            if fmt not in formats:
                raise click.BadParameter(f"{value!r}: format must be one of {', '.join(formats)}", ctx, param)
            reports.append((fmt, path))
        return reports

    return click.option("--report", "reports", multiple=True, metavar="FORMAT=FILE", callback=parse,
                        help=f"Also write a report in FORMAT to FILE; repeatable (e.g. --report {example}).")


def chosen_output(output: str | None, fmt: str | None, output_file: str | None,
                  formats: tuple[str, ...]) -> tuple[str, str | None]:
    """The format and the file (None: standard output) that -o/--output, --format and --output-file say.
    `-o` was the file before it was the format: a value that names no format is still taken as the
    file, with a warning, so a script written then keeps working."""
    if output is not None and output not in formats:
        if output_file is not None:
            raise click.UsageError(f"-o/--output {output!r}: not a format ({', '.join(formats)}); the file is "
                                   "--output-file")
        from scanner.report.plain import log_line, printable

        click.echo(log_line(printable(f"kubehop: warning: --output FILE is deprecated: -o/--output names the "
                                      f"format now; write --output-file {output}")), err=True)
        output, output_file = None, output
    if output is not None and fmt is not None and output != fmt:
        raise click.UsageError(f"-o/--output {output} and --format {fmt} name different formats; give one")
    return output or fmt or "text", output_file


def check_outputs(paths: list[str | None]) -> None:
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


def emit(text: str, output: str | None) -> None:
    """A report to its --output file, else to standard output."""
    if output:
        _write(output, text)
    else:
        click.echo(text, nl=False)


def emit_all(documents: list[tuple[str | None, str]]) -> None:
    for path, text in documents:
        emit(text, path)


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise click.UsageError(f"cannot write {path}: {err.strerror or err}") from err


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
