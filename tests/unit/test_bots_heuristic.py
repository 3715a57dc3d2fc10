"""The heuristic bot: legal, information-fair, and clearly better than chance."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_engine import MatchMode, apply, legal_actions, player_view, start_round
from shared_engine.bots import heuristic_policy, random_policy
from shared_engine.observation import state_from_view
from shared_engine.state import RoundState
from tools.simulate import pairing

pytestmark = pytest.mark.unit


def test_heuristic_beats_random_in_at_least_95_percent_of_200_one_round_matches() -> None:
    tally = pairing(
        "hr",
        heuristic_policy,
        random_policy(random.Random(1)),
        matches=200,
        seed=1,
        mode=MatchMode.ONE_ROUND,
    )
    assert tally.matches == 200
    assert tally.wins[0] / tally.matches >= 0.95


def _played(seed: str, steps: int) -> RoundState:
    state = start_round(seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.round_over:
            break
        state, _ = apply(
            state,
            state.turn,
            heuristic_policy(state, state.turn)
            if rng.random() < 0.5
            else rng.choice(legal_actions(state, state.turn)),
        )
    return state


def _shuffle_hidden(state: RoundState, seat: int, rng: random.Random) -> RoundState:
    """The same position as the seat sees it, with the hidden tiles dealt differently."""
    others = [s for s in (1, 2, 3, 4) if s != seat]
    hidden = [t for s in others for t in state.hands[s - 1]] + list(state.stock)
    rng.shuffle(hidden)
    hands = list(state.hands)
    for s in others:
        size = len(state.hands[s - 1])
        hands[s - 1], hidden = tuple(sorted(hidden[:size])), hidden[size:]
    new = state.copy()
    new.hands = tuple(hands)
    new.stock = tuple(hidden)
    return new


@settings(max_examples=60, deadline=None)
@given(
    seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 90), shuffle=st.integers(0, 2**16)
)
def test_the_bot_decides_only_on_what_its_seat_may_see(seed: str, steps: int, shuffle: int) -> None:
    state = _played(seed, steps)
    if state.round_over:
        return
    seat = state.turn
    twin = _shuffle_hidden(state, seat, random.Random(shuffle))
    assert heuristic_policy(twin, seat) == heuristic_policy(state, seat)


@settings(max_examples=40, deadline=None)
@given(seed=st.text(min_size=1, max_size=8))
def test_the_bot_always_plays_a_legal_action_to_the_end_of_a_round(seed: str) -> None:
    state = start_round(seed)
    for _ in range(1000):
        if state.round_over:
            return
        action = heuristic_policy(state, state.turn)
        assert action in legal_actions(state, state.turn)
        state, _ = apply(state, state.turn, action)
    raise AssertionError("the round did not end")


@settings(max_examples=60, deadline=None)
@given(seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 90))
def test_a_bot_playing_from_its_view_decides_as_on_the_real_state(seed: str, steps: int) -> None:
    state = _played(seed, steps)
    if state.round_over:
        return
    seat = state.turn
    rebuilt = state_from_view(player_view(state, seat))
    assert heuristic_policy(rebuilt, seat) == heuristic_policy(state, seat)
    assert legal_actions(rebuilt, seat) == legal_actions(state, seat)
