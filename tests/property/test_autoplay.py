"""Property 9: auto-play (TABLE-2) finishes the seat's turn, never melds, never takes the pile."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings

from shared_engine import (
    Discard,
    Draw,
    RoundState,
    auto_discard,
    auto_play_step,
    auto_play_turn,
    dumps,
)

from ._model import BLOCKING_THREES, auto_discards, is_natural, model_apply, normal
from ._support import RoundParams, check_transition, examples, play, round_params

pytestmark = pytest.mark.property


def check_auto_turn(state: RoundState) -> None:
    seat = state.turn
    stored = dumps(state)
    after = auto_play_turn(state)
    assert dumps(state) == stored, "auto-play changed its input"
    assert after.turn != seat or after.phase == "round_over", "the turn did not end"
    assert after.melds == state.melds and after.opened == state.opened, "auto-play melded"

    expected = state
    if state.phase == "draw":
        assert auto_play_step(state, seat) == Draw()
        drawn = model_apply(state, seat, Draw())
        assert isinstance(drawn, RoundState)
        expected = drawn
        if expected.phase == "round_over":  # STOCK-2: the last stock tile was a bonus three
            event("auto-play: the round ended on the draw")
            assert normal(after) == normal(expected)
            return
    tile = auto_discard(expected, seat)
    assert tile in auto_discards(expected, seat), "TABLE-2: not the ruled discard"
    assert auto_play_step(expected, seat) == Discard(tile)
    hand = expected.hands[seat - 1]
    if any(t in BLOCKING_THREES for t in hand):
        assert tile in BLOCKING_THREES
    elif any(is_natural(t) for t in hand):
        assert is_natural(tile)
    final = model_apply(expected, seat, Discard(tile))
    assert isinstance(final, RoundState), f"auto-play's discard is refused: {final}"
    assert normal(after) == normal(final)
    assert after.discard == (*state.discard, tile), "auto-play took the pile"
    assert after.ply == state.ply + (2 if state.phase == "draw" else 1)
    check_transition(expected, seat, after)
    event(f"auto-play from {state.phase}" + (" (went out)" if after.went_out else ""))


@settings(max_examples=examples(40))
@given(round_params)
def test_auto_play_finishes_the_turn_from_any_reached_position(params: RoundParams) -> None:
    """From every position of a random round (draw, play, first_discard), ``auto_play_turn``
    draws if due and discards the ruled tile: no meld, no pickup, the turn (or round) ends."""
    for step in play(params):
        check_auto_turn(step.state)
