"""What a match costs on AWS: list prices × the usage measured through the handlers.

``python -m benchmarks.cost [--matches N]`` plays matches through the real
handlers (``benchmarks.handlers``), turns them into usage per action, round
and match (``benchmarks.usage``), and prices one three-round match and one
million of them, per AWS service.

Prices: AWS on-demand list prices, us-east-1, as listed in 2026 (below, with
their units). Free tiers are left out. Assumptions, printed with the figures:

* each function has the memory the manifest gives it (``FunctionSpec.memory_mb``:
  the turn functions 1,024 MB, the others 256 MB), on arm64; Lambda bills
  GB-seconds at that memory;
* billed duration: the CPU time each invocation took warm, in-process, with
  moto standing in for AWS (rounded up to the millisecond), the function's own
  part stretched by its vCPU share (Lambda gives a whole vCPU at 1,769 MB and
  proportionally less below: 256 MB runs the same work about 6.9 times
  longer). A second figure replaces moto's time with a typical in-region
  latency per AWS call (``TYPICAL_LATENCY_MS``): the handlers wait on the
  network, and that is what Lambda bills;
* WebSocket connection minutes: four players connected for the whole match,
  ``SECONDS_PER_ACTION`` per action played (people think), plus the wait in
  the queue; ``$connect``/``$disconnect`` are not counted as messages;
* SQS: three requests per message (the send by EventBridge, the Scheduler
  or Step Functions, the event source mapping's receive, and its delete);
  the mappings' empty long polls are a fixed cost per queue, not per match;
* turn timers: every timer the functions arm (an SQS delay, or a Scheduler
  schedule for a deadline over 15 minutes: one Scheduler invocation more) is
  one SQS message delivered, whether it plays a turn or is stale, and one
  invocation of the timer function; the benchmark's bots outpace their timers,
  so those it did not see fire are billed as a stale one (``STALE_TIMER_MS``);
  and at a person's pace the table's one pending timer comes due about once a
  turn's time (``Settings.turn_seconds``) while the match runs and hands on to
  the turn then running: ``actions x SECONDS_PER_ACTION / turn_seconds`` more,
  each billed as a stale one;
* Step Functions: the states each ticket's execution entered, walking the
  state machine's definition as the match's answers led it (``benchmarks.tickets``:
  one for a ticket answered seated, TryMatch then Abandon for one whose time ran out);
* storage: the match's items are kept (the games table has no TTL): the
  price is per month kept;
* DynamoDB Streams read by Lambda: free.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.report import Figure
from benchmarks.usage import (
    MEMORY_MB,
    TYPICAL_LATENCY_MS,
    Usage,
    Work,
    cpu_slowdown,
    lambda_functions,
)
from services.common.settings import Settings

PRICES_AS_OF = "AWS on-demand list prices as of 2026, us-east-1"

LAMBDA_ARM_GB_SECOND = 0.0000133334
LAMBDA_REQUEST = 0.20 / 1e6
DYNAMODB_WRU = 0.625 / 1e6
DYNAMODB_RRU = 0.125 / 1e6
DYNAMODB_STORAGE_GB_MONTH = 0.25
DYNAMODB_STREAMS_LAMBDA_READ = 0.0
APIGW_WEBSOCKET_MESSAGE = 1.00 / 1e6
"""Per message, metered in 32 KB increments."""
APIGW_CONNECTION_MINUTE = 0.25 / 1e6
EVENTBRIDGE_CUSTOM_EVENT = 1.00 / 1e6
"""Per event published, metered in 64 KB chunks."""
SQS_REQUEST = 0.40 / 1e6
"""Standard queues, per request (64 KB chunks)."""
SCHEDULER_INVOCATION = 1.00 / 1e6
STEP_FUNCTIONS_TRANSITION = 0.025 / 1e3
"""Standard workflows."""

SECONDS_PER_ACTION = 4.0
QUEUE_WAIT_SECONDS = 10.0
PLAYERS = 4
SQS_REQUESTS_PER_MESSAGE = 3
TURN_SECONDS: int = Settings.model_fields["turn_seconds"].default
"""The deployed turn time (TABLE-2): how often a person-paced match's pending timer hands on."""
STALE_TIMER_MS = 12
"""A timer that finds its turn over or hands on: one GetItem (and at most one
conditional update and one SendMessage) in region, billed to the millisecond."""
GB = 1024**3
MILLION = 1_000_000


@dataclass(frozen=True)
class MatchCost:
    by_service: dict[str, float]
    lambda_typical: float
    """The Lambda line if each AWS call took its ``TYPICAL_LATENCY_MS``."""
    connection_minutes: float
    lambda_seconds: float
    lambda_seconds_typical: float
    gb_seconds: float
    gb_seconds_typical: float
    stored_gb: float
    timers: float
    """Turn timers a person-paced match arms: the run's, and one handed on per turn's time."""

    @property
    def total(self) -> float:
        return sum(self.by_service.values())


def _billed_seconds(seconds: float, invocations: float) -> float:
    """Lambda bills each invocation to the next millisecond."""
    if invocations <= 0:
        return 0.0
    per = math.ceil(seconds / invocations * 1000) / 1000
    return per * invocations


def match_cost(match: Work, actions: float, stored_bytes: float) -> MatchCost:
    functions = lambda_functions(match)
    invocations: float = sum(match[f"invocations:{f}"] for f in functions)
    seconds = typical = gb_seconds = gb_seconds_typical = 0.0
    for f in functions:
        own = match[f"own:{f}"] * cpu_slowdown(f)
        waits = sum(
            count * TYPICAL_LATENCY_MS.get(key.split(":", 2)[2], 10.0) / 1000
            for key, count in match.items()
            if key.startswith(f"call:{f}:")
        )
        billed = _billed_seconds(
            match[f"cpu:{f}"] - match[f"own:{f}"] + own, match[f"invocations:{f}"]
        )
        billed_typical = _billed_seconds(own + waits, match[f"invocations:{f}"])
        seconds += billed
        typical += billed_typical
        gb_seconds += billed * MEMORY_MB[f] / 1024
        gb_seconds_typical += billed_typical * MEMORY_MB[f] / 1024
    minutes = PLAYERS * (actions * SECONDS_PER_ACTION + QUEUE_WAIT_SECONDS) / 60
    handed_on = actions * SECONDS_PER_ACTION / TURN_SECONDS
    timers = match["timers_armed"] + handed_on
    unseen = max(0.0, timers - match["timers_delivered"])
    invocations += unseen
    stale_gb_seconds = unseen * STALE_TIMER_MS / 1000 * MEMORY_MB["turn.timers"] / 1024
    gb_seconds += stale_gb_seconds
    gb_seconds_typical += stale_gb_seconds
    by_service = {
        "Lambda": invocations * LAMBDA_REQUEST + gb_seconds * LAMBDA_ARM_GB_SECOND,
        "DynamoDB": match["wru"] * DYNAMODB_WRU
        + match["rru"] * DYNAMODB_RRU
        + stored_bytes / GB * DYNAMODB_STORAGE_GB_MONTH,
        "API Gateway WebSocket": (match["inbound_messages"] + match["push_messages"])
        * APIGW_WEBSOCKET_MESSAGE
        + minutes * APIGW_CONNECTION_MINUTE,
        "EventBridge": match["events"] * EVENTBRIDGE_CUSTOM_EVENT,
        "SQS": (match["sqs_messages"] + handed_on) * SQS_REQUESTS_PER_MESSAGE * SQS_REQUEST,
        "EventBridge Scheduler": match["scheduler_invocations"] * SCHEDULER_INVOCATION,
        "Step Functions": match["sfn_transitions"] * STEP_FUNCTIONS_TRANSITION,
    }
    return MatchCost(
        by_service=by_service,
        lambda_typical=invocations * LAMBDA_REQUEST + gb_seconds_typical * LAMBDA_ARM_GB_SECOND,
        connection_minutes=minutes,
        lambda_seconds=seconds,
        lambda_seconds_typical=typical,
        gb_seconds=gb_seconds,
        gb_seconds_typical=gb_seconds_typical,
        stored_gb=stored_bytes / GB,
        timers=timers,
    )


SECTION = "cost of one three-round match (" + PRICES_AS_OF + ")"


def figures(usage: Usage, stored_bytes: float) -> list[Figure]:
    actions = usage.actions_per_round * usage.rounds
    cost = match_cost(usage.per_match, actions, stored_bytes)
    total = cost.total
    typical_total = total - cost.by_service["Lambda"] + cost.lambda_typical
    out = []
    for service, dollars in sorted(cost.by_service.items(), key=lambda kv: -kv[1]):
        out.append(
            Figure(
                SECTION,
                f"{service}, $ per match",
                dollars,
                "{:.7f}",
                f"${dollars * MILLION:,.0f} per million matches ({dollars / total:.0%})",
            )
        )
    out += [
        Figure(
            SECTION,
            "total, $ per match",
            total,
            "{:.7f}",
            f"${total * MILLION:,.0f} per million matches",
        ),
        Figure(
            SECTION,
            "  Lambda with typical AWS latencies, $",
            cost.lambda_typical,
            "{:.7f}",
            f"{cost.lambda_seconds_typical:.2f} s ({cost.gb_seconds_typical:.2f} GB-s) billed vs "
            f"{cost.lambda_seconds:.2f} s ({cost.gb_seconds:.2f} GB-s) measured; "
            f"total would be ${typical_total * MILLION:,.0f} per million",
        ),
        Figure(
            SECTION,
            "  assumed: actions per match",
            actions,
            "{:.0f}",
            f"{usage.rounds} rounds x {usage.actions_per_round:.1f} (engine, heuristic bots)",
        ),
        Figure(
            SECTION,
            "  assumed: connection minutes per match",
            cost.connection_minutes,
            "{:.1f}",
            f"{PLAYERS} players x ({SECONDS_PER_ACTION:.0f} s per action + "
            f"{QUEUE_WAIT_SECONDS:.0f} s queued)",
        ),
        Figure(
            SECTION,
            "  assumed: turn timers per match",
            cost.timers,
            "{:.1f}",
            f"{usage.per_match['timers_armed']:.1f} armed in the run + one handed on every "
            f"{TURN_SECONDS} s of a person's match; each one SQS message and one invocation",
        ),
        Figure(
            SECTION,
            "  assumed: Lambda memory, MB (mean per GB-s)",
            1024 * cost.gb_seconds / max(cost.lambda_seconds, 1e-9),
            "{:.0f}",
            "arm64, each function's memory_mb from the manifest; own CPU time stretched by "
            "its vCPU share",
        ),
        Figure(
            SECTION,
            "  stored per match, KB (per month kept)",
            stored_bytes / 1024,
            "{:.1f}",
            "games items (+100 B each), ledger entries; no TTL",
        ),
        Figure(
            SECTION,
            "  Step Functions transitions per ticket",
            usage.per_match["sfn_transitions"] / max(usage.per_match["tickets"], 1),
            "{:.2f}",
            "states entered, the definition walked as the match answered each ticket",
        ),
    ]
    return out


def main(argv: Sequence[str]) -> int:
    from benchmarks import engine, handlers
    from benchmarks.report import table
    from benchmarks.usage import stored_per_match
    from benchmarks.usage import usage as usage_of

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=1)
    args = parser.parse_args(argv)
    runs = handlers.play_matches(args.matches)
    per_round = engine.bot_round_length(50, 5)
    measured = usage_of(runs, per_round)
    print(
        table(
            figures(measured, stored_per_match(runs)),
            f"cost model: {args.matches} match(es) measured",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
