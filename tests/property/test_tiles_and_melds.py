"""Properties 1 and 7: every tile accounted for, and melds that stay legal and only grow."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_engine import VARIANTS, Variant, commitment, first_player, shuffled, start_round
from shared_engine.tiles import FULL_SET

from ._model import BONUS_THREES, expected_deal, threshold
from ._support import (
    RoundParams,
    check_meld_growth,
    check_melds,
    check_position,
    check_tiles,
    check_transition,
    examples,
    play,
    round_params,
)

pytestmark = pytest.mark.property


@settings(max_examples=examples(200))
@given(
    seed=st.text(max_size=24),
    variant=st.sampled_from(VARIANTS),
    dealer=st.integers(1, 4),
    totals=st.tuples(st.integers(-5000, 12000), st.integers(-5000, 12000)),
)
def test_the_deal_follows_deal_1_to_4(
    seed: str, variant: Variant, dealer: int, totals: tuple[int, int]
) -> None:
    """DEAL-1..4 and OPEN-2 for any seed text, against the ruled deal order."""
    order = shuffled(seed)
    assert sorted(order) == list(FULL_SET)
    assert shuffled(seed) == order
    state = start_round(seed, variant=variant, dealer=dealer, match_scores=totals)
    assert state == start_round(seed, variant=variant, dealer=dealer, match_scores=totals)
    assert state.commitment == commitment(seed, order)
    assert state.turn == first_player(dealer) == dealer % 4 + 1
    assert state.phase == "first_discard"
    assert state.discard == () and state.ply == 0 and state.went_out is None
    assert state.opened == (False, False)
    assert state.thresholds == (threshold(totals[0]), threshold(totals[1]))
    hands, stock, bonus = expected_deal(order, dealer)
    for seat in (1, 2, 3, 4):
        assert Counter(state.hands[seat - 1]) == Counter(hands[seat])
        assert len(state.hands[seat - 1]) == (15 if seat == state.turn else 14)
    assert list(state.stock) == stock
    for team in (0, 1):
        assert Counter(state.bonus_threes[team]) == Counter(bonus[team])
    assert not any(BONUS_THREES & set(hand) for hand in state.hands)
    check_position(state)


@settings(max_examples=examples(60))
@given(round_params)
def test_every_tile_is_accounted_for_after_every_action(params: RoundParams) -> None:
    """DEAL-1: after every action the 106 tiles are all there, each kind twice."""
    check_tiles(params.start())
    for step in play(params):
        check_tiles(step.after)
        assert step.after.tile_count() == 106


@settings(max_examples=examples(60))
@given(round_params)
def test_melds_stay_legal_and_only_grow(params: RoundParams) -> None:
    """MELD-2/3/4/6 hold at every moment; MELD-5: melds only grow, never lose a tile."""
    check_melds(params.start())
    for step in play(params):
        check_melds(step.after)
        check_meld_growth(step.state, step.after)
        check_transition(step.state, step.seat, step.after)
