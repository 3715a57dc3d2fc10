"""The search bots: legal, information-fair, deterministic, within a fixed budget."""

from __future__ import annotations

import random
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bots_heuristic import _played, _shuffle_hidden

from shared_engine import apply, legal_actions, player_view, start_round
from shared_engine.actions import Action
from shared_engine.bots import heuristic_policy
from shared_engine.observation import state_from_view
from shared_engine.search import (
    HARD,
    NORMAL,
    _chance,
    hidden_tiles,
    level_policy,
    search_policy,
    world,
)
from shared_engine.state import RoundState, to_json
from shared_engine.tiles import FULL_SET

pytestmark = pytest.mark.unit


@settings(max_examples=25, deadline=None)
@given(
    seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 90), shuffle=st.integers(0, 2**16)
)
def test_the_move_does_not_change_when_the_hidden_tiles_are_dealt_otherwise(
    seed: str, steps: int, shuffle: int
) -> None:
    state = _played(seed, steps)
    if state.round_over:
        return
    seat = state.turn
    twin = _shuffle_hidden(state, seat, random.Random(shuffle))
    bot = search_policy(NORMAL, "fair")
    assert bot(twin, seat) == bot(state, seat)


@settings(max_examples=25, deadline=None)
@given(seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 90))
def test_the_bot_decides_from_its_view_alone_as_on_the_real_state(seed: str, steps: int) -> None:
    state = _played(seed, steps)
    if state.round_over:
        return
    seat = state.turn
    rebuilt = state_from_view(player_view(state, seat))
    bot = search_policy(NORMAL, "view")
    assert bot(rebuilt, seat) == bot(state, seat)


@settings(max_examples=30, deadline=None)
@given(seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 90))
def test_a_world_keeps_everything_the_seat_sees_and_deals_only_the_hidden_tiles(
    seed: str, steps: int
) -> None:
    state = _played(seed, steps)
    seat = state.turn
    dealt = world(state, seat, "w", button=False)
    assert dealt.hands[seat - 1] == state.hands[seat - 1]
    assert (dealt.discard, dealt.melds, dealt.bonus_threes) == (
        state.discard,
        state.melds,
        state.bonus_threes,
    )
    assert [len(h) for h in dealt.hands] == [len(h) for h in state.hands]
    assert len(dealt.stock) == len(state.stock)
    others = [t for s in (1, 2, 3, 4) if s != seat for t in dealt.hands[s - 1]]
    truth = [t for s in (1, 2, 3, 4) if s != seat for t in state.hands[s - 1]]
    assert sorted(others + list(dealt.stock)) == sorted(truth + list(state.stock))
    assert sorted(hidden_tiles(state, seat)) == sorted(truth + list(state.stock))
    assert dealt.tile_count() == len(FULL_SET)


def test_the_same_seed_and_position_give_the_same_move_and_rounds_end() -> None:
    for name in ("normal", "hard"):
        state = start_round(f"det-{name}")
        bots = {
            s: level_policy(name, f"seat{s}") if s % 2 else heuristic_policy for s in (1, 2, 3, 4)
        }
        twins = {
            s: level_policy(name, f"seat{s}") if s % 2 else heuristic_policy for s in (1, 2, 3, 4)
        }
        for _ in range(1000):
            if state.round_over:
                break
            seat = state.turn
            action = bots[seat](state, seat)
            assert action == twins[seat](state, seat)
            assert action in legal_actions(state, seat)
            state, _ = apply(state, seat, action)
        assert state.round_over


def test_the_budget_is_a_fixed_count_and_hard_thinks_more_than_normal() -> None:
    assert NORMAL.budget == NORMAL.candidates * NORMAL.worlds * (NORMAL.horizon + 1)
    assert HARD.budget > NORMAL.budget
    assert level_policy("easy", "x") is heuristic_policy
    with pytest.raises(ValueError, match="unknown level"):
        level_policy("expert", "x")


def test_a_lead_counts_as_a_chance_of_winning_the_match_match_1() -> None:
    """MATCH-1: the higher total wins, whatever the margin. At the deciding round's end
    a lead of 300 is almost a sure win and one of 10 almost a draw; before the end,
    and the more rounds follow, the chance grows closer to linear in the lead."""
    at_end = partial(_chance, over=True, level=HARD, rounds_after=0)
    assert at_end(300.0) > 0.99
    assert 0 < at_end(10.0) < 0.1
    assert at_end(-300.0) == -at_end(300.0)
    assert at_end(0.0) == 0.0
    before_end = partial(_chance, over=False, level=HARD, rounds_after=0)
    assert 0.2 < before_end(300.0) < 0.35
    early = partial(_chance, over=False, level=HARD, rounds_after=16)
    assert early(600.0) / early(300.0) == pytest.approx(2.0, rel=0.02)
    assert early(300.0) < before_end(300.0) < at_end(300.0)


def test_a_bot_whose_match_is_decided_plays_as_the_heuristic_match_1() -> None:
    """The match totals before the round count in the lead: 20,000 points ahead (or
    behind) in the deciding round, every world is a sure win (or loss) whatever it plays,
    so no alternative beats the heuristic's choice. With the totals level the same deal
    has moves where one does."""

    def moves_differing(totals: tuple[int, int]) -> int:
        state = start_round("decided", match_scores=totals)
        bot = level_policy("normal", "decided")
        differing = 0
        while not state.round_over:
            seat = state.turn
            action = bot(state, seat) if seat % 2 else heuristic_policy(state, seat)
            differing += action != heuristic_policy(state, seat)
            state, _ = apply(state, seat, action)
        return differing

    assert moves_differing((0, 0)) > 0
    assert moves_differing((20_000, 0)) == 0
    assert moves_differing((0, 20_000)) == 0


def test_a_bot_round_replays_from_its_seed_and_log_move_by_move() -> None:
    """The turn service seeds a bot's decision by table, round and ply, so the round's
    seed and its log are the whole record: replayed, every bot move is decided again the
    same, and the round ends in the same state."""

    def decide(state: RoundState, seat: int) -> Action:
        level = {1: "hard", 2: "normal"}.get(seat, "easy")
        return level_policy(level, f"t9:1:{state.ply}")(state, seat)

    state = start_round("replayed")
    log: list[tuple[int, Action]] = []
    while not state.round_over:
        seat = state.turn
        action = decide(state, seat)
        log.append((seat, action))
        state, _ = apply(state, seat, action)
    again = start_round("replayed")
    for seat, action in log:
        assert decide(again, seat) == action
        again, _ = apply(again, seat, action)
    assert to_json(again) == to_json(state)
    assert len(log) > 40
