"""A player who opens the game in a second tab or device plays there: the first tab, told
``opened_elsewhere``, is refused whatever it sends, and nothing it sends changes the table.

``tests/integration/test_presence.py`` runs these through the handlers on DynamoDB; here
every message enters ``TurnService.receive``, on the in-memory storage.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.common.presence import PresenceStore
from services.common.store import GameStore
from services.turn.app import TurnService
from shared_engine import RoundState
from tests.services import test_turn
from tests.services.conftest import snapshot
from tests.services.fakes import RecordingPusher, RecordingTimers
from tests.services.test_turn import _discard

pytestmark = pytest.mark.unit

turn = test_turn.turn
dealt = test_turn.dealt
"""The turn service and table t1 as ``test_turn.py`` wires and deals them (seat 1 must
discard first, DEAL-2), shared rather than rebuilt."""

OLD, NEW = "c1", "c1-new"
P1 = ("p1", "P1")


def _tabs(presence: PresenceStore, *connections: str) -> None:
    """p1 connects on each, in order, as the connect service records it: the last is current."""
    for connection in connections:
        presence.add_connection(connection, *P1, 1_800_000_000.0, 3600)


def _messages(state: RoundState) -> dict[str, dict[str, Any]]:
    """One message of each kind a tab sends for its seat; the play is legal for seat 1."""
    return {
        "play": {
            "action": "play",
            "table_id": "t1",
            "version": 1,
            "move": _discard(state, 1),
            "cid": "old-1",
        },
        "sync": {"action": "sync", "cid": "old-1"},
        "say": {"action": "say", "table_id": "t1", "phrase": "well_played", "cid": "old-1"},
    }


def _refused_elsewhere(pusher: RecordingPusher, connection: str) -> None:
    """The tab alone heard back, and only that it was opened elsewhere."""
    assert [c for c, _ in pusher.sent] == [connection]
    (answer,) = pusher.to(connection)
    assert (answer["type"], answer["code"], answer["cid"]) == ("error", "opened_elsewhere", "old-1")


@pytest.mark.parametrize("kind", ["play", "sync", "say"])
def test_a_replaced_tab_is_refused_and_changes_nothing(
    *,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    dealt: RoundState,
    kind: str,
) -> None:
    """The second tab synced and took the seat; the first sends a move, a sync or a quick
    message: not a tile moves, the seat stays the second tab's, nobody else hears of it."""
    _tabs(presence, OLD, NEW)
    turn.receive(P1, NEW, '{"action": "sync"}')
    table = store.get_table("t1")
    assert table is not None and table.connections[1] == NEW
    before = snapshot(store, "t1")
    pusher.clear()

    turn.receive(P1, OLD, json.dumps(_messages(dealt)[kind]))
    _refused_elsewhere(pusher, OLD)
    assert snapshot(store, "t1") == before
    assert timers.scheduled == []

    # The second tab plays the same move.
    pusher.clear()
    turn.receive(P1, NEW, json.dumps(_messages(dealt)["play"]))
    table = store.get_table("t1")
    assert table is not None and table.version == 2
    assert pusher.to(OLD) == []


def test_an_old_tab_stays_refused_after_the_newer_one_closes(
    *,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    dealt: RoundState,
) -> None:
    """The seat has no connection then, yet it is not the old tab's to take back: only the
    player's newest connection (a reconnect) may act for it."""
    _tabs(presence, OLD, NEW)
    turn.receive(P1, NEW, '{"action": "sync"}')
    presence.remove_connection(NEW)
    store.set_connection("t1", 1, None, replacing=NEW)
    before = snapshot(store, "t1")

    for kind in ("play", "sync"):
        pusher.clear()
        turn.receive(P1, OLD, json.dumps(_messages(dealt)[kind]))
        _refused_elsewhere(pusher, OLD)
        assert snapshot(store, "t1") == before, kind

    _tabs(presence, "c1-again")
    pusher.clear()
    turn.receive(P1, "c1-again", json.dumps(_messages(dealt)["play"]))
    table = store.get_table("t1")
    assert table is not None and table.version == 2
    assert pusher.to(OLD) == []
