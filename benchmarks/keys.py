"""Partition keys at internet scale: the load on each key, from matches played and scaled.

``python -m benchmarks.keys [--matches N] [--arena N]`` plays quick-start and
arena three-round matches through the real handlers on in-process moto
(``benchmarks.handlers``; bounded: a few matches, a few minutes), counts the
capacity units every partition key takes (``benchmarks.meter``: reads and
writes by DynamoDB's size rules, transactions at twice the units), and scales
them to the target traffic: 1 million three-round matches a day, the peak
hour at 5 times the day's average rate.

A key is one of two kinds, and scales accordingly:

* **shared**: the same key serves every match (a queue, a shared account):
  its rate grows with the traffic. At the peak, every match of the traffic
  is assumed to go through the one key (the worst case: all quick-start
  matches in one queue, or all in the arena at one stake).
* **per entity**: a key of one table, player, connection or escrow account:
  its rate is bounded by what one entity does, whatever the traffic. Its
  figure is the most units one invocation puts on it in a second: the
  invocation's units on the key over its duration, at a typical in-region
  latency per AWS call (``benchmarks.usage.typical_seconds``), or over one
  second when it is shorter (DynamoDB meters a partition by the second).

Each rate is compared with DynamoDB's per-partition limits (1,000 write and
3,000 read units a second); the design rule is that no key needs more than a
quarter of either. docs/capacity.md holds the figures and the shard designs.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from benchmarks.handlers import MatchRun, play_matches
from benchmarks.usage import typical_seconds

MATCHES_PER_DAY = 1_000_000
PEAK_FACTOR = 5
PEAK_MATCHES_PER_SECOND = MATCHES_PER_DAY / 86_400 * PEAK_FACTOR
WRITE_LIMIT = 1_000
READ_LIMIT = 3_000
SHARE = 0.25
"""No key may need more than this share of a partition's limits."""
ARENA_STAKE = 100

_ENTITIES = (
    (re.compile(r"conn-m\d{3}-player-\d"), "<connection>"),
    (re.compile(r"m\d{3}-player-\d"), "<player>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<table>"),
)


def pattern(key: str) -> str:
    """The key with its entity ids (players, connections, tables) replaced by their kind."""
    for regex, name in _ENTITIES:
        key = regex.sub(name, key)
    return key


@dataclass
class KeyLoad:
    """What one key pattern takes, over the matches played."""

    table: str
    pattern: str
    shared: bool = False
    keys: set[str] = field(default_factory=set)
    units: Counter[str] = field(default_factory=Counter)
    """Total read and write units over every match, all keys of the pattern."""
    burst: Counter[str] = field(default_factory=Counter)
    """The most units one invocation put on one key of the pattern in a second."""

    def per_match(self, kind: str, matches: int) -> float:
        """Units a match puts on one key of the pattern (a shared key: the one key)."""
        keys_per_match = 1 if self.shared else max(1, len(self.keys) / matches)
        return self.units[kind] / matches / keys_per_match

    def peak(self, kind: str, matches: int) -> float:
        """Units per second on one key at the peak hour."""
        if self.shared:
            return self.per_match(kind, matches) * PEAK_MATCHES_PER_SECOND
        return self.burst[kind]


def loads(runs: Sequence[MatchRun]) -> dict[tuple[str, str], KeyLoad]:
    """Every key pattern the runs touched; a key that names no entity, or that two matches
    touched, is shared."""
    seen_in: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    out: dict[tuple[str, str], KeyLoad] = {}
    for number, run in enumerate(runs):
        for invocation in run.invocations:
            seconds = typical_seconds(invocation)
            for (table, key, kind), units in invocation.key_units.items():
                load = out.setdefault(
                    (table, pattern(key)), KeyLoad(table=table, pattern=pattern(key))
                )
                load.keys.add(key)
                load.units[kind] += units
                load.burst[kind] = max(load.burst[kind], units / max(1.0, seconds))
                seen_in[(table, key)].add(number)
    for (table, key), matches in seen_in.items():
        if len(matches) > 1 or pattern(key) == key:
            out[(table, pattern(key))].shared = True
    return out


def shards_needed(reads: float, writes: float) -> int:
    """Partitions a key must be split into so that each takes at most a quarter of the limits."""
    return max(
        1, math.ceil(reads / (SHARE * READ_LIMIT)), math.ceil(writes / (SHARE * WRITE_LIMIT))
    )


def _row(load: KeyLoad, matches: int) -> list[str]:
    reads, writes = load.peak("read", matches), load.peak("write", matches)
    over = reads > SHARE * READ_LIMIT or writes > SHARE * WRITE_LIMIT
    return [
        load.table.removeprefix("canasta-"),
        f"`{load.pattern}`",
        "shared" if load.shared else "per entity",
        f"{load.per_match('read', matches):,.1f}",
        f"{load.per_match('write', matches):,.1f}",
        f"{reads:,.0f}",
        f"{writes:,.0f}",
        f"{max(reads / READ_LIMIT, writes / WRITE_LIMIT):.0%}",
        f"**over 1/4: {shards_needed(reads, writes)}x**" if over else "ok",
    ]


HEADER = [
    "table",
    "partition key",
    "kind",
    "RRU / match",
    "WRU / match",
    "peak RRU/s",
    "peak WRU/s",
    "of limit",
    "verdict",
]


def report(title: str, runs: Sequence[MatchRun]) -> str:
    """A markdown table of every key pattern of the runs, the hottest first."""
    by_key = loads(runs)
    matches = len(runs)
    ordered = sorted(
        by_key.values(),
        key=lambda load: (
            -max(load.peak("read", matches) / READ_LIMIT, load.peak("write", matches) / WRITE_LIMIT)
        ),
    )
    lines = [
        f"### {title} ({matches} match{'es' if matches != 1 else ''} measured)",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(_row(load, matches)) + " |" for load in ordered]
    return "\n".join(lines)


def summary(runs: Iterable[MatchRun]) -> str:
    played = list(runs)
    rounds = sum(r.rounds for r in played)
    actions = sum(r.actions for r in played)
    return (
        f"{len(played)} matches, {rounds} rounds, {actions} actions; "
        f"peak {PEAK_MATCHES_PER_SECOND:,.1f} matches/s "
        f"({MATCHES_PER_DAY:,} a day, peak hour x{PEAK_FACTOR})"
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.keys", description=__doc__)
    parser.add_argument("--matches", type=int, default=2, help="quick-start matches (default 2)")
    parser.add_argument("--arena", type=int, default=2, help="arena matches (default 2)")
    parser.add_argument(
        "--abandoned",
        type=int,
        default=1,
        help="matches every player leaves at once, auto-played to the end of round 1 (default 1)",
    )
    args = parser.parse_args(argv)
    counts = (args.matches, args.arena, args.abandoned)
    if not 1 <= args.matches <= 10 or not all(0 <= c <= 10 for c in counts):
        parser.error("play 1 to 10 quick-start matches, and 0 to 10 of the others")
    quick = play_matches(args.matches)
    sections = [report("Quick start, three rounds", quick), "", summary(quick)]
    played = list(quick)
    if args.arena:
        arena = play_matches(args.arena, warmup=False, mode="arena", stake=ARENA_STAKE)
        sections += ["", report(f"Arena, stake {ARENA_STAKE}", arena), "", summary(arena)]
        played += arena
    if args.abandoned:
        left = play_matches(args.abandoned, warmup=False, everyone_leaves=True)
        title = "Quick start, every player leaves at once (round 1 auto-played)"
        sections += ["", report(title, left), "", summary(left)]
        played += left
    errors = [e for run in played for e in run.errors]
    print("\n".join(sections))
    if errors:
        print("errors:", *errors, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
