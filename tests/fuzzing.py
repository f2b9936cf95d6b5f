"""Fuzzing kubehop (issue 13): mutate real manifests, charts, kustomizations, HelmReleases, Helm release
dumps and cluster dumps, and run every command and every report format on them, in process.

A case is a small tree built from the repository's own fixtures and examples, one to four of its
files mutated (tests/fuzz_mutations.py), and one command line. It fails when kubehop raises, asks
for a bug report ("please report it": its last line of defence caught a bug), exits with a code the
README does not promise for it, prints what a log or a terminal acts on (a workflow command but its
own annotations, `##[`, a raw control, bidirectional or separator character: tests/hostile_text.py)
in any format, on standard error or in a report file, or takes over the time bound (processor time). Every case is a function of (seed,
number) and of the fixtures: a failure is built again with `build_case(seed, number, ...)`.

The short deterministic run is tests/test_fuzz.py; long runs: bench/fuzz.py.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import shutil
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from conftest import cli_runner
from fuzz_mutations import FILE_NAMES, mutate
from hostile_text import log_problems

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
SUFFIXES = (".yaml", ".yml", ".json")
COMMANDS = ("scan", "plan", "components", "inventory", "fix")
SCAN_FORMATS = ("text", "json", "sarif", "markdown", "github")
MINORS = [f"1.{n}" for n in range(25, 37)]
# Exit codes each command may give on any input (README); 2 only when the case wrote a configuration.
EXPECTED_EXITS = {0, 1, 3}


@dataclass
class Seeds:
    """What cases are built from: paths relative to REPO, by kind."""

    files: list[str] = field(default_factory=list)  # manifests and other YAML/JSON files
    charts: list[str] = field(default_factory=list)  # folders with Chart.yaml
    kustomizations: list[str] = field(default_factory=list)
    helm_releases: list[str] = field(default_factory=list)  # files holding a Flux HelmRelease
    cluster_dumps: list[str] = field(default_factory=list)  # folders of kubectl dumps
    objects: list[str] = field(default_factory=list)  # single documents, for release payloads


def load_seeds() -> Seeds:
    seeds = Seeds()
    for top in (FIXTURES, REPO / "examples"):
        for path in sorted(top.rglob("*")):
            relative = str(path.relative_to(REPO))
            if path.is_dir():
                if (path / "Chart.yaml").is_file():
                    seeds.charts.append(relative)
                elif (path / "kustomization.yaml").is_file():
                    seeds.kustomizations.append(relative)
                elif path.name in ("cluster", "dumps") or path.parent.name == "dumps":
                    seeds.cluster_dumps.append(relative)
            elif path.suffix in SUFFIXES and "templates" not in path.parts:
                text = path.read_text(encoding="utf-8", errors="replace")
                seeds.files.append(relative)
                if "kind: HelmRelease" in text:
                    seeds.helm_releases.append(relative)
                seeds.objects.extend(doc for doc in text.split("\n---\n") if "apiVersion:" in doc and len(doc) < 4000)
    return seeds


# --- cases ---------------------------------------------------------------------------------------

@dataclass
class Case:
    seed: int
    number: int
    command: str
    args: list[str]
    root: Path
    wrote_config: bool = False


def release_dump(rng: random.Random, seeds: Seeds) -> bytes:
    """`kubectl get secrets -l owner=helm -o yaml` holding one to three releases, mutated."""
    items = []
    for n in range(rng.randint(1, 3)):
        manifest = "\n---\n".join(rng.choice(seeds.objects) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.5:
            manifest = mutate(manifest.encode(), rng).decode("utf-8", "replace")
        release = {"name": rng.choice(["web", "db", "x"]), "namespace": "default",
                   "version": rng.choice([1, 2, 3, "7", 1e999, -1, None, [1], 10 ** 40, 2.5]),
                   "info": {"status": rng.choice(["deployed", "superseded", "failed", None, ["deployed"]])},
                   "chart": {"metadata": {"name": rng.choice(["web", None, {"a": 1}]), "version": "1.0.0"}},
                   "manifest": manifest,
                   "hooks": rng.choice([[], [{"path": "t.yaml", "manifest": manifest}], "x", [None]])}
        payload = json.dumps(release).encode()
        if rng.random() < 0.2:
            payload = payload[:rng.randint(0, len(payload))]
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        packed = packer.compress(payload) + packer.flush()
        if rng.random() < 0.1:
            packed = packed[:len(packed) // 2]
        encoded = base64.b64encode(base64.b64encode(packed) if rng.random() < 0.9 else packed).decode()
        kind = rng.choice(["Secret", "Secret", "ConfigMap"])
        items.append(f"- apiVersion: v1\n  kind: {kind}\n  metadata:\n    name: sh.helm.release.v1.r{n}.v1\n"
                     f"    namespace: default\n    labels: {{owner: helm, name: r{n}, status: deployed, "
                     f"version: '{n + 1}'}}\n  data:\n    release: {encoded}\n")
    text = ("apiVersion: v1\nkind: List\nitems:\n" + "".join(items)).encode()
    return mutate(text, rng) if rng.random() < 0.3 else text


CONFIGS = [b"ignore: ['*']\n", b"target: 1.30\n", b"target: '1.99'\n", b"paths: [../../..]\n",
           b"rules: [/etc]\n", b"exclude: [{a: b}]\n", b"severity: {'*': notice}\n", b"a: &a [*a]\n",
           b"\xff\xfe\n", b"baseline: .kubehop-baseline.json\n", b"ignore: [x]\nfrom: '1.31'\n"]


def build_case(seed: int, number: int, seeds: Seeds, where: Path, render_share: float = 0.01) -> Case:
    rng = random.Random(seed * 1_000_003 + number)
    root = where / f"case-{number}"
    tree = root / "tree"
    tree.mkdir(parents=True)
    picks = [("file", rng.choice(seeds.files)) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.3:
        picks.append(("dir", rng.choice(seeds.charts)))
    if rng.random() < 0.2:
        picks.append(("dir", rng.choice(seeds.kustomizations)))
    if rng.random() < 0.3:
        picks.append(("file", rng.choice(seeds.helm_releases)))
    if not picks:
        picks.append(("file", rng.choice(seeds.files)))
    for n, (kind, relative) in enumerate(picks):
        source = REPO / relative
        target = tree / f"u{n}" / source.name
        if kind == "dir":
            shutil.copytree(source, target, symlinks=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    for path in rng.sample(files, min(len(files), rng.randint(1, 4))):
        path.write_bytes(mutate(path.read_bytes(), rng))
    if rng.random() < 0.05 and hasattr(os, "mkfifo"):
        os.mkfifo(tree / "fifo.yaml")
    command = rng.choice(COMMANDS)
    args: list[str] = []
    wrote_config = False
    if rng.random() < 0.1:
        (tree / ".kubehop.yaml").write_bytes(rng.choice(CONFIGS))
        wrote_config = True
    elif command in ("scan", "plan", "fix"):
        args.append("--no-config")
    target = rng.choice(MINORS[4:])
    if command == "scan":
        args += ["--target", target, "--format", rng.choice(SCAN_FORMATS)]
        args += [f"--report={fmt}={root / f'report.{fmt}'}" for fmt in SCAN_FORMATS if rng.random() < 0.5]
        if rng.random() < 0.5:
            args += ["--from", rng.choice([m for m in MINORS if _minor(m) <= _minor(target)])]
        if rng.random() < 0.3:
            dump = root / "releases.yaml"
            dump.write_bytes(release_dump(rng, seeds))
            args += ["--helm-releases", str(dump)]
        if rng.random() < 0.3:
            dump = root / "cluster"
            shutil.copytree(REPO / rng.choice(seeds.cluster_dumps), dump)
            for path in rng.sample(sorted(dump.rglob("*.*")), 1):
                path.write_bytes(mutate(path.read_bytes(), rng))
            args += ["--cluster-state", str(dump)]
        if rng.random() < 0.1:
            args.append("--all-templates")
        if rng.random() < 0.05:
            args += ["--fail-on", rng.choice(["warning", "never"])]
    elif command == "plan":
        args += ["--target", target, "--from", rng.choice([m for m in MINORS if _minor(m) < _minor(target)]),
                 "--format", rng.choice(["text", "json", "markdown"])]
        if rng.random() < 0.3:  # the first window as a change set: shown, as a diff, or written
            args += ["--window", "1", *rng.choice([[], ["--diff"], ["--write"]])]
    elif command in ("components", "inventory"):
        args += ["--format", rng.choice(["text", "json"])]
    else:
        args += ["--target", target] + (["--write"] if rng.random() < 0.5 else [])
    if command in ("scan",) and rng.random() >= render_share:
        args.append("--no-render")
    args.append(str(tree))
    if rng.random() < 0.1:  # a file of the tree gets a hostile name (its suffix kept: it is still read)
        renamed = rng.choice(sorted(p for p in tree.rglob("*") if p.is_file() and p.name != ".kubehop.yaml"))
        renamed.rename(renamed.with_name(rng.choice(FILE_NAMES) + renamed.suffix))
    return Case(seed, number, command, args, root, wrote_config)


def _minor(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


# --- running -------------------------------------------------------------------------------------

@dataclass
class Outcome:
    number: int
    command: str
    exit_code: int | None
    seconds: float  # wall
    cpu_seconds: float  # the case's own processor time and that of the tools it ran (helm, kustomize)
    problem: str | None = None  # why the case failed; None: it passed


def run_case(case: Case, time_bound: float = 5.0) -> Outcome:
    from scanner.cli import cli

    runner = cli_runner()
    started, cpu_started = time.perf_counter(), _cpu()
    result = runner.invoke(cli, [case.command, *case.args], catch_exceptions=True)
    seconds, cpu_seconds = time.perf_counter() - started, _cpu() - cpu_started
    stdout, stderr = result.stdout, result.stderr
    problem = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        lines = traceback.format_exception(result.exception)
        problem = f"uncaught {lines[-1].strip()}\n" + "".join(traceback.format_tb(result.exception.__traceback__)[-4:])
    elif "please report it" in stdout + stderr:
        problem = "kubehop caught a bug of its own: " + next(
            line for line in (stdout + stderr).splitlines() if "please report it" in line)
    elif result.exit_code not in EXPECTED_EXITS and not (result.exit_code == 2 and case.wrote_config):
        problem = f"exit code {result.exit_code}: {(stdout + stderr).strip().splitlines()[-1:]}"
    else:
        problem = _unsafe_output(case, stdout, stderr)
    if problem is None and cpu_seconds > time_bound:  # processor time: a shared machine's load is no slowness
        problem = f"took {cpu_seconds:.1f} s of processor time ({seconds:.1f} s wall)"
    return Outcome(case.number, case.command, result.exit_code, seconds, cpu_seconds, problem)


def _unsafe_output(case: Case, stdout: str, stderr: str) -> str | None:
    """What a log or a terminal would act on in anything the case printed or wrote; None: nothing."""
    printed = [("standard output", stdout, case.command == "scan" and _format(case.args) == "github"),
               ("standard error", stderr, False)]
    printed += [(path.name, path.read_text(encoding="utf-8", errors="surrogateescape"), path.suffix == ".github")
                for path in sorted(case.root.glob("report.*"))]
    for where, text, commands_allowed in printed:
        problems = log_problems(text, commands_allowed)
        if problems:
            return f"{where} holds what a log acts on: {problems[0]}"
    return None


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _format(args: list[str]) -> str:
    return args[args.index("--format") + 1] if "--format" in args else "text"


@contextlib.contextmanager
def environment(where: Path):
    """Caches kept apart from the user's (the tools still found where they were), restored afterwards:
    the rest of a test session must find the user's tool cache again."""
    from scanner.sources.tools.find import find_tool

    tools = {f"KUBEHOP_{name.upper()}": find_tool(name) for name in ("helm", "kubectl")}
    wanted = {"KUBEHOP_CACHE_DIR": str(where / "cache"), "NO_COLOR": "1", "KUBEHOP_DEBUG": "",
              **{key: path for key, path in tools.items() if path}}
    before = {key: os.environ.get(key) for key in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(seed: int, numbers, seeds: Seeds | None = None, render_share: float = 0.01,
        keep_failures: Path | None = None, time_bound: float = 5.0, on_start=None):
    """Build and run the cases `numbers` of `seed`; yields an Outcome each (`on_start(number)` first)."""
    seeds = seeds or load_seeds()
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="kubehop-fuzz-", dir=base) as tmp:
        where = Path(tmp)
        with environment(where):
            yield from _cases(seed, numbers, seeds, where, render_share, keep_failures, time_bound, on_start)


def _cases(seed, numbers, seeds, where, render_share, keep_failures, time_bound, on_start):
    for number in numbers:
        if on_start is not None:
            on_start(number)
        case = build_case(seed, number, seeds, where, render_share)
        outcome = run_case(case, time_bound)
        if outcome.problem and keep_failures is not None:
            kept = keep_failures / f"seed{seed}-case{number}"
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(case.root, kept, symlinks=True, ignore_dangling_symlinks=True,
                            ignore=lambda d, names: [n for n in names if (Path(d) / n).is_fifo()])
            (kept / "command.txt").write_text(" ".join(["kubehop", case.command, *case.args]) + "\n")
            (kept / "problem.txt").write_text(outcome.problem + "\n")
        shutil.rmtree(case.root, ignore_errors=True)
        yield outcome
