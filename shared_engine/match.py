"""Match-level rules as pure functions: thresholds, dealers, match end, settlement.

A match is a sequence of rounds; the services keep its totals. These functions
answer the questions the score and ledger services ask between rounds, and
each answer has its home here only: who won, whether the table was abandoned,
and what the match's end moves on each account (the ledger turns those
amounts into postings, it does not compute them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal


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
TEAM_NAMES: Final[tuple[Literal["A"], Literal["B"]]] = ("A", "B")
"""Team 0 and team 1 as players and the wire name them."""
TARGET_TOTAL: Final = 10_000
POINTS_PER_ROUND: Final = 1_000

ROUND_GAIN: Final = 700
"""About what the team that reaches 10,000 scores a round (heuristic self-play,
``benchmarks.spread``): how far a total is from 10,000, in rounds."""

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


def rounds_after(mode: MatchMode, round_number: int, totals: tuple[int, int]) -> int:
    """How many rounds the match is expected to play after round ``round_number``.

    What a bot needs to weigh a lead: the planned rounds still to come (none in
    a tie-break round), or in the 10,000 mode the rounds the leading total
    (``totals``, before this round) still needs at the pace of such a match
    (none once it is reached; a rare tie-break below 10,000, MATCH-2, is not
    told apart and counts the rounds to 10,000).
    """
    _check_mode(mode)
    if mode is MatchMode.TO_10000:
        return max(0, math.ceil((TARGET_TOTAL - max(totals)) / ROUND_GAIN) - 1)
    return max(0, PLANNED_ROUNDS[mode] - round_number)


@dataclass(frozen=True, slots=True)
class SeatPresence:
    """What the abandonment rule needs to know of a seat after a round."""

    bot: bool
    """Played by a bot from the table's start (MATCH-3), not a player auto-played (TABLE-2)."""
    connected: bool


PRESENT: Final = (SeatPresence(bot=False, connected=True),) * 4
"""Four people, all still connected: no table is abandoned."""


def winner_of(totals: tuple[int, int]) -> int | None:
    """MATCH-1: the higher total wins; equal totals name no winner (MATCH-2: play on)."""
    if totals[0] == totals[1]:
        return None
    return 0 if totals[0] > totals[1] else 1


def abandoned(seats: Sequence[SeatPresence]) -> bool:
    """A table of four people who have all left is abandoned rather than auto-played on.

    Every seat must be gone, not just one: a single disconnected player is
    auto-played (TABLE-2) and the match goes on. Tables with bots go on too:
    their host chose to play alone, and leaving must not be a way out of a
    losing match.
    """
    if len(seats) != 4:
        raise ValueError(f"four seats are required, not {len(seats)}")
    return not any(seat.bot for seat in seats) and not any(seat.connected for seat in seats)


@dataclass(frozen=True, slots=True)
class MatchDecision:
    """What follows a scored round.

    ``winner`` is the winning team (0 for A, 1 for B) when the match has ended;
    ``tie_break`` says the next round is played only because the totals are
    tied when a winner is required (MATCH-2); ``abandoned`` says the match
    stops without a winner because every player left (its stakes are refunded).
    """

    ended: bool
    winner: int | None
    tie_break: bool
    abandoned: bool = False

    @property
    def next(self) -> Literal["round", "tie_break", "end"]:
        """What the players are told comes next."""
        if self.ended or self.abandoned:
            return "end"
        return "tie_break" if self.tie_break else "round"


def _check_mode(mode: object) -> None:
    """A plain string equals a ``MatchMode`` member but is not one: refuse it, never guess."""
    if not isinstance(mode, MatchMode):
        raise TypeError(f"a MatchMode is required, not {type(mode).__name__} {mode!r}")


def decide_after_round(
    mode: MatchMode,
    totals: tuple[int, int],
    rounds_played: int,
    *,
    tie_break: bool = False,
    seats: Sequence[SeatPresence] = PRESENT,
) -> MatchDecision:
    """MATCH-1, MATCH-2, MATCH-4: next round, tie-break round, or the end.

    ``tie_break`` says the round just scored was itself a tie-break round: in
    the 10,000 mode it ends the match once the totals differ, even if both
    have fallen below 10,000 (MATCH-2). A match that is not over stops
    instead when its table is ``abandoned``; one that is over ends with its
    winner whoever is still connected.
    """
    _check_mode(mode)
    if mode is MatchMode.TO_10000:
        due = tie_break or max(totals) >= TARGET_TOTAL
    else:
        due = rounds_played >= PLANNED_ROUNDS[mode]
    winner = winner_of(totals) if due else None
    if winner is not None:
        return MatchDecision(ended=True, winner=winner, tie_break=False)
    return MatchDecision(ended=False, winner=None, tie_break=due, abandoned=abandoned(seats))


def winner_after(mode: MatchMode, totals_by_round: Sequence[tuple[int, int]]) -> int | None:
    """MATCH-1, MATCH-2, MATCH-4: the winner of a match whose totals after each round
    were ``totals_by_round``, if the rules end it with the last of those rounds and not
    before; None if they end it earlier, later or not at all.

    A settlement pays for the rounds the rules let a match run, never for a count
    someone states: each round's decision is replayed as it was made after that round
    (a tie when a winner is due adds a round, and in the 10,000 mode that round decides).
    """
    tie_break = False
    for number, totals in enumerate(totals_by_round, start=1):
        decision = decide_after_round(mode, totals, number, tie_break=tie_break)
        if decision.ended:
            return decision.winner if number == len(totals_by_round) else None
        tie_break = decision.tie_break
    return None


@dataclass(frozen=True, slots=True)
class SeatSettlement:
    """What a match moves on one seat's account, from the table's forming to its end."""

    held: int
    """MATCH-4: the stake moved to the table's escrow when it formed (0 outside arena)."""
    paid: int
    """Credited to the account when the match ends (negative: debited); arena pays from escrow."""

    @property
    def net(self) -> int:
        """The change of the seat's balance over the whole match."""
        return self.paid - self.held


def held_stake(mode: MatchMode, stake: int) -> int:
    """MATCH-4: what each seat of an arena table holds in escrow, and gets back if aborted."""
    _check_mode(mode)
    return stake if mode is MatchMode.ARENA else 0


def settle_match(
    mode: MatchMode, winner: int, rounds_played: int, stake: int = 0
) -> dict[int, SeatSettlement]:
    """MATCH-3 and MATCH-4: each seat's settlement; the nets sum to zero.

    Arena pays each winner two stakes from the escrow (net: the stake),
    whatever the number of rounds, and losers nothing (net: minus the stake).
    The other modes pay 1,000 per round actually played, taken from the losers.
    """
    held = held_stake(mode, stake)
    settlement: dict[int, SeatSettlement] = {}
    for seat in (1, 2, 3, 4):
        won = (seat - 1) % 2 == winner
        if mode is MatchMode.ARENA:
            paid = 2 * held if won else 0
        else:
            paid = POINTS_PER_ROUND * rounds_played * (1 if won else -1)
        settlement[seat] = SeatSettlement(held=held, paid=paid)
    return settlement


def account_rewards(
    mode: MatchMode, winner: int, rounds_played: int, stake: int = 0
) -> dict[int, int]:
    """MATCH-3 and MATCH-4: each seat's change of account points over the match."""
    return {
        seat: amounts.net
        for seat, amounts in settle_match(mode, winner, rounds_played, stake).items()
    }
