#!/usr/bin/env python3
"""Long fuzz runs of kubehop (issue 13): every command and report format on mutated real input.

    python bench/fuzz.py --cases 200000 --workers 2 --seed 1 --keep /tmp/kubehop-fuzz-failures

Cases are split over worker processes; a case that runs past --hang seconds is killed with its
worker (and counted as a hang), and the worker starts again with the next case. Prints progress,
then the figures: cases, failures by kind, cases over the time bound, the slowest case, exit codes.
A failing case's tree and command line are kept under --keep; `tests/fuzzing.py` builds the same
case again from its seed and number.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import queue
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def _worker(seed: int, numbers: list[int], results, keep: str | None, render_share: float, bound: float) -> None:
    import fuzzing

    for outcome in fuzzing.run(seed, numbers, render_share=render_share, keep_failures=Path(keep) if keep else None,
                               time_bound=bound, on_start=lambda number: results.put(("start", number))):
        results.put(("done", outcome))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--first", type=int, default=0, help="number of the first case")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", default=None, help="folder for the trees of failing cases")
    parser.add_argument("--render-share", type=float, default=0.01, help="share of scans that render with helm")
    parser.add_argument("--bound", type=float, default=5.0,
                        help="processor seconds a case may take (its own and its tools'; wall time varies with load)")
    parser.add_argument("--hang", type=float, default=60.0, help="seconds after which a case is killed")
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    todo = list(range(args.first, args.first + args.cases))
    shares = [todo[n::args.workers] for n in range(args.workers)]
    workers: dict[int, tuple] = {}  # index -> (process, remaining numbers, current number, started)

    def start(index: int, numbers: list[int]) -> None:
        process = context.Process(target=_worker, args=(args.seed, numbers, results, args.keep,
                                                        args.render_share, args.bound), daemon=True)
        process.start()
        workers[index] = [process, list(numbers), None, time.monotonic()]

    for index, numbers in enumerate(shares):
        if numbers:
            start(index, numbers)
    outcomes, problems = 0, collections.Counter()
    exits, commands = collections.Counter(), collections.Counter()
    slowest, slowest_wall, over_bound, hangs, examples = (0.0, None), (0.0, None), 0, [], {}
    began = time.monotonic()
    last_print = began
    while workers:
        try:
            kind, value = results.get(timeout=1.0)
        except queue.Empty:
            kind = None
        if kind == "start":
            index = next(i for i, s in workers.items() if value in s[1])
            workers[index][2], workers[index][3] = value, time.monotonic()
        elif kind == "done":
            outcome = value
            index = next(i for i, s in workers.items() if outcome.number in s[1])
            state = workers[index]
            state[1].remove(outcome.number)
            state[2] = None
            outcomes += 1
            exits[outcome.exit_code] += 1
            commands[outcome.command] += 1
            slowest = max(slowest, (outcome.cpu_seconds, outcome.number))
            slowest_wall = max(slowest_wall, (outcome.seconds, outcome.number))
            if outcome.cpu_seconds > args.bound:
                over_bound += 1
            if outcome.problem:
                key = outcome.problem.split("\n")[0][:100]
                problems[key] += 1
                examples.setdefault(key, (outcome.number, outcome.problem))
            if not state[1]:
                state[0].join(timeout=10)
                del workers[index]
        now = time.monotonic()
        for index, state in list(workers.items()):
            process, remaining, current, started = state
            stuck = current is not None and now - started > args.hang
            died = not process.is_alive() and results.empty()
            if stuck or died:
                if stuck:
                    process.kill()
                process.join(timeout=10)
                key = f"hang (over {args.hang:.0f} s)" if stuck else "worker died"
                problems[key] += 1
                examples.setdefault(key, (current, f"case {current}"))
                if current is not None:
                    hangs.append(current)
                    remaining.remove(current)
                del workers[index]
                if remaining:
                    start(index, remaining)
        if now - last_print > 60:
            last_print = now
            rate = outcomes / (now - began)
            print(f"{outcomes} cases, {sum(problems.values())} failing, {rate:.1f} cases/s", flush=True)
    elapsed = time.monotonic() - began
    print(f"\nseed {args.seed}, cases {args.first}..{args.first + args.cases - 1}: {outcomes} run in {elapsed:.0f} s "
          f"({outcomes / elapsed:.1f} cases/s, {args.workers} workers)")
    print(f"commands: {dict(sorted(commands.items()))}")
    print(f"exit codes: {dict(sorted(exits.items(), key=lambda kv: str(kv[0])))}")
    print(f"failing cases: {sum(problems.values())}; over {args.bound:.0f} s of processor time: {over_bound}; "
          f"hangs: {len(hangs)}; slowest: {slowest[0]:.2f} s of processor time (case {slowest[1]}), "
          f"{slowest_wall[0]:.2f} s wall (case {slowest_wall[1]})")
    for key, count in problems.most_common():
        number, problem = examples.get(key, (None, key))
        print(f"  {count:6d}  {key}\n          e.g. case {number}: {problem[:800]}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
