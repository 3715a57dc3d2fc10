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
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from benchmarks.handlers import Match, MatchRun, environment, patched_environment, play_matches
from benchmarks.meter import Invocation
from benchmarks.usage import typical_seconds
from services.common.leaderboards import BOARD_SHARDS
from services.common.ledger import RECORD_SHARDS
from services.common.records import QUEUE_SHARDS

MATCHES_PER_DAY = 1_000_000
PEAK_FACTOR = 5
PEAK_MATCHES_PER_SECOND = MATCHES_PER_DAY / 86_400 * PEAK_FACTOR
WRITE_LIMIT = 1_000
READ_LIMIT = 3_000
SHARE = 0.25
"""No key may need more than this share of a partition's limits."""
ARENA_STAKE = 100
BOOKING_CLIENT = "other-mode"
BOOKINGS_PER_MATCH = 4
"""Another mode as busy as this game settles its four players with one booking each."""

_ENTITIES = (
    (re.compile(r"^((?:QUEUE|CLIENT)#[^#]+)#\d+$"), r"\1#<shard>"),
    (re.compile(r"^((?:BOARD|RANKS)#[^#]+)#\d{4}-\d{2}#"), r"\1#<month>#"),
    (re.compile(r"^((?:BOARD|RANKS)#[^#]+#[^#]+)#\d+$"), r"\1#<shard>"),
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
    """What one key pattern takes over the samples (matches or bookings) measured."""

    table: str
    pattern: str
    samples: int
    rate: float
    """Samples a second at the peak hour."""
    keys: set[str] = field(default_factory=set)
    units: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    """Total read and write units over every sample, all keys of the pattern."""
    burst: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    """The most units one invocation put on one key of the pattern in a second."""

    @property
    def shards(self) -> int:
        """How many keys share the traffic of a sharded key (one of ``<shard>``), else 1.

        The shard is a CRC-32 of the player or of the idempotency key, so at the
        peak's thousands of arrivals a second each shard takes its even share;
        the few samples measured here cannot show that evenness, so the units
        of every shard are pooled and divided."""
        if self.pattern.startswith("QUEUE#") and self.pattern.endswith("#<shard>"):
            return QUEUE_SHARDS
        if self.pattern.startswith("CLIENT#") and self.pattern.endswith("#<shard>"):
            return RECORD_SHARDS
        if self.pattern.startswith(("BOARD#", "RANKS#")) and self.pattern.endswith("#<shard>"):
            return BOARD_SHARDS
        return 1

    @property
    def shared(self) -> bool:
        """A key that names no entity serves every sample of the traffic."""
        return self.pattern in self.keys or self.shards > 1

    def per_sample(self, kind: str) -> float:
        """Units a sample puts on one key of the pattern (a shared key: the one key, or
        its share of them when sharded)."""
        keys_per_sample = self.shards if self.shared else max(1, len(self.keys) / self.samples)
        return self.units[kind] / self.samples / keys_per_sample

    def peak(self, kind: str) -> float:
        """Units per second on one key at the peak hour."""
        if self.shared:
            return self.per_sample(kind) * self.rate
        return self.burst[kind]

    @property
    def share(self) -> float:
        return max(self.peak("read") / READ_LIMIT, self.peak("write") / WRITE_LIMIT)


def loads(samples: Sequence[Sequence[Invocation]], rate: float) -> list[KeyLoad]:
    """Every key pattern the samples touched, the hottest first."""
    out: dict[tuple[str, str], KeyLoad] = {}
    for invocations in samples:
        for invocation in invocations:
            seconds = typical_seconds(invocation)
            for (table, key, kind), units in invocation.key_units.items():
                name = pattern(key)
                load = out.setdefault((table, name), KeyLoad(table, name, len(samples), rate))
                load.keys.add(key)
                load.units[kind] += units
                load.burst[kind] = max(load.burst[kind], units / max(1.0, seconds))
    return sorted(out.values(), key=lambda load: -load.share)


def shards_needed(reads: float, writes: float) -> int:
    """Partitions a key must be split into so that each takes at most a quarter of the limits."""
    return max(
        1, math.ceil(reads / (SHARE * READ_LIMIT)), math.ceil(writes / (SHARE * WRITE_LIMIT))
    )


def _row(load: KeyLoad) -> list[str]:
    reads, writes = load.peak("read"), load.peak("write")
    over = reads > SHARE * READ_LIMIT or writes > SHARE * WRITE_LIMIT
    return [
        load.table.removeprefix("canasta-"),
        f"`{load.pattern}`",
        "shared" if load.shared else "per entity",
        f"{load.per_sample('read'):,.1f}",
        f"{load.per_sample('write'):,.1f}",
        f"{reads:,.0f}",
        f"{writes:,.0f}",
        f"{load.share:.0%}",
        f"**over 1/4: {shards_needed(reads, writes)}x**" if over else "ok",
    ]


def _plural(unit: str, count: int) -> str:
    return unit if count == 1 else f"{unit}es" if unit.endswith("h") else f"{unit}s"


def report(
    title: str,
    samples: Sequence[Sequence[Invocation]],
    rate: float = PEAK_MATCHES_PER_SECOND,
    unit: str = "match",
) -> str:
    """A markdown table of every key pattern of the samples, the hottest first."""
    header = [
        "table",
        "partition key",
        "kind",
        f"RRU / {unit}",
        f"WRU / {unit}",
        "peak RRU/s",
        "peak WRU/s",
        "of limit",
        "verdict",
    ]
    count = len(samples)
    lines = [
        f"### {title} ({count} {_plural(unit, count)} measured)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(_row(load)) + " |" for load in loads(samples, rate)]
    return "\n".join(lines)


def play_bookings(count: int) -> list[Invocation]:
    """``count`` bookings of another mode through the ledger API's use case, each metered,
    each for another player (as the other modes' settlements would be)."""
    from services.common.adapters import EventBridgePublisher, SystemClock
    from services.common.dynamo_storage import DynamoStorage
    from services.common.ledger import Ledger
    from services.common.settings import LedgerClient
    from services.common.store import GameStore
    from services.common.telemetry import RecordingTelemetry
    from services.ledger.app import LedgerService

    # As busy a client as this game: its day's usage in 8 counters (docs/ledger-api.md).
    limits = LedgerClient(points_per_booking=1_000, points_per_day=10**9, day_shards=8)
    with patched_environment(environment()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        match = Match()
        with match.account():
            settings = match.settings
            storage = DynamoStorage.of(match.client("dynamodb"), settings)
            service = LedgerService(
                Ledger(storage),
                GameStore(storage),
                EventBridgePublisher(match.client("events"), settings.event_bus),
                SystemClock(),
                RecordingTelemetry(),
                clients={BOOKING_CLIENT: limits},
            )
            start = len(match.meter.invocations)
            for number in range(count):
                with match.meter.metering("ledger.api", "post"):
                    service.post(
                        BOOKING_CLIENT, f"m{number:03d}-player-1", f"booking-{number:06d}", 100, 0
                    )
            return list(match.meter.invocations[start:])


def _of(runs: Sequence[MatchRun]) -> list[list[Invocation]]:
    return [run.invocations for run in runs]


def summary(runs: Iterable[MatchRun]) -> str:
    played = list(runs)
    rounds = sum(r.rounds for r in played)
    actions = sum(r.actions for r in played)
    return (
        f"{len(played)} {_plural('match', len(played))}, {rounds} rounds, {actions} actions; "
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
    parser.add_argument(
        "--bookings", type=int, default=20, help="the other modes' API bookings (default 20)"
    )
    args = parser.parse_args(argv)
    counts = (args.matches, args.arena, args.abandoned)
    if not 1 <= args.matches <= 10 or not all(0 <= c <= 10 for c in counts):
        parser.error("play 1 to 10 quick-start matches, and 0 to 10 of the others")
    if not 0 <= args.bookings <= 200:
        parser.error("book 0 to 200 times")
    quick = play_matches(args.matches)
    sections = [report("Quick start, three rounds", _of(quick)), "", summary(quick)]
    played = list(quick)
    if args.arena:
        arena = play_matches(args.arena, warmup=False, mode="arena", stake=ARENA_STAKE)
        sections += ["", report(f"Arena, stake {ARENA_STAKE}", _of(arena)), "", summary(arena)]
        played += arena
    if args.abandoned:
        left = play_matches(args.abandoned, warmup=False, everyone_leaves=True)
        title = "Quick start, every player leaves at once (round 1 auto-played)"
        sections += ["", report(title, _of(left)), "", summary(left)]
        played += left
    if args.bookings:
        booked = [[invocation] for invocation in play_bookings(args.bookings)]
        rate = BOOKINGS_PER_MATCH * PEAK_MATCHES_PER_SECOND
        title = f"Another mode's bookings through the ledger API, {rate:,.0f} a second at the peak"
        sections += ["", report(title, booked, rate, "booking")]
    errors = [e for run in played for e in run.errors]
    print("\n".join(sections))
    if errors:
        print("errors:", *errors, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
