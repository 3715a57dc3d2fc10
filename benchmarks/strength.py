"""How strong the search bots are, in duplicate one-round matches, and how long they think.

``python -m benchmarks.strength [--deals N] [--pairings hard:easy,...] [--jobs N]``

Each seeded deal is played twice, the two bots' teams swapping seats, so the
luck of the deal cancels: a deal scores 1 for the first bot if it wins both
matches, 0.5 for one, 0 for none. The win rate is the mean over deals, and its
95% confidence interval the normal one over those per-deal scores (the two
matches of a deal are not independent, so the deal is the unit). Matches are
``MatchMode.ONE_ROUND`` (a tied round is followed by tie-break rounds).

Every decision a search bot is asked for is timed in CPU time of this process
(one thread: one core); p50 and p99 are over all of them, trivial ones (a
single legal action) included, and p99 over the decisions with a choice is
printed beside.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from benchmarks.report import Figure, percentile, table
from shared_engine.actions import Action
from shared_engine.bots import Policy
from shared_engine.legal import legal_actions
from shared_engine.match import MatchMode
from shared_engine.search import HARD, NORMAL, Level, level_policy, search_policy
from shared_engine.state import RoundState
from tools.simulate import Tally, play_match

SECTION = "search bots, duplicate one-round matches"


@dataclass
class Timings:
    all: list[float] = field(default_factory=list)
    chosen: list[float] = field(default_factory=list)


def timed(policy: Policy, timings: Timings) -> Policy:
    def choose(state: RoundState, seat: int) -> Action:
        choice = len(legal_actions(state, seat)) > 1
        start = time.process_time()
        action = policy(state, seat)
        elapsed = (time.process_time() - start) * 1000
        timings.all.append(elapsed)
        if choice:
            timings.chosen.append(elapsed)
        return action

    return choose


def bot(name: str, seed: str, levels: dict[str, Level]) -> Policy:
    """The level's bot, or a search bot with the budget given on the command line."""
    return search_policy(levels[name], seed) if name in levels else level_policy(name, seed)


def duplicate(
    pairing: tuple[str, str],
    deals: int,
    seed: str,
    *,
    timings: dict[str, Timings],
    levels: dict[str, Level],
) -> list[float]:
    """Per deal, the share of its two matches that the first bot's team won."""
    first, second = pairing
    scores = []
    for deal in range(deals):
        match_seed = f"{seed}:{deal}"
        won = 0
        for swap in (False, True):
            bots = (
                timed(bot(first, f"{match_seed}:{first}", levels), timings[first]),
                timed(bot(second, f"{match_seed}:{second}", levels), timings[second]),
            )
            policies = (bots[1], bots[0]) if swap else bots
            winner = play_match(policies, MatchMode.ONE_ROUND, match_seed, Tally())
            won += winner == (1 if swap else 0)
        scores.append(won / 2)
    return scores


def interval(scores: Sequence[float]) -> tuple[float, float, float]:
    """Mean and the 95% normal confidence interval over per-deal scores."""
    n = len(scores)
    mean = sum(scores) / n
    var = sum((s - mean) ** 2 for s in scores) / (n - 1) if n > 1 else 0.0
    half = 1.96 * math.sqrt(var / n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def _pairing(
    pairing: str, deals: int, seed: str, levels: dict[str, Level]
) -> tuple[list[float], dict[str, Timings]]:
    """One pairing's per-deal scores and its bots' decision times (a worker's whole job)."""
    first, second = pairing.split(":")
    timings: dict[str, Timings] = defaultdict(Timings)
    scores = duplicate((first, second), deals, seed, timings=timings, levels=levels)
    return scores, dict(timings)


def cpu_seconds() -> float:
    """CPU time of this process and of the workers it waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def strength_figures(
    deals: int, seed: str, pairings: Sequence[str], levels: dict[str, Level], jobs: int = 1
) -> list[Figure]:
    """Each pairing's win rate with its interval, then the search bots' decision times.

    With ``jobs`` above 1 the pairings are played in as many processes at once:
    each decision is still timed in its own process's CPU time, on one core.
    """
    work = [(pairing, deals, seed, levels) for pairing in pairings]
    if jobs > 1:
        with ProcessPoolExecutor(min(jobs, len(work))) as pool:
            results = list(pool.map(_pairing, *zip(*work, strict=True)))
    else:
        results = [_pairing(*job) for job in work]
    timings: dict[str, Timings] = defaultdict(Timings)
    for _, played in results:
        for name, times in played.items():
            timings[name].all += times.all
            timings[name].chosen += times.chosen
    figures = []
    for pairing, (scores, _) in zip(pairings, results, strict=True):
        first, second = pairing.split(":")
        mean, low, high = interval(scores)
        figures.append(
            Figure(
                SECTION,
                f"{first} vs {second}, win rate",
                mean * 100,
                "{:.1f}%",
                f"95% CI {low * 100:.1f}..{high * 100:.1f}%; {deals} deals, {2 * deals} matches",
            )
        )
    for name in dict.fromkeys(("normal", "hard", *levels)):
        if name not in timings:
            continue
        t = timings[name]
        note = f"{len(t.all)} decisions; p99 with a choice {percentile(t.chosen, 0.99):.1f}"
        figures.append(Figure("decision CPU time, ms", f"{name} p50", percentile(t.all, 0.5)))
        figures.append(
            Figure("decision CPU time, ms", f"{name} p99", percentile(t.all, 0.99), note=note)
        )
    return figures


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=50, help="deals per pairing (2 matches each)")
    parser.add_argument("--seed", default="strength")
    parser.add_argument("--pairings", default="hard:easy,normal:easy,hard:normal")
    parser.add_argument(
        "--level",
        action="append",
        default=[],
        metavar="NAME=C,W,H[,K,D,S][/FITS]",
        help="another level: candidates, worlds, horizon, hand weight, doubt, spread, and"
        " the evaluation's fits averaged (easy, normal, easy+normal; score: the score so"
        " far) (hard=5,48,4/easy+normal)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="pairings played at once")
    args = parser.parse_args(argv)
    levels = {"normal": NORMAL, "hard": HARD}
    for spec in args.level:
        name, numbers = spec.split("=")
        numbers, _, fit = numbers.partition("/")
        c, w, h, *rest = numbers.split(",")
        extra = dict(zip(("hands", "doubt", "spread"), (float(x) for x in rest), strict=False))
        evaluation = None if fit == "score" else tuple((fit or "easy").split("+"))
        levels[name] = Level(name, int(c), int(w), int(h), evaluation=evaluation, **extra)
    started = cpu_seconds()
    figures = strength_figures(args.deals, args.seed, args.pairings.split(","), levels, args.jobs)
    budgets = ", ".join(
        f"{v.name} {v.candidates}x{v.worlds}x{v.horizon}/{'+'.join(v.evaluation or ['score'])}"
        f" hands {v.hands} doubt {v.doubt}"
        f" spread {v.spread}"
        for v in levels.values()
    )
    cpu = cpu_seconds() - started
    title = f"strength ({budgets}): {args.deals} deals per pairing, {cpu:.0f} s CPU"
    print(table(figures, title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
