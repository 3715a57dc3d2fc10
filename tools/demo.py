"""``python -m tools.demo``: a seeded round between four bots, move by move."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

from shared_engine.actions import Action, Discard, Draw, JokerButton, TakePile
from shared_engine.bots import greedy_policy
from shared_engine.deal import commitment, shuffled, start_round
from shared_engine.rules import apply
from shared_engine.scoring import score_round
from shared_engine.state import TEAMS, VARIANTS, RoundState, Variant, team_of
from shared_engine.tiles import names


def describe(action: Action) -> str:
    if isinstance(action, Draw):
        return "draws from the stock"
    if isinstance(action, JokerButton):
        return "uses the joker button"
    if isinstance(action, Discard):
        return f"discards {names([action.tile])[0]}"
    melds = ", ".join(f"{spec.rank}s: {' '.join(names(spec.tiles))}" for spec in action.melds)
    verb = "takes the pile with" if isinstance(action, TakePile) else "melds"
    return f"{verb} [{melds}]"


def play(seed: str, *, variant: Variant, out: list[str]) -> RoundState:
    state = start_round(seed, variant=variant)
    out.append(f"seed {seed}  commitment {state.commitment}")
    for i, team in enumerate(TEAMS):
        if state.bonus_threes[i]:
            out.append(
                f"team {team} exposes {' '.join(names(state.bonus_threes[i]))} from the deal"
            )
    while state.phase != "round_over":
        seat = state.turn
        action = greedy_policy(state, seat)
        state, _ = apply(state, seat, action)
        hand = " ".join(names(state.hands[seat - 1]))
        out.append(
            f"{state.ply:4d}  seat {seat} ({TEAMS[team_of(seat)]}) {describe(action):<48} | {hand}"
        )
    return state


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", help="replay a round; by default a fresh secure seed")
    parser.add_argument("--variant", choices=VARIANTS, default="twos-meld")
    args = parser.parse_args(argv)
    seed = args.seed or secrets.token_hex(16)
    lines: list[str] = []
    state = play(seed, variant=args.variant, out=lines)
    print("\n".join(lines))
    how = f"seat {state.went_out} went out" if state.went_out else "the stock ran out"
    print(f"\nround over after {state.ply} actions: {how}")
    for team, score in zip(TEAMS, score_round(state), strict=True):
        parts = "  ".join(f"{k} {v:+d}" for k, v in score.as_dict().items())
        print(f"team {team}: {score.total:+6d}   ({parts})")
    verified = commitment(seed, shuffled(seed)) == state.commitment
    print(f"shuffle commitment verified from the revealed seed: {verified}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
