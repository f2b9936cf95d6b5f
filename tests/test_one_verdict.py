"""One verdict, wherever it is read: `scan` and `plan` of the same tree and minors say the same thing
(blocked or not, how many blockers, how many warnings) in every format they write.

Each format is read the way its reader reads it: the last line of the text reports, the summary of
the JSON, the levels of SARIF's results, the verdict line of the Markdown comments, the annotations
and closing line of the workflow commands.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, run_kubehop

VERDICT = re.compile(r"(blocked: (?P<target>[\d.]+) cannot be reached as is|nothing blocks (?P<clear>[\d.]+)) "
                     r"\((?P<counts>[^)]*)\)")
SCAN_FORMATS = ["text", "json", "sarif", "markdown", "github"]
PLAN_FORMATS = ["text", "json", "markdown"]


def suppressed_tree(root: Path) -> Path:
    """The example platform with what a real tree holds too: a suppression comment, a rule the
    configuration ignores, and a severity it changes."""
    shutil.copytree(REPO / "examples", root)
    (root / ".git").mkdir()
    shop = root / "platform" / "apps" / "shop.yaml"
    shop.write_text(shop.read_text().replace("kind: PodDisruptionBudget",
                                              "kind: PodDisruptionBudget  # kubehop: ignore -- migrated by hand", 1))
    (root / ".kubehop.yaml").write_text("ignore: [batch/v1beta1/*]\n"
                                        "severity:\n  autoscaling/v2beta2/HorizontalPodAutoscaler: warning\n")
    return root


# (name, tree, arguments): the seed-002 platform, the Flux homelab of issue 11, the bundled example, a tree
# with suppressions and configuration; with --from, and with the cluster's version read from the tree.
CASES = [
    ("seed002", FIXTURES / "seed002", ("--from", "1.31", "--target", "1.36")),
    ("flux-homelab", FIXTURES / "flux-homelab", ("--from", "1.28", "--target", "1.36")),
    ("flux-homelab-pinned", FIXTURES / "flux-homelab", ("--target", "1.36")),
    ("examples", REPO / "examples", ("--from", "1.31", "--target", "1.36")),
    ("examples-1.33", REPO / "examples", ("--from", "1.32", "--target", "1.33")),
    ("configured", None, ("--from", "1.31", "--target", "1.36")),
]


def verdict_of_line(line: str) -> tuple[bool, int, int]:
    found = VERDICT.search(line)
    assert found, line
    counts = dict((noun.rstrip("s"), int(n)) for n, noun in re.findall(r"(\d+) ([a-z]+)", found["counts"]))
    blocked = found["target"] is not None
    assert blocked == (counts.get("blocker", 0) > 0), line
    return blocked, counts.get("blocker", 0), counts.get("warning", 0)


def read(fmt: str, out: str, command: str) -> tuple[bool, int, int]:
    """(blocked, blockers, warnings) as a reader of this format finds them."""
    if fmt == "text":
        return verdict_of_line(out.rstrip().splitlines()[-1])
    if fmt == "markdown":
        return verdict_of_line(next(line for line in out.splitlines() if line.startswith(("❌", "✅"))).replace("**", ""))
    if fmt == "json":
        document = json.loads(out)
        if command == "plan":
            return document["blockers"] > 0, document["blockers"], document["warnings"]
        summary = document["summary"]
        return summary["errors"] > 0, summary["errors"], summary["warnings"]
    if fmt == "sarif":
        levels = [r["level"] for r in json.loads(out)["runs"][0]["results"]]
        return "error" in levels, levels.count("error"), levels.count("warning")
    if fmt == "github":
        lines = out.rstrip().splitlines()
        annotations = [line.split(" ", 1)[0] for line in lines if "title=kubehop " in line
                       and "title=kubehop%3A input problem" not in line]
        read_back = (annotations.count("::error") > 0, annotations.count("::error"), annotations.count("::warning"))
        assert read_back == verdict_of_line(lines[-1]), "the annotations and the closing line disagree"
        return read_back
    raise AssertionError(fmt)


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[str, Path]:
    return {"configured": suppressed_tree(tmp_path_factory.mktemp("configured") / "repo")}


@pytest.mark.parametrize("name, tree, args", CASES, ids=[c[0] for c in CASES])
def test_scan_and_plan_give_one_verdict_in_every_format(name, tree, args, trees):
    tree = tree or trees[name]
    seen = {}
    for command, formats in (("scan", SCAN_FORMATS), ("plan", PLAN_FORMATS)):
        for fmt in formats:
            proc = run_kubehop(command, *args, "--format", fmt, ".", cwd=tree)
            assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
            assert proc.returncode in (0, 1, 3), (command, fmt, proc.stderr.decode())
            seen[f"{command} {fmt}"] = (read(fmt, proc.stdout.decode(), command), proc.returncode)
    verdicts = {key: value[0] for key, value in seen.items()}
    assert len(set(verdicts.values())) == 1, verdicts
    codes = {key: value[1] for key, value in seen.items()}
    assert len(set(codes.values())) == 1, codes


def test_the_verdict_is_worded_the_same_by_scan_and_plan():
    args = ("--from", "1.31", "--target", "1.36", "--format", "text", ".")
    scan = run_kubehop("scan", *args, cwd=FIXTURES / "seed002").stdout.decode().rstrip().splitlines()[-1]
    plan = run_kubehop("plan", *args, cwd=FIXTURES / "seed002").stdout.decode().rstrip().splitlines()[-1]
    assert scan == plan and scan.startswith("blocked: 1.36 cannot be reached as is (")
