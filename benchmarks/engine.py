"""Engine figures: random self-play throughput, per-call latencies, state size.

``python -m benchmarks.engine [--rounds N] [--repeats R]`` plays seeded
rounds with a uniformly random player that lists every legal action before
each move, exactly as a bot or a test would, on one core. Each figure is the
median over the repeats.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence

from shared_engine import apply, legal_actions, start_round
from shared_engine.state import dumps


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def self_play(rounds: int, seed: int) -> tuple[int, float]:
    """Actions played and seconds taken by ``rounds`` random rounds."""
    rng = random.Random(seed)
    actions = 0
    start = time.perf_counter()
    for i in range(rounds):
        state = start_round(f"bench-{seed}-{i}", twos=i % 2 == 0)
        while state.phase != "round_over":
            seat = state.turn
            state, _ = apply(state, seat, rng.choice(legal_actions(state, seat)))
            actions += 1
    return actions, time.perf_counter() - start


def latencies(rounds: int, seed: int) -> tuple[list[float], list[float], int, int]:
    """Per-call times of ``apply`` and ``legal_actions`` (µs), and state JSON bytes."""
    rng = random.Random(seed)
    apply_us: list[float] = []
    legal_us: list[float] = []
    largest = 0
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
            total_bytes += size
            samples += 1
    return apply_us, legal_us, largest, total_bytes // max(samples, 1)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    runs = [self_play(args.rounds, seed) for seed in range(args.repeats)]
    per_second = [n / dt for n, dt in runs]
    rounds_per_second = [args.rounds / dt for _, dt in runs]
    lat = [latencies(max(args.rounds // 3, 1), seed) for seed in range(args.repeats)]
    apply_runs = [a for a, _, _, _ in lat]
    legal_runs = [b for _, b, _, _ in lat]

    def median_pct(runs: list[list[float]], q: float) -> float:
        return statistics.median(_percentile(samples, q) for samples in runs)

    rows = [
        ("random self-play, actions/s (1 core)", statistics.median(per_second), "{:,.0f}"),
        ("random self-play, rounds/s", statistics.median(rounds_per_second), "{:,.1f}"),
        ("actions per round (mean)", statistics.median(n / args.rounds for n, _ in runs), "{:.1f}"),
        ("apply p50, µs", median_pct(apply_runs, 0.50), "{:.1f}"),
        ("apply p99, µs", median_pct(apply_runs, 0.99), "{:.1f}"),
        ("legal_actions p50, µs", median_pct(legal_runs, 0.50), "{:.1f}"),
        ("legal_actions p99, µs", median_pct(legal_runs, 0.99), "{:.1f}"),
        ("state JSON, largest bytes", statistics.median(x[2] for x in lat), "{:,.0f}"),
        ("state JSON, mean bytes", statistics.median(x[3] for x in lat), "{:,.0f}"),
    ]
    print(f"engine benchmark: {args.rounds} rounds x {args.repeats} repeats, medians")
    for label, value, fmt in rows:
        print(f"  {label:<38} {fmt.format(value):>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
