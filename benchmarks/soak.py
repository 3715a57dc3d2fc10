"""Soak: many one-round bot matches through one running local stack; does it stay small and fast?

``python -m benchmarks.soak [--matches 50] [--tables 2] [--census] [--tracemalloc]``

Starts the local stack once in this process, from the same pieces as ``python
-m local`` (``benchmarks.load.start_stack``), and plays ``--matches``
one-round matches through it, ``--tables`` at a time, each wave by four
fresh bots per table in a clients process of their own (``benchmarks.load``'s
tap times every ``play`` until each seat's newer view). After every ten
matches it prints the stack process's RSS and that decade's move latency
(p50, p99), and with ``--census`` how many objects each part of the embedded
AWS and the gateway holds: stream records, items, SQS messages, Step
Functions executions and their history events, schedules, stream iterators,
open sockets. ``--tracemalloc`` adds the allocation sites that grew most
since the first decade (slow: for finding a cause, not for the figures).

Goals (issue "Local play a newcomer can trust"): RSS after 50 matches under
400 MB, and the last ten matches' median move latency within 1.2x of the
first ten's. It exits 0 only if every match finished with no errors and both
goals hold. It talks only to 127.0.0.1 and stops by itself (``--timeout``
per wave, ``--max-rss-mb``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from benchmarks.load import (
    Stack,
    play_wave,
    quiet_environment,
    rss_mb,
    start_stack,
)

RSS_GOAL_MB = 400.0
LATENCY_RATIO_GOAL = 1.2
DECADE = 10


def say(text: str) -> None:
    """The report, past the redirection that hides Powertools' metric output."""
    print(text, file=sys.__stdout__)


def census(stack: Stack) -> dict[str, int]:
    """What the embedded AWS and the gateway keep, counted in this process's moto backends."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodbstreams.models import dynamodbstreams_backends
    from moto.scheduler.models import scheduler_backends
    from moto.sqs.models import sqs_backends
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    counts: dict[str, int] = {}

    def backends(store: Any) -> list[Any]:
        return [b for regions in store.values() for b in regions.values()]

    for backend in backends(dynamodb_backends):
        for name, table in backend.tables.items():
            short = name.rsplit("-", 1)[-1]
            items = sum(len(v) if isinstance(v, dict) else 1 for v in table.items.values())
            counts[f"dynamodb {short} items"] = items
            if table.stream_shard is not None:
                counts[f"dynamodb {short} stream records"] = len(table.stream_shard.items)
    counts["stream iterators"] = sum(
        len(b.shard_iterators) for b in backends(dynamodbstreams_backends)
    )
    sqs_kept = sqs_deleted = 0
    for backend in backends(sqs_backends):
        for queue in backend.queues.values():
            sqs_kept += len(queue._messages)
            sqs_deleted += len(queue.deleted_messages)
    counts["sqs messages kept"] = sqs_kept
    counts["sqs deleted ids kept"] = sqs_deleted
    executions = events = 0
    for backend in backends(stepfunctions_parser_backends):
        for machine in backend.state_machines:
            for execution in machine.executions:
                executions += 1
                with contextlib.suppress(Exception):
                    events += len(execution.exec_worker.env.event_manager.get_event_history())
    counts["sfn executions"] = executions
    counts["sfn history events"] = events
    counts["schedules"] = sum(len(b.schedules) for b in backends(scheduler_backends))
    counts["gateway sockets"] = len(stack.gateway._sockets)
    return counts


async def soak(args: argparse.Namespace) -> int:
    stack = await start_stack(args.turn_seconds, args.poll)
    decades: list[tuple[float, float, float]] = []
    """(RSS MB, p50 ms, p99 ms) after each ten matches."""
    latencies: list[float] = []
    played = 0
    failures: list[str] = []
    snapshot: tracemalloc.Snapshot | None = None
    began = time.perf_counter()
    if args.tracemalloc:
        tracemalloc.start(12)
    say(f"soak: {args.matches} one-round matches, {args.tables} at a time")
    say(f"  at start        RSS {rss_mb():6.0f} MB")
    try:
        while played < args.matches:
            wave = played // args.tables
            plan = await stack.plan(f"soak-{wave:03d}", "one_round", args)
            stats, problems, _ = await play_wave(stack, plan, args.max_rss_mb)
            failures += problems + stats.bot_failures
            if len(stats.finished) != args.tables or stats.errors:
                failures.append(f"wave {wave}: {len(stats.finished)} finished, {stats.errors}")
            latencies += stats.latencies
            played += args.tables
            if failures:
                break
            if played % DECADE == 0:
                gc.collect()
                ordered = sorted(latencies)
                p50 = 1000 * statistics.median(ordered)
                p99 = 1000 * ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
                rss = rss_mb()
                decades.append((rss, p50, p99))
                say(
                    f"  {played:3d} matches     RSS {rss:6.0f} MB   move p50 {p50:6.1f} ms   "
                    f"p99 {p99:6.1f} ms   ({len(latencies)} moves, "
                    f"{time.perf_counter() - began:.0f} s)",
                )
                latencies = []
                if args.census:
                    say("    " + ", ".join(f"{k} {v}" for k, v in census(stack).items()))
                if args.tracemalloc:
                    now = tracemalloc.take_snapshot()
                    if snapshot is not None:
                        for stat in now.compare_to(snapshot, "traceback")[:6]:
                            say(f"    +{stat.size_diff / 2**20:.1f} MB {stat.count_diff:+d}")
                            for line in stat.traceback.format()[-8:]:
                                say(f"        {line}")
                    snapshot = now
    finally:
        await stack.close()
    failures += [f"dispatcher: {e}" for e in stack.aws.dispatcher.errors]
    return verdict(decades, failures)


def verdict(decades: list[tuple[float, float, float]], failures: list[str]) -> int:
    for failure in failures[:20]:
        say(f"  problem: {failure}")
    if not decades:
        say("  no ten matches were played")
        return 1
    rss = decades[-1][0]
    ratio = decades[-1][1] / decades[0][1]
    rss_ok = rss < RSS_GOAL_MB
    ratio_ok = ratio <= LATENCY_RATIO_GOAL
    say(
        f"  RSS after {DECADE * len(decades)} matches {rss:.0f} MB "
        f"(goal < {RSS_GOAL_MB:.0f}): {'ok' if rss_ok else 'OVER'}"
    )
    say(
        f"  last ten / first ten median move latency {ratio:.2f} "
        f"(goal <= {LATENCY_RATIO_GOAL}): {'ok' if ratio_ok else 'OVER'}"
    )
    return 0 if rss_ok and ratio_ok and not failures else 1


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--matches", type=int, default=50, help="a multiple of ten")
    parser.add_argument("--tables", type=int, default=2, help="matches at once; divides ten")
    parser.add_argument("--pace", type=float, default=0.0, help="bot thinking time, seconds")
    parser.add_argument("--timeout", type=float, default=300.0, help="per wave of matches")
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("--poll", type=float, default=0.2, help="dispatcher idle wait")
    parser.add_argument("--turn-seconds", type=int, default=600)
    parser.add_argument("--max-rss-mb", type=float, default=3000)
    parser.add_argument("--census", action="store_true", help="count what each backend keeps")
    parser.add_argument("--tracemalloc", action="store_true", help="where memory grows (slow)")
    args = parser.parse_args(argv)
    if args.matches < DECADE or args.matches % DECADE or DECADE % args.tables:
        parser.error("--matches must be a multiple of ten and --tables must divide ten")
    quiet_environment()
    # Powertools prints each full set of 100 metric values even when disabled.
    with contextlib.redirect_stdout(io.StringIO()):
        return asyncio.run(soak(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
