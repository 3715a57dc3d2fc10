"""Engine figures: random self-play throughput, per-call latencies, state size.

``python -m benchmarks.engine [--rounds N] [--repeats R]`` plays seeded
rounds with a uniformly random player that lists every legal action before
each move, exactly as a bot or a test would, on one core. Throughput is
counted in CPU time of this process (one thread: one core), so a busy
machine slows the figure less than it would a wall clock. Each figure is the
median over the repeats.

It also plays rounds with the heuristic bot (the services' seat bot): its
round length is the "actions per round" the service figures are
extrapolated with, since people and bots meld and go out, while random
players mostly run the stock out.

``--baseline DIR`` measures another checkout of the project (e.g. the main
branch) and this one in alternating child processes of the same run, so that
a change to the engine is judged against the same machine load.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.report import Figure, median, median_percentile, table
from shared_engine import VARIANTS, apply, legal_actions, pack, start_round
from shared_engine.bots import heuristic_policy
from shared_engine.state import dumps

SECTION = "engine (one core)"
TARGET_ACTIONS_PER_SECOND = 40_000


def self_play(rounds: int, seed: int) -> tuple[int, float]:
    """Actions played and CPU seconds taken by ``rounds`` random rounds."""
    rng = random.Random(seed)
    actions = 0
    start = time.process_time()
    for i in range(rounds):
        state = start_round(f"bench-{seed}-{i}", variant=VARIANTS[i % 2])
        while state.phase != "round_over":
            seat = state.turn
            state, _ = apply(state, seat, rng.choice(legal_actions(state, seat)))
            actions += 1
    return actions, time.process_time() - start


def bot_play(rounds: int, seed: int) -> float:
    """Mean actions per round when the heuristic bot plays every seat."""
    actions = 0
    for i in range(rounds):
        state = start_round(f"bots-{seed}-{i}", variant=VARIANTS[i % 2])
        while state.phase != "round_over":
            seat = state.turn
            state, _ = apply(state, seat, heuristic_policy(state, seat))
            actions += 1
    return actions / rounds


def bot_round_length(rounds: int = 50, repeats: int = 5) -> float:
    """The median over ``repeats`` seeds of the heuristic bots' mean actions per round."""
    return median(bot_play(rounds, seed) for seed in range(repeats))


def latencies(rounds: int, seed: int) -> tuple[list[float], list[float], int, int, int]:
    """Per-call times of ``apply`` and ``legal_actions`` (µs); the state's JSON bytes, largest
    and mean; the largest packed state (what the games table stores)."""
    rng = random.Random(seed)
    apply_us: list[float] = []
    legal_us: list[float] = []
    largest = 0
    largest_packed = 0
    total_bytes = 0
    samples = 0
    clock = time.perf_counter
    for i in range(rounds):
        state = start_round(f"lat-{seed}-{i}")
        while state.phase != "round_over":
            seat = state.turn
            t0 = clock()
            options = legal_actions(state, seat)
            t1 = clock()
            state, _ = apply(state, seat, rng.choice(options))
            t2 = clock()
            legal_us.append((t1 - t0) * 1e6)
            apply_us.append((t2 - t1) * 1e6)
            size = len(dumps(state))
            largest = max(largest, size)
            largest_packed = max(largest_packed, len(pack(state)))
            total_bytes += size
            samples += 1
    return apply_us, legal_us, largest, total_bytes // max(samples, 1), largest_packed


def figures(rounds: int = 300, repeats: int = 5, bot_length: float | None = None) -> list[Figure]:
    """The engine's figures; ``bot_length`` is ``bot_round_length()`` if already measured."""
    runs = [self_play(rounds, seed) for seed in range(repeats)]
    lat = [latencies(max(rounds // 3, 1), seed) for seed in range(repeats)]
    if bot_length is None:
        bot_length = bot_round_length(max(rounds // 6, 1), repeats)
    apply_runs = [x[0] for x in lat]
    legal_runs = [x[1] for x in lat]
    per_second = median(n / dt for n, dt in runs)
    verdict = "ok" if per_second >= TARGET_ACTIONS_PER_SECOND else "BELOW TARGET"
    return [
        Figure(
            SECTION,
            "random self-play, actions/s",
            per_second,
            "{:,.0f}",
            f"target >= {TARGET_ACTIONS_PER_SECOND:,}: {verdict}; with legal_actions every move",
        ),
        Figure(SECTION, "random self-play, rounds/s", median(rounds / dt for _, dt in runs)),
        Figure(
            SECTION,
            "actions per round, random players",
            median(n / rounds for n, _ in runs),
            note="mostly run the stock out",
        ),
        Figure(
            SECTION,
            "actions per round, heuristic bots",
            bot_length,
            note="used to extrapolate per round / per match",
        ),
        Figure(SECTION, "apply p50, µs", median_percentile(apply_runs, 0.50)),
        Figure(SECTION, "apply p99, µs", median_percentile(apply_runs, 0.99)),
        Figure(SECTION, "legal_actions p50, µs", median_percentile(legal_runs, 0.50)),
        Figure(SECTION, "legal_actions p99, µs", median_percentile(legal_runs, 0.99)),
        Figure(
            SECTION,
            "state JSON, largest bytes in a round",
            median(x[2] for x in lat),
            "{:,.0f}",
            "shared_engine.dumps",
        ),
        Figure(SECTION, "state JSON, mean bytes", median(x[3] for x in lat), "{:,.0f}"),
        Figure(
            SECTION,
            "packed state, largest bytes in a round",
            median(x[4] for x in lat),
            "{:,.0f}",
            "shared_engine.pack: the TABLE item's state",
        ),
    ]


# Run in a child process whose working directory is the checkout measured; it uses
# only functions every checkout of this benchmark has.
_CHILD = """
import json, sys
from benchmarks.engine import latencies, self_play
rounds, seed = int(sys.argv[1]), int(sys.argv[2])
actions, seconds = self_play(rounds, seed)
legal = latencies(max(rounds // 3, 1), seed)[1]
print(json.dumps({"per_second": actions / seconds, "legal": legal}))
"""


def child(python: str, code: str, cwd: Path, *args: object) -> Any:
    """What a child process running ``code`` in ``cwd`` printed, as JSON."""
    out = subprocess.run(
        [python, "-c", code, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def _measure(checkout: Path, rounds: int, seed: int) -> tuple[float, list[float]]:
    """Self-play actions per second and ``legal_actions`` call times, in ``checkout``."""
    result = child(sys.executable, _CHILD, checkout, rounds, seed)
    return float(result["per_second"]), [float(x) for x in result["legal"]]


def compare(baseline: Path, rounds: int, repeats: int) -> list[Figure]:
    """Self-play throughput and ``legal_actions`` latency, ``baseline`` against this checkout."""
    here = Path(__file__).resolve().parent.parent
    runs: dict[str, list[tuple[float, list[float]]]] = {"baseline": [], "this": []}
    for seed in range(repeats):
        runs["baseline"].append(_measure(baseline, rounds, seed))
        runs["this"].append(_measure(here, rounds, seed))
    figures = []
    for name, results in runs.items():
        legal = [times for _, times in results]
        figures += [
            Figure(name, "random self-play, actions/s", median(r for r, _ in results), "{:,.0f}"),
            Figure(name, "legal_actions p50, µs", median_percentile(legal, 0.50)),
            Figure(name, "legal_actions p99, µs", median_percentile(legal, 0.99)),
        ]
    ratio = figures[3].value / figures[0].value
    figures.append(Figure("this", "self-play speed, this / baseline", ratio, "{:.2f}x", ">= 0.8x"))
    return figures


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure alongside")
    args = parser.parse_args(argv)
    if args.baseline is not None:
        title = f"engine, {args.baseline} against this checkout: {args.rounds} rounds"
        print(table(compare(args.baseline, args.rounds, args.repeats), f"{title} x {args.repeats}"))
        return 0
    print(
        table(
            figures(args.rounds, args.repeats),
            f"engine benchmark: {args.rounds} rounds x {args.repeats} repeats, medians",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
