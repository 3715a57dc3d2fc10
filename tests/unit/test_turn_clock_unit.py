"""TABLE-2's turn timer: one per turn, set by the write that began the turn."""

from __future__ import annotations

import pytest

from shared_engine import Discard, Draw, RoundState, apply, start_round
from shared_engine.autoplay import auto_play_step
from shared_engine.turn_clock import TurnClock, after_moves, first_turn, timer_due

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
SECONDS = 60


def _second_turn() -> RoundState:
    """Seat 1 opened the round with its discard (DEAL-2): seat 2 is to play."""
    dealt = start_round("turn-clock", dealer=4)
    opened, _ = apply(dealt, 1, Discard(dealt.hands[0][-1]))
    assert opened.turn == 2
    return opened


def test_the_round_s_first_turn_begins_with_the_deal_and_sets_its_timer_table_2() -> None:
    clock = first_turn(7, NOW, SECONDS)
    assert clock == TurnClock(started=7, deadline=NOW + SECONDS)
    assert timer_due(clock, 7)


def test_a_move_that_keeps_the_turn_keeps_its_clock_and_sets_no_timer_table_2() -> None:
    """The draw of a turn is a write of its own: it must not set the turn's timer again."""
    opened = _second_turn()
    clock = TurnClock(started=2, deadline=NOW + SECONDS)
    drawn, _ = apply(opened, 2, Draw())
    assert drawn.turn == opened.turn == 2
    after = after_moves(clock, opened, drawn, version=3, now=NOW + 5, turn_seconds=SECONDS)
    assert after == clock, "same turn, same timer key and deadline"
    assert not timer_due(after, 3), "a move inside a turn sets no timer"


def test_the_write_that_hands_the_turn_on_sets_the_next_turn_s_timer_table_2() -> None:
    dealt = start_round("turn-clock", dealer=4)
    opened = _second_turn()
    clock = after_moves(
        first_turn(1, NOW, SECONDS), dealt, opened, version=2, now=NOW + 9, turn_seconds=SECONDS
    )
    assert clock == TurnClock(started=2, deadline=NOW + 9 + SECONDS)
    assert timer_due(clock, 2)
    assert not timer_due(clock, 3), "a later write of the same turn sets none"


def test_a_write_of_four_turns_back_to_its_first_seat_begins_a_new_turn_table_2() -> None:
    """Absent seats' turns written together: the last seat is the first one again, but its
    turn is a new one, with a new timer key and deadline."""
    state = _second_turn()
    seat = state.turn
    states = []
    while len({s.turn for s in states}) < 4 or states[-1].turn != seat:
        state, _ = apply(state, state.turn, auto_play_step(state, state.turn))
        states.append(state)
    clock = TurnClock(started=2, deadline=NOW + SECONDS)
    after = after_moves(
        clock, _second_turn(), *states, version=3, now=NOW + 5, turn_seconds=SECONDS
    )
    assert after == TurnClock(started=3, deadline=NOW + 5 + SECONDS)
    assert timer_due(after, 3)


def test_no_timer_once_the_round_is_over_table_2() -> None:
    over = TurnClock(started=9, deadline=None)
    assert not timer_due(over, 9)
