"""Property 4: a round is a function of its seed, options and actions (DEAL-4)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_engine import (
    action_to_wire,
    apply,
    dumps,
    from_json,
    loads,
    pack,
    parse_action,
    to_json,
    unpack,
)

from ._support import RoundParams, examples, play, round_params

pytestmark = pytest.mark.property


@settings(max_examples=examples(60))
@given(round_params)
def test_replaying_the_recorded_actions_gives_the_same_round(params: RoundParams) -> None:
    """Replaying (seed, options, wire actions) rebuilds the round: equal states, equal
    dumps and the same events at every step."""
    log = []
    states = [params.start()]
    for step in play(params):
        log.append((step.seat, json.loads(json.dumps(action_to_wire(step.action))), step.events))
        states.append(step.after)
    final = states[-1]

    state = params.start()
    assert state == states[0]
    for index, (seat, wire, events) in enumerate(log):
        state, replayed = apply(state, seat, parse_action(wire))
        assert replayed == events
        assert state == states[index + 1]
    assert state == final
    assert dumps(state) == dumps(final)


@settings(max_examples=examples(40))
@given(round_params, st.integers(0, 2**32 - 1))
def test_stored_form_round_trips_at_every_step(params: RoundParams, resume: int) -> None:
    """``loads(dumps(s)) == s`` and ``unpack(pack(s)) == s`` at every step, and a round
    resumed from its stored (packed) form at any step goes on exactly as the original."""
    states = [params.start()]
    actions = []
    for step in play(params):
        states.append(step.after)
        actions.append((step.seat, step.action))
    for state in states:
        text = dumps(state)
        restored = loads(text)
        assert restored == state
        assert dumps(restored) == text
        assert from_json(json.loads(json.dumps(to_json(state)))) == state
        packed = pack(state)
        assert unpack(packed) == state
        assert pack(unpack(packed)) == packed

    start = random.Random(resume).randrange(len(states))
    state = states[start]
    for seat, action in actions[start:]:
        state, _ = apply(unpack(pack(state)), seat, action)
    assert state == states[-1]


@settings(max_examples=examples(40))
@given(round_params)
def test_every_listed_action_survives_the_wire(params: RoundParams) -> None:
    """``parse_action(action_to_wire(a)) == a`` for every action ever listed, via JSON text."""
    for step in play(params):
        for action in step.legal:
            wire = json.loads(json.dumps(action_to_wire(action)))
            assert parse_action(wire) == action
