"""The packed round state: its size, its format byte, and what it refuses to read."""

from __future__ import annotations

import hashlib
import random

import pytest

from shared_engine.bots import random_policy
from shared_engine.deal import start_round
from shared_engine.errors import EngineError
from shared_engine.packing import PACKED_FORMAT, pack, unpack
from shared_engine.rules import apply
from shared_engine.state import dumps

pytestmark = pytest.mark.unit

SERVICE_SEED = hashlib.sha256(b"packing").hexdigest()
"""A seed as the services draw one: 64 lower-case hex characters (``SecureEntropy``)."""
MAX_PACKED_BYTES = 240


def test_a_round_packs_in_a_quarter_of_its_json() -> None:
    """A move rewrites the table's item, billed per started KB: the packed state stays a
    small part of it over whole rounds, where the JSON is about 1 KB."""
    largest = 0
    for i in range(20):
        state = start_round(f"{SERVICE_SEED[:-2]}{i:02x}", match_scores=(7_500, -300))
        policy = random_policy(random.Random(i))
        while True:
            assert len(pack(state)) * 4 < len(dumps(state))
            largest = max(largest, len(pack(state)))
            if state.round_over:
                break
            state, _ = apply(state, state.turn, policy(state, state.turn))
    assert largest <= MAX_PACKED_BYTES


def test_the_seed_and_commitment_are_kept_as_their_raw_bytes() -> None:
    state = start_round(SERVICE_SEED)
    packed = pack(state)
    assert state.commitment is not None
    assert bytes.fromhex(SERVICE_SEED) in packed
    assert bytes.fromhex(state.commitment) in packed
    assert SERVICE_SEED.encode() not in packed


def test_a_seed_that_is_not_lower_case_hex_is_kept_as_its_text() -> None:
    for seed in ("ABCD", "abc", "", "prop-seed-ü"):
        state = start_round(seed)
        assert unpack(pack(state)).seed == seed


def _assert_malformed(data: bytes) -> None:
    with pytest.raises(EngineError) as refused:
        unpack(data)
    assert refused.value.code == "malformed"


def test_the_first_byte_names_the_format() -> None:
    packed = pack(start_round(SERVICE_SEED))
    assert packed[0] == PACKED_FORMAT
    for other in (0, 1, ord("{"), PACKED_FORMAT + 1):
        _assert_malformed(bytes((other,)) + packed[1:])


def test_a_state_cut_short_or_followed_by_more_is_malformed() -> None:
    packed = pack(start_round(SERVICE_SEED))
    for end in range(len(packed)):
        _assert_malformed(packed[:end])
    _assert_malformed(packed + b"\x00")


def test_a_byte_that_is_no_tile_is_malformed() -> None:
    state = start_round(SERVICE_SEED)
    packed = bytearray(pack(state))
    first_tile = packed.index(bytes((len(state.hands[0]), *state.hands[0]))) + 1
    packed[first_tile] = 1  # ids are rank * 4 + colour, the joker 0: no tile is 1
    _assert_malformed(bytes(packed))


def test_a_seat_out_of_range_is_malformed() -> None:
    packed = bytearray(pack(start_round(SERVICE_SEED)))
    packed[2] = 5 | 4 << 4  # turn 5, dealer 4
    _assert_malformed(bytes(packed))
