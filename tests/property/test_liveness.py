"""Properties 2 and 3: play never locks, rounds end, and every listed action applies."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings

from shared_engine import Discard, Draw, JokerButton, RoundState, apply, legal_actions
from shared_engine.tiles import TILE_KINDS

from ._model import model_apply, normal
from ._support import MAX_ACTIONS, RoundParams, check_transition, examples, play, round_params

pytestmark = pytest.mark.property


@settings(max_examples=examples(60))
@given(round_params)
def test_only_the_seat_to_play_has_actions_and_the_round_ends(params: RoundParams) -> None:
    """TURN-1: until the round is over the seat to play has an action and nobody else has."""
    state = params.start()
    count = 0
    for step in play(params):
        assert step.state.phase != "round_over"
        assert step.legal, "soft-lock: the seat to play has no legal action"
        assert legal_actions(step.state, step.seat) == step.legal, "legal_actions is not pure"
        for other in (1, 2, 3, 4):
            if other != step.seat:
                assert legal_actions(step.state, other) == []
        state = step.after
        count += 1
    assert state.phase == "round_over"
    assert count < MAX_ACTIONS
    for seat in (1, 2, 3, 4):
        assert legal_actions(state, seat) == []
    event("went out" if state.went_out else "stock ran out")


def _check_every_listed_action(state: RoundState, seat: int, legal: list) -> None:
    for action in legal:
        after, _ = apply(state, seat, action)  # an EngineError here fails the test
        check_transition(state, seat, after)
        expected = model_apply(state, seat, action)
        assert isinstance(expected, RoundState), (
            f"legal_actions lists {action!r}, which the rules refuse ({expected})"
        )
        assert normal(after) == normal(expected), f"{action!r} did not do what the rules say"


def _check_draws_and_discards_are_exhaustive(state: RoundState, seat: int, legal: list) -> None:
    """legal_actions: "Draws and discards are listed exhaustively" (its docstring)."""
    simple = [Draw(), JokerButton(), *(Discard(t) for t in TILE_KINDS)]
    accepted = {a for a in simple if isinstance(model_apply(state, seat, a), RoundState)}
    listed = {a for a in legal if isinstance(a, Draw | JokerButton | Discard)}
    assert listed == accepted, f"listed {listed - accepted}, missing {accepted - listed}"
    assert len(legal) == len(set(legal)), "an action is listed twice"


@settings(max_examples=examples(40))
@given(round_params)
def test_every_listed_action_applies_as_the_rules_say(params: RoundParams) -> None:
    """Every action ``legal_actions`` lists, at every step, is accepted by ``apply``
    and leads to the position the reference model of the rules computes."""
    for step in play(params):
        _check_every_listed_action(step.state, step.seat, step.legal)
        _check_draws_and_discards_are_exhaustive(step.state, step.seat, step.legal)
