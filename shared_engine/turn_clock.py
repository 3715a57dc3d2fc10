"""TABLE-2's turn timer as a pure rule: when a turn begins, when it is due, when to set it.

A table is written once per move, each write a new version. A turn begins
with the write that hands the play to its seat; its timer is keyed by that
write's version, so that a timer firing for a turn that is over is told apart
from the current one. One timer per turn, not per move: the draw, melds and
discard of one turn keep the timer their turn began with, and a move that does
not change hands sets none (setting it again could only answer "already
exists", at the cost of a call). And one timer per table, not per turn: a turn
that a timer already on its way will reach in time arms none (``timer_covers``).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared_engine.state import RoundState


@dataclass(frozen=True, slots=True)
class TurnClock:
    """The turn being played: the table version that began it, and when it must end."""

    started: int
    deadline: float | None
    """None once the round is over: no turn runs, no timer is due."""


def first_turn(version: int, now: float, turn_seconds: int) -> TurnClock:
    """The round's first turn begins with the write that deals it."""
    return TurnClock(started=version, deadline=now + turn_seconds)


def after_moves(
    clock: TurnClock,
    before: RoundState,
    *after: RoundState,
    version: int,
    now: float,
    turn_seconds: int,
) -> TurnClock:
    """The clock once a write at ``version`` took the round from ``before`` through the
    states ``after`` its moves (one write may play several turns of absent seats).

    The turn passing to another seat at any move starts a new turn and its
    deadline (even if the write ends at the seat it began with, four turns on);
    the round ending stops the clock; anything else keeps the turn's clock.
    """
    if after[-1].round_over:
        return TurnClock(started=version, deadline=None)
    if any(state.turn != before.turn for state in after):
        return TurnClock(started=version, deadline=now + turn_seconds)
    return clock


def timer_due(clock: TurnClock, version: int) -> bool:
    """Whether the write at ``version`` must set a timer: only the write that began the turn."""
    return clock.deadline is not None and clock.started == version


def timer_covers(pending: float | None, deadline: float, now: float) -> bool:
    """Whether the table's pending timer, due at ``pending``, serves a turn due at ``deadline``.

    One timer per table: a timer still to come (not yet due) and due no later than the
    deadline fires in time to hand on to whatever turn is current then, so the turn
    needs none of its own. A timer already due may have fired; one due after the
    deadline would play the turn late.
    """
    return pending is not None and now < pending <= deadline
