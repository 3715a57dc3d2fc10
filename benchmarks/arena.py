"""The arena queue's seating, simulated: skill matching against first-come, side by side.

``python -m benchmarks.arena [--players N] [--rates R,R,...] [--seed S]`` queues
``N`` players (10,000 by default) arriving at random (a Poisson process) at each
rate, and seats them as the queue does (``services.matchmaking.skill.pick``, the
rule the arena runs) and as first-come does (the four oldest), on the same
arrivals. As in production a formation runs when a player's ticket arrives (its
``try_match``), reads the arriving player's shard first (the ``POOL`` oldest of it
when it holds that many, else the oldest of every shard), forms tables until it
cannot, and a player still waiting after the queue time leaves.

Each player has a rating drawn from a population (μ normal around 25, spread 8;
a fifth are new, never rated, and are matched, and counted here, as 25). Reported per rate: the
median and 95th-percentile wait of the seated, the share who left unseated, and
the median gap between the two teams' ratings and between the table's strongest and
weakest player.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from services.common.records import QUEUE_SHARDS
from services.matchmaking.skill import DEFAULT_RATING, POOL, pick, table_spread, team_gap

QUEUE_SECONDS = 90
"""The production stage's queue time (infra: ``queue_seconds``)."""
NEW_SHARE = 0.2
RATES = (0.2, 1.0, 5.0, 25.0)
"""Arrivals a second: a quiet arena to a busy one."""


@dataclass(frozen=True)
class Seeker:
    number: int
    queued_at: float
    rating: float | None
    shard: int


@dataclass
class Outcome:
    waits: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    spreads: list[float] = field(default_factory=list)
    left: int = 0
    """Players whose queue time ran out unseated (those still waiting at the end: none)."""


Four = tuple[Seeker, Seeker, Seeker, Seeker]
Seating = Callable[[Sequence[Seeker], float], Four | None]


def first_come(waiting: Sequence[Seeker], now: float) -> Four | None:
    """Today's quick-start seating: the four oldest, in the order they queued."""
    oldest = sorted(waiting, key=lambda s: s.queued_at)[:4]
    return (oldest[0], oldest[1], oldest[2], oldest[3]) if len(oldest) == 4 else None


def arrivals(players: int, rate: float, seed: int) -> list[Seeker]:
    rng = random.Random(seed)
    now, out = 0.0, []
    for number in range(players):
        now += rng.expovariate(rate)
        mu = rng.gauss(DEFAULT_RATING, 8.0)
        new = rng.random() < NEW_SHARE
        out.append(Seeker(number, now, None if new else mu, rng.randrange(QUEUE_SHARDS)))
    return out


def _read(waiting: list[Seeker], shard: int, limit: int) -> list[Seeker]:
    """What ``QueueStore.waiting`` returns: the shard's oldest if it has ``limit``."""
    own = [s for s in waiting if s.shard == shard]
    return own[:limit] if len(own) >= limit else waiting[:limit]


def simulate(seekers: Sequence[Seeker], seating: Seating, limit: int) -> Outcome:
    outcome = Outcome()
    waiting: list[Seeker] = []  # oldest first
    for arrival in seekers:
        now = arrival.queued_at
        kept = [s for s in waiting if now - s.queued_at <= QUEUE_SECONDS]
        outcome.left += len(waiting) - len(kept)
        waiting = [*kept, arrival]
        while (seated := seating(_read(waiting, arrival.shard, limit), now)) is not None:
            chosen = {s.number for s in seated}
            waiting = [s for s in waiting if s.number not in chosen]
            outcome.waits += [now - s.queued_at for s in seated]
            outcome.gaps.append(team_gap(seated))
            outcome.spreads.append(table_spread(seated))
    return outcome


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def _row(rate: float, name: str, outcome: Outcome, players: int) -> str:
    cells = [
        f"{rate:g}",
        name,
        f"{statistics.median(outcome.waits):.1f}",
        f"{percentile(outcome.waits, 0.95):.1f}",
        f"{outcome.left / players:.1%}",
        f"{statistics.median(outcome.gaps):.2f}",
        f"{statistics.median(outcome.spreads):.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


def report(players: int, rates: Sequence[float], seed: int) -> str:
    header = [
        "arrivals/s",
        "seating",
        "median wait s",
        "p95 wait s",
        "left unseated",
        "median team gap",
        "median table spread",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for rate in rates:
        seekers = arrivals(players, rate, seed)
        for name, seating, limit in (("first-come", first_come, 4), ("skill", pick, POOL)):
            lines.append(_row(rate, name, simulate(seekers, seating, limit), players))
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.arena", description=__doc__)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES))
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    if not 100 <= args.players <= 50_000 or not all(0.01 <= r <= 1000 for r in rates):
        parser.error("simulate 100 to 50,000 players at 0.01 to 1,000 arrivals a second")
    print(f"{args.players:,} players a rate, seed {args.seed}, queue time {QUEUE_SECONDS} s")
    print("(gaps in rating points of the model's mu, as the queue knows them)\n")
    print(report(args.players, rates, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
