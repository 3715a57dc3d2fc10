"""Writes with no version to lose, colliding with other transactions on every try.

The DynamoDB storage answers such a commit ``VersionConflict``
(``tests/integration/test_storage_conflicts.py``). Presence writes name no
version, so for them it cannot be a lost race: ``$connect``, ``$disconnect``,
the seat's connection, a move's repair mark, an invite code's count, a queue
entry's removal and a player's release fail (``Contended``) instead of going on
as if the write had been made, or refused for a reason of its own ("seat
taken", "repaired before", "rate limited").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from services.common.auth import Identity
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.records import QueueTicket
from services.common.store import GameStore
from services.common.unit_of_work import Contended, Outcome, TableKind, VersionConflict, Write
from services.connect.app import ConnectService
from services.matchmaking.store import LobbyStore, PlayerStore, QueueStore
from shared_engine import start_round
from tests.services.conftest import build, put_table

pytestmark = pytest.mark.unit


class Contending(MemoryStorage):
    """The in-memory storage, with every commit that writes ``held`` colliding every time."""

    def __init__(self) -> None:
        super().__init__()
        self.held: set[TableKind] = set()

    def commit(self, writes: Sequence[Write]) -> Outcome:
        if any(w.table in self.held for w in writes):
            return VersionConflict()
        return super().commit(writes)


@pytest.fixture
def storage() -> Contending:
    return Contending()


@pytest.fixture
def connect(deps: dict[str, Any]) -> ConnectService:
    return build(ConnectService, deps)


@pytest.mark.parametrize("held", ["connections", "players"])
def test_a_connect_whose_presence_write_collides_fails(
    held: TableKind, connect: ConnectService, storage: Contending, presence: PresenceStore
) -> None:
    storage.held.add(held)
    with pytest.raises(Contended):
        connect.connect("c1", Identity("p1", "Ann"))
    assert presence.get_player("p1") is None


@pytest.mark.parametrize("held", ["connections", "players"])
def test_a_disconnect_whose_presence_write_collides_fails(
    held: TableKind, connect: ConnectService, storage: Contending, presence: PresenceStore
) -> None:
    connect.connect("c1", Identity("p1", "Ann"))
    storage.held.add(held)
    with pytest.raises(Contended):
        connect.disconnect("c1")
    player = presence.get_player("p1")
    assert player is not None and player.connection_id == "c1"


def test_a_seat_whose_connection_write_collides_is_not_taken_it_fails(
    store: GameStore, storage: Contending
) -> None:
    put_table(store, "t1", start_round("s"), connections={1: "c1", 2: None, 3: "c3", 4: "c4"})
    storage.held.add("games")
    with pytest.raises(Contended):
        store.set_connection("t1", 1, None, replacing="c1")


def test_seating_a_player_whose_write_collides_fails(
    presence: PresenceStore, storage: Contending
) -> None:
    storage.held.add("players")
    with pytest.raises(Contended):
        presence.seat_player("p1", "Ann", "t1", 1)


def test_a_repair_claim_that_collides_is_not_repaired_before_it_fails(
    store: GameStore, storage: Contending
) -> None:
    storage.held.add("games")
    with pytest.raises(Contended):
        store.moves.claim_repair("t1", 1, 6)


def test_an_invite_code_try_that_collides_is_not_the_limit_it_fails(storage: Contending) -> None:
    storage.held.add("matchmaking")
    with pytest.raises(Contended):
        LobbyStore(storage).try_code("p1", 1000.0, limit=12, window_seconds=600)


def test_a_queue_entry_or_a_release_that_collides_is_not_lost_it_fails(
    storage: Contending,
) -> None:
    """Unconditional writes whose outcome was ignored: a collision on every try wrote
    nothing, so the consumer fails and its record comes back."""
    ticket = QueueTicket("one_round:twos-meld:0", "0001#p1", "p1", "P1", "t-1", 99.0)
    storage.held.update({"matchmaking", "players"})
    with pytest.raises(Contended):
        QueueStore(storage).delete_entry(ticket)
    with pytest.raises(Contended):
        PlayerStore(storage).release("p1", "t1")
