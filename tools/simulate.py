"""``python -m tools.simulate --matches N --seed S``: bots against bots, in figures.

Plays whole matches (match rules included: tie-break rounds) between two
pairings, heuristic against heuristic and heuristic against random, and
prints win rates, average round scores, canastas per round, how often a
round ends by going out and how often by stock exhaustion. Each match swaps
which team the heuristic bot plays, so seat order cannot favour it.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared_engine.bots import Policy, heuristic_policy, random_policy
from shared_engine.deal import start_round
from shared_engine.match import MatchMode, dealer_of_round, decide_after_round
from shared_engine.rules import CANASTA_SIZE, apply
from shared_engine.scoring import score_round


@dataclass
class Tally:
    matches: int = 0
    wins: list[int] = field(default_factory=lambda: [0, 0])
    rounds: int = 0
    scores: list[int] = field(default_factory=lambda: [0, 0])
    canastas: list[int] = field(default_factory=lambda: [0, 0])
    went_out: int = 0
    exhausted: int = 0


def play_match(policies: tuple[Policy, Policy], mode: MatchMode, seed: str, tally: Tally) -> int:
    """One match; ``policies[i]`` plays team i. Returns the winning team."""
    totals = (0, 0)
    number = 0
    tie_break = False
    while True:
        number += 1
        state = start_round(f"{seed}:{number}", dealer=dealer_of_round(number), match_scores=totals)
        while state.phase != "round_over":
            seat = state.turn
            state, _ = apply(state, seat, policies[(seat - 1) % 2](state, seat))
        scores = score_round(state)
        totals = (totals[0] + scores[0].total, totals[1] + scores[1].total)
        tally.rounds += 1
        tally.went_out += state.went_out is not None
        tally.exhausted += state.went_out is None
        for team in (0, 1):
            tally.scores[team] += scores[team].total
            tally.canastas[team] += sum(1 for m in state.melds[team] if len(m) >= CANASTA_SIZE)
        decision = decide_after_round(mode, totals, number, tie_break=tie_break)
        tie_break = decision.tie_break
        if decision.ended:
            assert decision.winner is not None
            tally.matches += 1
            tally.wins[decision.winner] += 1
            return decision.winner


def pairing(
    name: str, first: Policy, second: Policy, *, matches: int, seed: int, mode: MatchMode
) -> Tally:
    """``first`` against ``second``; the tally's team 0 is always ``first``."""
    tally = Tally()
    for i in range(matches):
        swap = i % 2 == 1
        policies = (second, first) if swap else (first, second)
        own = Tally()
        winner = play_match(policies, mode, f"{name}:{seed}:{i}", own)
        first_team = 1 if swap else 0
        tally.matches += 1
        tally.wins[0 if winner == first_team else 1] += 1
        tally.rounds += own.rounds
        tally.went_out += own.went_out
        tally.exhausted += own.exhausted
        for team, side in ((first_team, 0), (1 - first_team, 1)):
            tally.scores[side] += own.scores[team]
            tally.canastas[side] += own.canastas[team]
    return tally


def report(name: str, labels: tuple[str, str], tally: Tally) -> list[str]:
    rounds = max(tally.rounds, 1)

    def pair(title: str, values: tuple[float, float], fmt: str) -> str:
        return f"  {title:<18}" + "   ".join(
            f"{label} {fmt.format(value)}" for label, value in zip(labels, values, strict=True)
        )

    went_out, exhausted = tally.went_out / rounds, tally.exhausted / rounds
    return [
        f"{name}: {tally.matches} matches, {tally.rounds} rounds",
        pair("win rate", (tally.wins[0] / tally.matches, tally.wins[1] / tally.matches), "{:.1%}"),
        pair("avg round score", (tally.scores[0] / rounds, tally.scores[1] / rounds), "{:+.0f}"),
        pair(
            "canastas / round", (tally.canastas[0] / rounds, tally.canastas[1] / rounds), "{:.2f}"
        ),
        f"  {'rounds ending':<18}going out {went_out:.1%}   stock exhausted {exhausted:.1%}",
    ]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.simulate", description=__doc__)
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--mode", choices=[m.value for m in MatchMode], default=MatchMode.ONE_ROUND.value
    )
    args = parser.parse_args(argv)
    mode = MatchMode(args.mode)
    rng_policy = random_policy(random.Random(args.seed))
    lines = report(
        "heuristic vs random",
        ("heuristic", "random"),
        pairing(
            "hr", heuristic_policy, rng_policy, matches=args.matches, seed=args.seed, mode=mode
        ),
    )
    lines += report(
        "heuristic vs heuristic",
        ("first", "second"),
        pairing(
            "hh",
            heuristic_policy,
            heuristic_policy,
            matches=args.matches,
            seed=args.seed,
            mode=mode,
        ),
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
