"""SCORE-1: a team's round score and its breakdown."""

from __future__ import annotations

from dataclasses import dataclass

from shared_engine.rules import CANASTA_SIZE
from shared_engine.state import RoundState
from shared_engine.tiles import JOKER, VALUES, is_three, rank_of

THREE_IN_HAND = 100
BONUS_THREE = 100
GOING_OUT = 100


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """The five parts of SCORE-1; ``hands`` is zero or negative."""

    melded: int
    canastas: int
    bonus_threes: int
    going_out: int
    hands: int

    @property
    def total(self) -> int:
        return self.melded + self.canastas + self.bonus_threes + self.going_out + self.hands

    def as_dict(self) -> dict[str, int]:
        return {
            "melded": self.melded,
            "canastas": self.canastas,
            "bonus_threes": self.bonus_threes,
            "going_out": self.going_out,
            "hands": self.hands,
        }


def canasta_bonus(rank: int, meld: tuple[int, ...]) -> int:
    """CAN-1..3: one bonus per meld of seven or more, judged on its final content."""
    if len(meld) < CANASTA_SIZE:
        return 0
    if rank == 2:
        return 700 if JOKER in meld else 1000
    clean = all(rank_of(t) == rank for t in meld)
    return 500 if clean else 300


def canasta_kinds(melds: tuple[tuple[int, ...], ...]) -> tuple[int, int, int]:
    """A team's canastas by kind (CAN-1..3): clean, dirty and of twos, from its melds
    (indexed by rank) as the round ended."""
    bonuses = [canasta_bonus(rank, meld) for rank, meld in enumerate(melds)]
    return (bonuses.count(500), bonuses.count(300), bonuses.count(1000) + bonuses.count(700))


def _hand_value(hand: tuple[int, ...]) -> int:
    return sum(THREE_IN_HAND if is_three(t) else VALUES[t] for t in hand)


def score_team(state: RoundState, team: int) -> ScoreBreakdown:
    melds = state.melds[team]
    partners = (team + 1, team + 3)
    per_three = BONUS_THREE if state.opened[team] else -BONUS_THREE
    went_out = state.went_out is not None and (state.went_out - 1) % 2 == team
    return ScoreBreakdown(
        melded=sum(VALUES[t] for meld in melds for t in meld),
        canastas=sum(canasta_bonus(rank, meld) for rank, meld in enumerate(melds)),
        bonus_threes=per_three * len(state.bonus_threes[team]),
        going_out=GOING_OUT if went_out else 0,
        hands=-sum(_hand_value(state.hands[seat - 1]) for seat in partners),
    )


def score_round(state: RoundState) -> tuple[ScoreBreakdown, ScoreBreakdown]:
    """Both teams' scores (A, B). Meaningful at any point, final once the round is over."""
    return score_team(state, 0), score_team(state, 1)
