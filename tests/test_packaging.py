"""The wheel carries rules/ and compat-matrix/: an installed kubehop works far from the repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"wheel build failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    [built] = out.glob("kubehop-*.whl")
    return built


def test_wheel_ships_the_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    rule_files = [n for n in names if n.startswith("scanner/_data/rules/")]
    assert "scanner/_data/rules/kubernetes.yaml" in names
    assert "scanner/_data/rules/schema/api-rule.schema.json" in names
    repo_rules = [p for p in (REPO / "rules").rglob("*") if p.is_file()]
    assert len(rule_files) == len(repo_rules)
    assert any(n.startswith("scanner/_data/compat-matrix/") for n in names) == any(
        p.is_file() for p in (REPO / "compat-matrix").rglob("*"))


def test_installed_kubehop_runs_outside_the_repo(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    work = tmp_path / "elsewhere"
    shutil.copytree(REPO / "examples", work / "examples")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBEHOP_DATA_DIR")}
    env["NO_COLOR"] = "1"
    kubehop = env_dir / "bin" / "kubehop"
    version = subprocess.run([str(kubehop), "--version"], capture_output=True, text=True, cwd=work, env=env)
    assert version.returncode == 0 and version.stdout.startswith("kubehop ")
    assert "data checked" in version.stdout
    scan = subprocess.run([str(kubehop), "scan", "--format", "json", "--target", "1.36", "examples"],
                          capture_output=True, text=True, cwd=work, env=env)
    assert "Traceback" not in scan.stderr
    import json

    report = json.loads(scan.stdout)
    assert report["summary"]["errors"] > 0
    assert scan.returncode == 1
    # python -m scanner works from the installed package as well.
    module = subprocess.run([str(python), "-m", "scanner", "rules"], capture_output=True, text=True, cwd=work, env=env)
    assert module.returncode == 0 and "rules" in module.stdout.splitlines()[-1]


def test_ci_minimums_are_the_lowest_versions_the_pins_admit():
    """.ci/run tests the declared minimums; a pin raised in pyproject.toml without its constraint
    (or the other way round) would test versions nobody declared."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    declared = {}
    for line in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue  # e.g. tomli, only before Python 3.11
        [floor] = [s.version for s in requirement.specifier if s.operator == ">="]
        declared[canonicalize_name(requirement.name)] = Version(floor)
    pinned = {}
    for line in (REPO / ".ci" / "minimums.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[canonicalize_name(name)] = Version(version)
    assert pinned == declared


def test_tests_make_clicks_runner_through_conftest():
    """click 8.1 (the pins' minimum, .ci/minimums.txt) mixes stderr into stdout unless told not to: a test
    that builds its own click runner passes on the newest click and fails CI's second pass (stop 29)."""
    tests = Path(__file__).parent
    own = [p.name for p in tests.glob("*.py") if p.name != "conftest.py" and "CliRunner" + "(" in p.read_text()]
    assert own == []
