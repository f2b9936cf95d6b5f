"""A short, deterministic fuzz run (tests/fuzzing.py): mutated real input through every command and
report format; no case may raise, ask for a bug report, exit with an unpromised code, print a
workflow command from the tree, or take over 5 s. Long runs: bench/fuzz.py."""

from __future__ import annotations

import os

import pytest

import fuzzing

CASES = int(os.environ.get("KUBEHOP_FUZZ_CASES", "150"))


@pytest.fixture(scope="module")
def seeds():
    return fuzzing.load_seeds()


def test_seeds_cover_every_kind_of_input(seeds):
    assert seeds.files and seeds.charts and seeds.kustomizations and seeds.helm_releases and seeds.cluster_dumps


def test_a_case_is_a_function_of_seed_and_number(seeds, tmp_path):
    first = fuzzing.build_case(7, 3, seeds, tmp_path / "a")
    again = fuzzing.build_case(7, 3, seeds, tmp_path / "b")
    files = lambda case: {p.relative_to(case.root): p.read_bytes() for p in sorted(case.root.rglob("*"))  # noqa: E731
                          if p.is_file()}
    assert first.command == again.command and [a.replace("/a/", "/b/") for a in first.args] == again.args
    assert files(first) == files(again)


def test_short_fuzz_run(seeds):
    outcomes = list(fuzzing.run(20261201, range(CASES), seeds=seeds, render_share=0.05))
    failing = [f"case {o.number} ({o.command}, exit {o.exit_code}, {o.seconds:.1f} s): {o.problem}"
               for o in outcomes if o.problem]
    assert not failing, "\n".join(failing)
    assert {o.command for o in outcomes} == set(fuzzing.COMMANDS)


def test_a_run_leaves_the_environment_as_it_found_it(seeds):
    before = dict(os.environ)
    list(fuzzing.run(1, range(1), seeds=seeds))
    assert dict(os.environ) == before
