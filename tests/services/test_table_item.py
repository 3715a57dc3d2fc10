"""The games table's ``TABLE`` item: what a move rewrites, so what every move is billed for.

DynamoDB bills a write per started KB of the item, twice in a transaction: the item
stays under 1 KB with room to spare, and an item written before it was made small
(JSON state, seats as objects, a ``table_id`` attribute) still reads as its table.
"""

from __future__ import annotations

import json
import random

import pytest

from benchmarks.meter import item_size
from services.common.dynamo_storage import to_item
from services.common.events import SeatPlayer
from services.common.records import TableRecord
from shared_engine import RoundState, apply, dumps, pack, start_round
from shared_engine.bots import random_policy
from tests.services.test_store_conditions import table

pytestmark = pytest.mark.unit

SEED = "5e" * 32
"""A seed as the services draw one (64 hex characters)."""
ITEM_BUDGET = 900
"""Bytes the item may take: under the 1,024 that a second write unit starts at, with room
for a few small attributes more."""

SEATS = {
    1: SeatPlayer(player_id="8d1c2a5e-6f0b-4c1e-9a77-2b3c4d5e6f70", name="Margarethe Lindqv"),
    2: SeatPlayer(player_id="sub=" + "q" * 52, name="B"),
    3: SeatPlayer(player_id="bot:ab12cd-3", name="Bot 3", bot=True, level="hard"),
    4: SeatPlayer(player_id="bot:ab12cd-4", name="Bot 4", bot=True),
}


def _table(state: RoundState) -> TableRecord:
    """A table of a long-running match, its ids as long as AWS and Cognito make them."""
    return table(
        1_234,
        3,
        table_id="9f86d081884c7d659a2feaa0c55ad015",
        stake=2_500,
        seats=dict(SEATS),
        totals=(7_545, -1_230),
        state=pack(state),
        connections={seat: f"Zk3xQ9LmB1c{seat}Aw=" for seat in SEATS},
        turn_started=1_230,
        turn_deadline=1_800_000_123.456,
        updated_at=1_800_000_101.789,
    )


def test_an_item_reads_back_as_its_table() -> None:
    table = _table(start_round(SEED))
    assert TableRecord.from_item(table.to_item()) == table


def test_the_item_stays_under_a_kb_through_whole_rounds() -> None:
    largest = 0
    for i in range(10):
        state = start_round(SEED[:-2] + f"{i:02x}", match_scores=(7_545, -1_230))
        policy = random_policy(random.Random(i))
        while True:
            largest = max(largest, item_size(to_item(_table(state).to_item())))
            if state.round_over:
                break
            state, _ = apply(state, state.turn, policy(state, state.turn))
    assert largest <= ITEM_BUDGET


def test_an_item_written_before_the_state_was_packed_reads_as_the_same_table() -> None:
    """A deploy over running tables: their items hold the JSON state, seats as objects and
    the table id; they read as before, and the next write stores the compact form."""
    state = start_round(SEED)
    table = _table(state)
    old = {
        **table.to_item(),
        "table_id": table.table_id,
        "seats": json.dumps({str(seat): p.model_dump() for seat, p in SEATS.items()}),
        "state": dumps(state),
    }
    read = TableRecord.from_item(old)
    assert read == table
    assert read.to_item() == table.to_item()
    assert isinstance(read.to_item()["state"], bytes)


def test_a_seat_row_carries_every_field_a_seat_has() -> None:
    """The item keeps a seat as a row of values: a field added to a seat must be given a
    place in the row (``records._seat_row``), or it would be dropped on the next write."""
    assert set(SeatPlayer.model_fields) == {"player_id", "name", "bot", "level"}
    seats = json.loads(str(_table(start_round(SEED)).to_item()["seats"]))
    assert seats["1"] == [SEATS[1].player_id, SEATS[1].name]
    assert seats["3"] == ["bot:ab12cd-3", "Bot 3", "hard"]
    assert seats["4"] == ["bot:ab12cd-4", "Bot 4", None]
