"""The figures the bots and the deploy are held to, printed by one command.

``python -m benchmarks.figures [--quick] [--deals N] [--jobs N] [--peer DIR --peer-python PY]``
(``make figures``; ``make figures QUICK=1 JOBS=2``)

1. Strength: the search bots in duplicate one-round matches, hard and normal
   against the heuristic (easy) and hard against normal, each win rate with
   its 95% confidence interval (``benchmarks.strength``), on seeds of their
   own (``--seed``), never the ones the levels were tuned on.
2. Decision CPU time of the search bots, p50 and p99, from those matches.
3. The engine against jhtschultz/canasta-openspiel, random self-play side by
   side (``benchmarks.peer``). The peer is not part of the project: its
   checkout is ``--peer`` or ``CANASTA_PEER_DIR`` and its interpreter (with
   ``pyspiel``) ``--peer-python`` or ``CANASTA_PEER_PYTHON``
   (docs/performance.md says how to get both). Without them the table says so.
4. Cold start as deployed: each handler's import against ``import boto3``
   alone, side by side (``benchmarks.coldstart``).

``--quick`` plays 20 deals per pairing (the full run: 500, that is 1,000
matches) and takes 3 samples where the full run takes 5 (peer, cold start):
minutes instead of hours, with intervals to match.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks import coldstart, peer, strength
from benchmarks.report import Figure, table
from shared_engine.search import HARD, NORMAL

PAIRINGS = ("hard:easy", "normal:easy", "hard:normal")
FULL_DEALS = 500
QUICK_DEALS = 20


def peer_figures(directory: str | None, python: str | None, repeats: int) -> list[Figure]:
    """The side-by-side engine ratio, or a line saying why there is none."""
    missing = None
    if not directory or not (Path(directory) / "canasta").is_dir():
        missing = f"no checkout of the peer at {directory!r} (--peer or CANASTA_PEER_DIR)"
    elif not python or not Path(python).exists():
        missing = (
            f"no interpreter for the peer at {python!r} (--peer-python or CANASTA_PEER_PYTHON)"
        )
    if missing is not None:
        return [Figure(peer.SECTION, "shared_engine / canasta-openspiel", math.nan, "n/a", missing)]
    return peer.compare(Path(directory).resolve(), python, 20_000, repeats)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer deals and samples")
    parser.add_argument("--deals", type=int, help="deals per pairing (two matches each)")
    parser.add_argument("--seed", default="figures", help="the deals' seed")
    parser.add_argument("--peer", default=os.environ.get("CANASTA_PEER_DIR"))
    parser.add_argument("--peer-python", default=os.environ.get("CANASTA_PEER_PYTHON"))
    parser.add_argument("--jobs", type=int, default=1, help="pairings played at once (cores)")
    args = parser.parse_args(argv)
    deals = args.deals or (QUICK_DEALS if args.quick else FULL_DEALS)
    repeats = 3 if args.quick else 5
    started = strength.cpu_seconds()
    levels = {"normal": NORMAL, "hard": HARD}
    figures = strength.strength_figures(deals, args.seed, PAIRINGS, levels, args.jobs)
    figures += peer_figures(args.peer, args.peer_python, repeats)
    figures += coldstart.deployed_figures(repeats)
    cpu = strength.cpu_seconds() - started
    mode = "quick" if args.quick else "full"
    print(table(figures, f"figures ({mode}): {deals} deals per pairing, {cpu:.0f} s CPU here"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
