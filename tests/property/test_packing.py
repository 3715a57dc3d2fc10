"""Property 4, stored: the packed state the games table keeps reads back as exactly the
state it was packed from, whatever its small fields hold (every step of random rounds:
``test_replay.test_stored_form_round_trips_at_every_step``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_engine import dumps, pack, unpack
from shared_engine.state import PHASES

from ._support import RoundParams, examples, play, round_params

pytestmark = pytest.mark.property

texts = st.one_of(
    st.none(),
    st.text(max_size=80),
    st.binary(max_size=40).map(bytes.hex),
    st.binary(min_size=1, max_size=40).map(lambda raw: raw.hex().upper()),
    st.binary(max_size=40).map(lambda raw: raw.hex()[1:]),
)
"""Seeds and commitments: none, any text, and hex that packs raw or must stay text."""


@settings(max_examples=examples(100))
@given(
    round_params,
    st.integers(0, 300),
    st.fixed_dictionaries(
        {
            "turn": st.integers(1, 4),
            "dealer": st.integers(1, 4),
            "phase": st.sampled_from(PHASES),
            "went_out": st.sampled_from((None, 1, 2, 3, 4)),
            "ply": st.integers(0, 2**40),
            "thresholds": st.tuples(st.integers(-(2**40), 2**40), st.integers(-5, 200)),
            "match_scores": st.tuples(st.integers(-(2**40), 2**40), st.integers(-9999, 9999)),
            "account_jokers": st.tuples(*[st.integers(0, 2**40)] * 4),
            "joker_used": st.tuples(*[st.booleans()] * 4),
            "opened": st.tuples(st.booleans(), st.booleans()),
            "seed": texts,
            "commitment": texts,
        }
    ),
)
def test_the_small_fields_read_back_whatever_they_hold(
    params: RoundParams, steps: int, fields: dict[str, object]
) -> None:
    """A position with its seats, phase, scores, balances, button uses and texts replaced:
    the fields a random round rarely reaches (a seat gone out mid-play, a huge balance, a
    seed that is hex but not in the services' spelling) read back as they were."""
    state = params.start()
    for step in play(params):
        if step.index == steps:
            break
        state = step.after
    changed = state.copy()
    for name, value in fields.items():
        setattr(changed, name, value)
    packed = pack(changed)
    restored = unpack(packed)
    assert restored == changed
    assert dumps(restored) == dumps(changed)
    assert pack(restored) == packed
