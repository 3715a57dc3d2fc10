"""Match-level rules as pure functions: thresholds, dealers, match end, rewards.

A match is a sequence of rounds; the services keep its totals. These functions
answer the questions the score and ledger services ask between rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class MatchMode(StrEnum):
    """MATCH-1 and MATCH-4: how long a match lasts and how it pays."""

    ONE_ROUND = "one_round"
    THREE_ROUNDS = "three_rounds"
    TO_10000 = "to_10000"
    ARENA = "arena"


PLANNED_ROUNDS: Final = {
    MatchMode.ONE_ROUND: 1,
    MatchMode.THREE_ROUNDS: 3,
    MatchMode.ARENA: 3,
}
TARGET_TOTAL: Final = 10_000
POINTS_PER_ROUND: Final = 1_000

# OPEN-2, as (lowest team total, threshold) from the top row down.
_THRESHOLDS: Final = ((7_000, 150), (3_000, 120), (1_500, 90), (0, 50))
_NEGATIVE_THRESHOLD: Final = 15


def threshold_for(total: int) -> int:
    """OPEN-2: the opening threshold for a team whose match total is ``total``."""
    for lowest, threshold in _THRESHOLDS:
        if total >= lowest:
            return threshold
    return _NEGATIVE_THRESHOLD


def dealer_of_round(round_number: int) -> int:
    """DEAL-2 ruling: seat 4 deals round 1, and the deal moves one seat a round."""
    return (round_number + 2) % 4 + 1


def first_player(dealer: int) -> int:
    """DEAL-2: the seat after the dealer gets 15 tiles and opens the round."""
    return dealer % 4 + 1


@dataclass(frozen=True, slots=True)
class MatchDecision:
    """What follows a scored round.

    ``winner`` is the winning team (0 for A, 1 for B) when the match has ended;
    ``tie_break`` says the next round is played only because the totals are
    tied when a winner is required (MATCH-2).
    """

    ended: bool
    winner: int | None
    tie_break: bool


def _check_mode(mode: object) -> None:
    """A plain string equals a ``MatchMode`` member but is not one: refuse it, never guess."""
    if not isinstance(mode, MatchMode):
        raise TypeError(f"a MatchMode is required, not {type(mode).__name__} {mode!r}")


def decide_after_round(
    mode: MatchMode, totals: tuple[int, int], rounds_played: int, *, tie_break: bool = False
) -> MatchDecision:
    """MATCH-1, MATCH-2, MATCH-4: next round, tie-break round, or the end.

    ``tie_break`` says the round just scored was itself a tie-break round: in
    the 10,000 mode it ends the match once the totals differ, even if both
    have fallen below 10,000 (MATCH-2).
    """
    _check_mode(mode)
    if mode is MatchMode.TO_10000:
        due = tie_break or max(totals) >= TARGET_TOTAL
    else:
        due = rounds_played >= PLANNED_ROUNDS[mode]
    if not due:
        return MatchDecision(ended=False, winner=None, tie_break=False)
    if totals[0] == totals[1]:
        return MatchDecision(ended=False, winner=None, tie_break=True)
    return MatchDecision(ended=True, winner=0 if totals[0] > totals[1] else 1, tie_break=False)


def account_rewards(
    mode: MatchMode, winner: int, rounds_played: int, stake: int = 0
) -> dict[int, int]:
    """MATCH-3 and MATCH-4: each seat's change of account points; sums to zero.

    Arena pays the stake only, whatever the number of rounds; the other modes
    pay 1,000 per round actually played.
    """
    _check_mode(mode)
    amount = stake if mode is MatchMode.ARENA else POINTS_PER_ROUND * rounds_played
    return {seat: amount if (seat - 1) % 2 == winner else -amount for seat in (1, 2, 3, 4)}
