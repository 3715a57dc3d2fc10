"""How far a round's lead still moves, and how much a team scores a round: the search's constants.

``python -m benchmarks.spread [--rounds N] [--matches N] [--seed S]``

The search bots count a lead as a chance of winning the match
(``shared_engine.search._chance``), which needs two figures of this game,
measured here in heuristic self-play and kept in the code as constants:

- ``ROUND_SPREAD``: the standard deviation of a round's final lead (team A's
  total less B's), and of what the rest of a round still changes in the lead
  the search values a position by, at every stage of the stock;
- ``match.ROUND_GAIN``: the pace of the team that reaches 10,000 (10,000 over
  the rounds such a match lasts), beside a team's mean round score.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence

from benchmarks.report import Figure, table
from shared_engine.bots import heuristic_policy
from shared_engine.deal import start_round
from shared_engine.evaluation import predicted_lead
from shared_engine.match import ROUND_GAIN, TARGET_TOTAL, MatchMode
from shared_engine.rules import apply
from shared_engine.scoring import score_team
from shared_engine.search import ROUND_SPREAD
from tools.simulate import Tally, play_match

SECTION = "a round's lead, heuristic self-play"
STAGES = ((30, 99, "30 or more"), (20, 29, "20-29"), (10, 19, "10-19"), (0, 9, "0-9"))
"""Stock sizes, early to late."""


def spread_figures(rounds: int, matches: int, seed: str) -> list[Figure]:
    finals: list[int] = []
    moved: dict[str, list[float]] = {name: [] for _, _, name in STAGES}
    for number in range(rounds):
        state = start_round(f"{seed}:{number}")
        positions: list[tuple[int, float]] = []
        while not state.round_over:
            positions.append((len(state.stock), predicted_lead(state, 0)[0]))
            state, _ = apply(state, state.turn, heuristic_policy(state, state.turn))
        final = score_team(state, 0).total - score_team(state, 1).total
        finals.append(final)
        for stock, lead in positions:
            name = next(n for low, high, n in STAGES if low <= stock <= high)
            moved[name].append(final - lead)
    figures = [
        Figure(
            SECTION,
            "final lead, standard deviation",
            statistics.pstdev(finals),
            "{:,.0f}",
            f"{rounds} rounds; ROUND_SPREAD = {ROUND_SPREAD:,.0f}",
        )
    ]
    figures += [
        Figure(
            SECTION,
            f"rest of the round, stock {name}, standard deviation",
            statistics.pstdev(values),
            "{:,.0f}",
            f"{len(values):,} positions",
        )
        for name, values in moved.items()
        if len(values) > 1
    ]
    tally = Tally()
    for number in range(matches):
        play_match(
            (heuristic_policy, heuristic_policy), MatchMode.TO_10000, f"{seed}:{number}", tally
        )
    per_round = sum(tally.scores) / (2 * tally.rounds)
    figures += [
        Figure(
            SECTION,
            "a team's round score, mean",
            per_round,
            "{:,.0f}",
            f"{tally.rounds} rounds",
        ),
        Figure(
            SECTION, "rounds of a match to 10,000, mean", tally.rounds / tally.matches, "{:.1f}"
        ),
        Figure(
            SECTION,
            "10,000 over those rounds",
            TARGET_TOTAL * tally.matches / tally.rounds,
            "{:,.0f}",
            f"ROUND_GAIN = {ROUND_GAIN:,}",
        ),
    ]
    return figures


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2_000)
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--seed", default="spread")
    args = parser.parse_args(argv)
    figures = spread_figures(args.rounds, args.matches, args.seed)
    print(table(figures, f"spread: {args.rounds} rounds, {args.matches} matches to 10,000"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
