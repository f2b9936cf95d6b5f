"""Shared test helpers. Tests run kubehop for real: in-process (the CLI through click's runner, or the
scan service), or, end to end, as a subprocess exactly as a user would (`python -m scanner ...`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = REPO.parent / "shared"


def _pin_today_to_the_data() -> None:
    """kubehop notices on every command when its data is over 120 days old; pinned to the day the
    data was checked, the suite gives the same output in a clone run next year as today."""
    import datetime as dt

    from scanner import freshness

    checked = dt.datetime.fromisoformat(freshness.data_checked()).replace(tzinfo=dt.timezone.utc)
    os.environ["SOURCE_DATE_EPOCH"] = str(int(checked.timestamp()))


_pin_today_to_the_data()


# What only a new interpreter can honour: where the data is read from (cached once per process), and the
# interpreter's own settings.
_PROCESS_ONLY = ("KUBEHOP_DATA_DIR", "PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_ALL", "LC_CTYPE")


def run_kubehop(*args: str, cwd: Path | None = None, stdin: bytes | None = None,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI as `kubehop ARGS` runs it, in this process (click's runner, with `main`'s last line of
    defence: an exception is exit 4 and its message); stdout and stderr as bytes. Where `env` sets what only
    a new interpreter honours, or for end-to-end tests, `run_kubehop_process`."""
    if env and any(key in env for key in _PROCESS_ONLY):
        return run_kubehop_process(*args, cwd=cwd, stdin=stdin, env=env)
    return _invoke_bytes(*args, cwd=cwd, stdin=stdin, env=env, catch=True)


def run_kubehop_process(*args: str, cwd: Path | None = None, stdin: bytes | None = None,
                        env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the CLI in a child process, as a user does; returns the completed process (bytes stdout/stderr)."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or REPO, input=stdin,
                          capture_output=True, env=full_env, timeout=600)


@pytest.fixture
def kubehop():
    return run_kubehop


def shared_or_skip(relative: str) -> Path:
    """A path in ../shared/ (seeds, corpora); skips the test in a clone where it is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"../shared/{relative} is not present (a user's clone)")
    return path


def tool_or_skip(name: str) -> str:
    """helm, kubectl or kustomize as kubehop finds it (KUBEHOP_<NAME>, PATH, tool cache), else skip."""
    from scanner.sources.tools.find import find_tool

    path = find_tool(name)
    if path is None:
        pytest.skip(f"{name} not found: set KUBEHOP_{name.upper()}, put it on PATH or run `kubehop tools install`")
    return path


@pytest.fixture
def helm_env(tmp_path, monkeypatch) -> dict[str, str]:
    """The real helm (else the test skips), and a render cache of this test's own."""
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path / "kubehop-cache")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def kustomize_or_skip() -> list[str]:
    from scanner.sources.tools.find import kustomize_command

    command = kustomize_command()
    if command is None:
        pytest.skip("neither kustomize nor kubectl found: run `kubehop tools install`")
    return command


def copy_repo(dest: Path) -> Path:
    """This repository's files as they are now (tracked and untracked, minus ignored ones) in `dest`:
    what a user's clone or an action checkout would hold, uncommitted changes included."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, names):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


_NETWORK_TROUBLE = ("Failed to establish a new connection", "Temporary failure in name resolution",
                    "No matching distribution found", "Could not find a version that satisfies")


def network_trouble(output: str) -> bool:
    """Did pip fail because no package index could be reached (so the test should skip, not fail)?"""
    return any(sign in output for sign in _NETWORK_TROUBLE)


def run_kubehop_text(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """`run_kubehop` with stdout and stderr decoded."""
    done = run_kubehop(*args, **kwargs)
    decode = lambda out: out.decode() if isinstance(out, bytes) else out  # noqa: E731
    return subprocess.CompletedProcess(done.args, done.returncode, decode(done.stdout), decode(done.stderr))


def cli_runner():
    """click's test runner with stdout and stderr apart, on every click the pins admit."""
    from click.testing import CliRunner

    try:
        return CliRunner(mix_stderr=False)  # click 8.1
    except TypeError:  # click 8.2+ keeps them apart anyway
        return CliRunner()


def invoke(*args: str, cwd: Path | None = None, env: dict | None = None,
           stdin: bytes | None = None, catch: bool = False) -> subprocess.CompletedProcess:
    """The CLI in this process (click's runner): what `run_kubehop_text` gives, without a new interpreter
    per call. For everything but end-to-end tests of the installed command. `catch`: an exception is what
    `scanner.cli.main` makes of it (exit 4 and its message), as the installed command prints it."""
    done = _invoke_bytes(*args, cwd=cwd, env=env, stdin=stdin, catch=catch)
    text = lambda out: out.decode("utf-8", "replace").replace("\r\n", "\n")  # noqa: E731 (click's Result.stdout)
    return subprocess.CompletedProcess(done.args, done.returncode, text(done.stdout), text(done.stderr))


def _invoke_bytes(*args: str, cwd: Path | None, env: dict | None, stdin: bytes | None,
                  catch: bool) -> subprocess.CompletedProcess:
    """The CLI in this process; stdout and stderr as the bytes it wrote."""
    from scanner.cli import cli
    from scanner.guard import describe
    from scanner.model import EXIT_INTERNAL

    runner = cli_runner()
    before = os.getcwd()
    os.chdir(cwd or REPO)
    try:
        result = runner.invoke(cli, list(args), input=stdin, env={"NO_COLOR": "1", **(env or {})},
                               catch_exceptions=catch, prog_name="kubehop")
    finally:
        os.chdir(before)
    code, stderr = result.exit_code, result.stderr_bytes or b""
    if catch and result.exception is not None and not isinstance(result.exception, SystemExit):
        code = EXIT_INTERNAL
        stderr += (f"kubehop: internal error ({describe(result.exception)}); please report it "
                   "(KUBEHOP_DEBUG=1 shows the traceback)\n").encode()
    return subprocess.CompletedProcess(["kubehop", *args], code, result.stdout_bytes, stderr)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Each file of `files` (name -> text, dedented) under `root`; returns `root`."""
    import textwrap

    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root
