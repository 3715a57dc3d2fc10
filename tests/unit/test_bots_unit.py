"""Bots choose only legal actions, and greedy rounds end."""

from __future__ import annotations

import random

import pytest

from shared_engine.bots import greedy_policy, random_policy
from shared_engine.deal import start_round
from shared_engine.legal import legal_actions
from shared_engine.rules import apply
from shared_engine.state import VARIANTS, Variant

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_policy_always_returns_a_legal_action(variant: Variant) -> None:
    for i in range(10):
        state = start_round(f"random-bot-{i}", variant=variant, account_jokers=(1, 1, 1, 1))
        policy = random_policy(random.Random(i))
        while not state.round_over:
            seat = state.turn
            action = policy(state, seat)
            assert action in legal_actions(state, seat)
            state, _ = apply(state, seat, action)


def test_random_policy_is_reproducible_from_its_generator() -> None:
    def play(i: int) -> list[object]:
        state = start_round("repro")
        policy = random_policy(random.Random(i))
        chosen = []
        while not state.round_over:
            action = policy(state, state.turn)
            chosen.append(action)
            state, _ = apply(state, state.turn, action)
        return chosen

    assert play(3) == play(3)


@pytest.mark.parametrize("seed", range(20))
def test_greedy_rounds_end_within_1000_actions(seed: int) -> None:
    state = start_round(f"greedy-{seed}")
    for _ in range(1_000):
        if state.round_over:
            break
        seat = state.turn
        action = greedy_policy(state, seat)
        assert action in legal_actions(state, seat)
        state, _ = apply(state, seat, action)
    assert state.phase == "round_over"
