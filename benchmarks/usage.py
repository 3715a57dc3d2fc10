"""From metered matches to usage per action, per round and per match.

Every invocation of a played match is put in one of three buckets:

* **action**: the ``play`` message itself, the relay invocation that
  publishes its ``LOG`` item's events, and the stale turn timer that fires
  once per turn (every turn's schedule fires once; turn ignores it when the
  turn is over). Divided by the actions played.
* **round**: deal (on ``RoundScored``), score, each player's ``continue``
  after a round's result (the last one deals the next round), the turn
  service's ``RoundStarted``, and the relay of ``ROUND``/``SCORE`` items.
  Divided by the rounds played.
* **match**: everything done once per match: the authorizer, ``$connect``
  and ``$disconnect``, queueing and the tickets' executions, forming the
  table and dealing its first round (on ``TableFormed``), the ledger's
  settlement, presence events.

A round is then extrapolated as ``round + A × action`` and a match as
``match + R × round`` with ``A`` the heuristic bots' actions per round
measured by the engine and ``R`` = 3 rounds; the measured totals of the
played matches are given beside it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from benchmarks.handlers import MatchRun
from benchmarks.handlers import label as function_label
from benchmarks.meter import KB, Invocation
from benchmarks.report import Figure, median
from infra import manifest

Work = Counter[str]
"""Usage counters: ``invocations:<function>``, ``cpu:<function>`` (seconds),
``call:<function>:<service.Operation>``, ``wru``, ``rru``, ``pushes``,
``push_messages`` (32 KB units), ``inbound_messages``, ``events`` (64 KB
units), ``sqs_messages``, ``scheduler_invocations``, ``sfn_transitions``."""

SQS_FUNCTIONS = frozenset(function_label(handler) for handler in manifest.queue_handlers().values())
WEBSOCKET_ROUTES = frozenset(
    function_label(handler)
    for route, handler in manifest.websocket_routes().items()
    if route not in ("$connect", "$disconnect")
)
"""The functions that receive the players' messages (each invocation is one inbound message)."""
TYPICAL_LATENCY_MS = {
    "dynamodb.GetItem": 4.0,
    "dynamodb.Query": 6.0,
    "dynamodb.PutItem": 6.0,
    "dynamodb.UpdateItem": 6.0,
    "dynamodb.DeleteItem": 6.0,
    "dynamodb.TransactWriteItems": 12.0,
    "apigatewaymanagementapi.PostToConnection": 10.0,
    "events.PutEvents": 10.0,
    "scheduler.CreateSchedule": 20.0,
    "sfn.StartExecution": 15.0,
    "sfn.SendTaskSuccess": 10.0,
}
"""Assumed in-region round trips, for the second duration figure (not measured here)."""


def typical_seconds(invocation: Invocation) -> float:
    """The invocation's own CPU time plus a typical in-region latency for each AWS call."""
    return invocation.own_cpu + sum(
        count * TYPICAL_LATENCY_MS.get(op, 10.0) / 1000 for op, count in invocation.calls.items()
    )


def category(invocation: Invocation) -> str:
    function, parts = invocation.function, set(invocation.kind.split("+"))
    if function == "turn.websocket" and invocation.kind.startswith("play"):
        return "action"
    if function == "turn.websocket" and invocation.kind == "continue":
        return "round"
    if function == "turn.timers" or (function == "relay.stream" and "LOG" in parts):
        return "action"
    if function == "score.events" or (function == "deal.events" and "RoundScored" in parts):
        return "round"
    if function == "turn.events" and "RoundStarted" in parts:
        return "round"
    if function == "turn.websocket" and invocation.kind == "continue":
        return "round"
    if function == "relay.stream" and parts <= {"ROUND", "SCORE"}:
        return "round"
    return "match"


def work_of(invocation: Invocation) -> Work:
    f = invocation.function
    work: Work = Counter()
    work[f"invocations:{f}"] += 1
    work[f"cpu:{f}"] += invocation.cpu
    work[f"own:{f}"] += invocation.own_cpu
    for op, count in invocation.calls.items():
        work[f"call:{f}:{op}"] += count
        work[f"call:{op}"] += count
    work["aws_calls"] += sum(invocation.calls.values())
    work["wru"] += invocation.wru
    work["rru"] += invocation.rru
    work["pushes"] += invocation.pushes
    work["push_messages"] += sum(max(1, math.ceil(b / (32 * KB))) for b in invocation.push_bytes)
    work["events"] += sum(max(1, math.ceil(b / (64 * KB))) for b in invocation.event_bytes)
    if f in SQS_FUNCTIONS and f != "turn.timers":
        work["sqs_messages"] += invocation.records
    if f == "turn.timers":
        work["timers_delivered"] += invocation.records
    # Every timer armed is delivered once, stale or not, whether or not it fired before
    # the benchmark ended (its bots are faster than a person): counted when armed.
    schedules = invocation.calls["scheduler.CreateSchedule"]
    armed = invocation.calls["sqs.SendMessage"] + schedules
    work["timers_armed"] += armed
    work["sqs_messages"] += armed
    work["scheduler_invocations"] += schedules
    if f in WEBSOCKET_ROUTES:
        work["inbound_messages"] += 1
    return work


def buckets(run: MatchRun) -> dict[str, Work]:
    out: dict[str, Work] = {"action": Counter(), "round": Counter(), "match": Counter()}
    for invocation in run.invocations:
        out[category(invocation)].update(work_of(invocation))
    out["match"]["sfn_transitions"] += run.counts.sfn_transitions
    out["match"]["tickets"] += 4
    return out


def scaled(work: Work, factor: float) -> Work:
    return Counter({k: v * factor for k, v in work.items()})


def added(*works: Work) -> Work:
    total: Work = Counter()
    for work in works:
        total.update(work)
    return total


def medians(works: Iterable[Work]) -> Work:
    """Key by key, the median over runs (a key a run lacks counts as 0 there)."""
    runs = list(works)
    keys = set().union(*runs)
    return Counter({k: median(w.get(k, 0.0) for w in runs) for k in keys})


@dataclass(frozen=True)
class Usage:
    per_action: Work
    per_round_fixed: Work
    per_match_fixed: Work
    actions_per_round: float
    rounds: int
    measured_match: Work
    measured_actions: float

    @property
    def per_round(self) -> Work:
        return added(self.per_round_fixed, scaled(self.per_action, self.actions_per_round))

    @property
    def per_match(self) -> Work:
        return added(self.per_match_fixed, scaled(self.per_round, self.rounds))


def usage(runs: Sequence[MatchRun], actions_per_round: float, rounds: int = 3) -> Usage:
    split = [buckets(run) for run in runs]
    return Usage(
        per_action=medians(
            scaled(b["action"], 1 / r.actions) for b, r in zip(split, runs, strict=True)
        ),
        per_round_fixed=medians(
            scaled(b["round"], 1 / r.rounds) for b, r in zip(split, runs, strict=True)
        ),
        per_match_fixed=medians(b["match"] for b in split),
        actions_per_round=actions_per_round,
        rounds=rounds,
        measured_match=medians(added(*b.values()) for b in split),
        measured_actions=median(r.actions for r in runs),
    )


KEPT_TABLES = ("canasta-games", "canasta-ledger")
"""What a match leaves stored for good: its table's items (no TTL) and its ledger entries."""


def stored_per_match(runs: Sequence[MatchRun]) -> float:
    return median(sum(r.stored_bytes.get(t, 0) for t in KEPT_TABLES) for r in runs)


MEMORY_MB = {function_label(spec.handler): spec.memory_mb for spec in manifest.FUNCTIONS.values()}
"""Each function's memory as deployed (``FunctionSpec.memory_mb``): what Lambda bills per
second, and the share of a vCPU it runs on."""
FULL_VCPU_MB = 1769
"""Lambda gives one full vCPU at 1,769 MB, and CPU in proportion to memory below it."""


def cpu_slowdown(function: str) -> float:
    """How much longer the function's own CPU work takes on Lambda than on the one core it
    was measured on: the inverse of its vCPU share (1 at 1,769 MB and above)."""
    return max(1.0, FULL_VCPU_MB / MEMORY_MB[function])


def lambda_functions(work: Work) -> list[str]:
    return sorted(k.split(":", 1)[1] for k in work if k.startswith("invocations:"))


# --- figures ------------------------------------------------------------------------

WARM = "warm handlers (in-process moto, one three-round match per run)"
UNITS = "usage per action / round / match"
SHOWN = (
    ("Lambda invocations", "invocations"),
    ("AWS calls by the functions", "aws_calls"),
    ("DynamoDB write units (WRU)", "wru"),
    ("DynamoDB read units (RRU)", "rru"),
    ("WebSocket messages pushed", "push_messages"),
    ("WebSocket messages received", "inbound_messages"),
    ("EventBridge events", "events"),
    ("SQS messages", "sqs_messages"),
    ("Scheduler invocations", "scheduler_invocations"),
)
WITHIN_TURN = [["Update:TABLE"]]
"""A move within its turn: the table item's conditional update, no transaction."""
TURN_ENDS = [["Update:TABLE", "Put:LOG"]]
"""The move that ends its turn: the table and the turn's one log item, one transaction."""
PLAY_OPS = (
    "dynamodb.GetItem",
    "dynamodb.UpdateItem",
    "dynamodb.TransactWriteItems",
    "scheduler.CreateSchedule",
    "apigatewaymanagementapi.PostToConnection",
)


def _total(work: Work, key: str) -> float:
    if key == "invocations":
        return sum(v for k, v in work.items() if k.startswith("invocations:"))
    return work.get(key, 0.0)


def _plays(run: MatchRun) -> list[Invocation]:
    return [
        i for i in run.invocations if category(i) == "action" and i.function == "turn.websocket"
    ]


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def figures(runs: Sequence[MatchRun], measured: Usage) -> list[Figure]:
    """The warm section and the usage section; means per run, then the median of the runs."""
    from benchmarks.report import median_percentile

    plays = [_plays(run) for run in runs]

    def per_play(value: Callable[[Invocation], float], kinds: tuple[str, ...] = ()) -> float:
        return median(_mean(value(i) for i in p if not kinds or i.kind in kinds) for p in plays)

    def ms(value: Callable[[Invocation], float]) -> list[list[float]]:
        return [[value(i) * 1e3 for i in p] for p in plays]

    cpu, wall, own = ms(lambda i: i.cpu), ms(lambda i: i.wall), ms(lambda i: i.own_cpu)
    largest = {
        kind: max(r.largest_items.get(f"canasta-games:{kind}", 0) for r in runs)
        for kind in ("TABLE", "LOG", "ROUND", "SCORE")
    }
    push_max = max((b for p in plays for i in p for b in i.push_bytes), default=0)
    simple = ("play:draw", "play:discard")
    out = [
        Figure(
            WARM,
            "matches played (after a warm-up match)",
            len(runs),
            "{:.0f}",
            f"median {measured.measured_actions:.0f} actions, "
            f"{median(r.rounds for r in runs):.0f} rounds, "
            f"{median(r.seconds for r in runs):.0f} s each; errors: "
            f"{sum(len(r.errors) for r in runs)}",
        ),
        Figure(
            WARM,
            "play handler p50, ms (CPU)",
            median_percentile(cpu, 0.5),
            "{:.2f}",
            f"wall {median_percentile(wall, 0.5):.2f}; moto's own work included",
        ),
        Figure(
            WARM,
            "play handler p99, ms (CPU)",
            median_percentile(cpu, 0.99),
            "{:.2f}",
            f"wall {median_percentile(wall, 0.99):.2f}",
        ),
        Figure(
            WARM,
            "play handler own code p50, ms (CPU)",
            median_percentile(own, 0.5),
            "{:.2f}",
            "everything but the AWS calls",
        ),
        Figure(WARM, "play handler own code p99, ms (CPU)", median_percentile(own, 0.99), "{:.2f}"),
        Figure(
            WARM,
            "play handler in AWS, estimated p50, ms",
            median_percentile(ms(typical_seconds), 0.5),
            "{:.1f}",
            "own code + a typical latency per call (benchmarks/usage.py); "
            f"p99 {median_percentile(ms(typical_seconds), 0.99):.1f}",
        ),
        Figure(
            WARM,
            "AWS calls per play action",
            per_play(lambda i: i.calls.total()),
            "{:.2f}",
            f"draw/discard {per_play(lambda i: i.calls.total(), simple):.2f}; by type:",
        ),
    ]
    out += [
        Figure(WARM, f"  {op}", per_play(lambda i, op=op: i.calls[op]), "{:.2f}") for op in PLAY_OPS
    ]
    out += [
        Figure(
            WARM,
            "plays with exactly one state write",
            per_play(lambda i: i.writes in (WITHIN_TURN, TURN_ENDS)),
            "{:.0%}",
            "within a turn one conditional UpdateItem of TABLE; a turn's end one "
            "TransactWriteItems, TABLE + one LOG; "
            f"within a turn {per_play(lambda i: i.writes == WITHIN_TURN):.0%} of plays",
        ),
        Figure(
            WARM,
            "table reads per play (consistent GetItem)",
            per_play(lambda i: i.tables["GetItem:canasta-games"]),
            "{:.2f}",
            "ledger reads per draw/discard: "
            + format(
                per_play(
                    lambda i: sum(v for k, v in i.tables.items() if k.endswith("canasta-ledger")),
                    simple,
                ),
                ".2f",
            ),
        ),
        Figure(
            WARM,
            "WRU per play action",
            per_play(lambda i: i.wru),
            "{:.2f}",
            "1 WRU per started KB of an item written alone, 2 in a transaction",
        ),
        Figure(WARM, "RRU per play action", per_play(lambda i: i.rru), "{:.2f}"),
        Figure(
            WARM,
            "pushes per play action",
            per_play(lambda i: i.pushes),
            "{:.2f}",
            f"largest {push_max:,} bytes (one message per 32 KB)",
        ),
        Figure(
            WARM,
            "TABLE item, largest bytes",
            largest["TABLE"],
            "{:,.0f}",
            f"LOG {largest['LOG']:,}, ROUND {largest['ROUND']:,}, SCORE {largest['SCORE']:,}",
        ),
    ]
    per_action, per_round, per_match = measured.per_action, measured.per_round, measured.per_match
    for label, key in SHOWN:
        out.append(
            Figure(
                UNITS,
                f"{label}, per action",
                _total(per_action, key),
                "{:.2f}",
                f"per round {_total(per_round, key):,.1f}; per match {_total(per_match, key):,.0f} "
                f"(measured {_total(measured.measured_match, key):,.0f})",
            )
        )
    out.append(
        Figure(
            UNITS,
            "actions per round used",
            measured.actions_per_round,
            "{:.1f}",
            f"engine, heuristic bots; {measured.rounds} rounds a match; "
            f"the measured matches had {measured.measured_actions:.0f} actions",
        )
    )
    return out
