"""``python -m benchmarks``: every figure in one table (``make bench``).

Sections, each figure the median of repeated runs:

1. the engine: random self-play throughput and per-call latencies on one
   core, state size (``benchmarks.engine``);
2. Lambda cold start: each handler's import in fresh interpreters, and the
   turn handler's first invocation (``benchmarks.coldstart``);
3. warm handlers: three-round matches played through the real handler
   functions on in-process moto, metered call by call
   (``benchmarks.handlers``, ``benchmarks.meter``), and their usage per
   action, round and match (``benchmarks.usage``);
4. the cost of a match at AWS list prices (``benchmarks.cost``).

``--quick`` runs fewer repeats (a smoke run: figures are noisier).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence

from benchmarks import coldstart, cost, engine, handlers, usage
from benchmarks.report import Figure, table

SECTIONS = ("engine", "coldstart", "handlers", "cost")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated, of {', '.join(SECTIONS)}"
    )
    parser.add_argument("--matches", type=int, help="three-round matches to measure (default 3)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    repeats = 3 if args.quick else 5
    matches = args.matches or (1 if args.quick else 3)
    started = time.perf_counter()
    figures: list[Figure] = []
    # The heuristic bots' round length: an engine figure, and what usage is extrapolated with.
    per_round = engine.bot_round_length(50, repeats)
    if "engine" in only:
        figures += engine.figures(100 if args.quick else 300, repeats, per_round)
    if "coldstart" in only:
        figures += coldstart.figures(repeats)
    if {"handlers", "cost"} & only:
        runs = handlers.play_matches(matches)
        measured = usage.usage(runs, per_round)
        if "handlers" in only:
            figures += usage.figures(runs, measured)
        if "cost" in only:
            figures += cost.figures(measured, usage.stored_per_match(runs))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    title = (
        f"canasta benchmarks: medians of {repeats} runs ({matches} match(es)); "
        f"Python {platform.python_version()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load:.1f}; {time.perf_counter() - started:.0f} s"
    )
    print(table(figures, title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
