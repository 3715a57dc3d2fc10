"""Property 8: the round score, its breakdown and how the round ended (SCORE-1/2, THREE-1/2)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import event, given, settings

from shared_engine import Discard, Draw, RoundState, player_view, score_round

from ._model import (
    BONUS_THREES,
    expected_scores,
    has_canasta,
    model_apply,
    normal,
    stock_exhausted,
    team_of,
)
from ._support import RoundParams, examples, final_state, play_from, round_params

pytestmark = pytest.mark.property

PARTS = ("melded", "canastas", "bonus_threes", "going_out", "hands")


@settings(max_examples=examples(60))
@given(round_params)
def test_round_scores_add_up_as_the_rules_say(params: RoundParams) -> None:
    state = final_state(params)
    assert state.phase == "round_over"
    scores = score_round(state)
    expected = expected_scores(state)
    for team in (0, 1):
        got = scores[team].as_dict()
        assert set(got) == set(PARTS)
        assert scores[team].total == sum(got.values()), "the five parts add up to the total"
        assert got["hands"] <= 0
        assert got["melded"] >= 0 and got["canastas"] >= 0
        assert got["canastas"] % 100 == 0
        count = len(state.bonus_threes[team])
        assert got["bonus_threes"] == (100 if state.opened[team] else -100) * count
        assert abs(got["bonus_threes"]) <= 400, "THREE-1: four threes make 400, never doubled"
        assert got == expected[team], f"team {'AB'[team]}"

    if state.went_out is None:
        event("stock ran out")
        assert stock_exhausted(state.stock), "STOCK-1/2: no going out, so no ordinary tile left"
        assert scores[0].going_out == scores[1].going_out == 0
        assert all(state.hands), "nobody has gone out"
    else:
        event("went out")
        team = team_of(state.went_out)
        assert state.hands[state.went_out - 1] == ()
        assert has_canasta(state.melds[team]), "OUT-1: going out needs a canasta"
        assert scores[team].going_out == 100 and scores[1 - team].going_out == 0
        assert [s for s in (1, 2, 3, 4) if not state.hands[s - 1]] == [state.went_out]

    for seat in (1, 2, 3, 4):
        shown = player_view(state, seat).round_scores
        assert shown is not None
        for team in (0, 1):
            view = shown["AB"[team]]  # type: ignore[index]
            assert view.total == scores[team].total
            assert {p: getattr(view, p) for p in PARTS} == scores[team].as_dict()


@settings(max_examples=examples(40))
@given(round_params)
def test_bonus_threes_last_in_the_stock_are_drawn_and_end_the_round(params: RoundParams) -> None:
    """STOCK-1/2 as ruled: with the stock's bonus threes dealt last, play goes on after the
    last ordinary tile; the draw that reaches the stock's last tile, a bonus three, exposes
    it for the drawer's team and ends the round at once, without a discard."""
    start = params.start()
    threes = [t for t in start.stock if t in BONUS_THREES]
    state = start.copy()
    state.stock = (*(t for t in start.stock if t not in BONUS_THREES), *threes)
    state.hands = start.hands  # the same deal; only the stock order differs
    rng = random.Random(params.choices)
    last = None
    for step in play_from(state, rng, params.eagerness):
        expected = model_apply(step.state, step.seat, step.action)
        assert isinstance(expected, RoundState)
        assert normal(step.after) == normal(expected)
        state, last = step.after, step
    event(f"{len(threes)} bonus three(s) dealt last in the stock")
    if state.went_out is None:
        assert state.stock == (), "the round ended before the stock's last tile was drawn"
        assert last is not None
        assert isinstance(last.action, Draw if threes else Discard)
        exposed = Counter([*state.bonus_threes[0], *state.bonus_threes[1]])
        assert not Counter(threes) - exposed, "every bonus three left in the stock is drawn"
        assert [s.as_dict()["bonus_threes"] for s in score_round(state)] == [
            100 * (1 if state.opened[team] else -1) * len(state.bonus_threes[team])
            for team in (0, 1)
        ]
        if threes:
            drawer = team_of(last.seat)
            assert state.bonus_threes[drawer][-1] == threes[-1], "exposed for the drawer's team"
            assert state.turn == last.seat and len(state.hands[last.seat - 1]) == len(
                last.state.hands[last.seat - 1]
            ), "no replacement, no discard"
