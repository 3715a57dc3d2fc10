"""Seats whose player left (TABLE-2): auto-play, reconnect and resync, vanished clients (410)."""

from __future__ import annotations

from typing import Any

import pytest

from shared_engine import MatchMode, apply, auto_play_step, parse_action, unpack
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration

PLAYERS = ["q1", "q2", "q3", "q4"]


def _start(harness: Harness, table_id: str) -> tuple[dict[int, str], dict[str, Any]]:
    conns = harness.start_table(table_id, PLAYERS, MatchMode.ONE_ROUND)
    view = harness.last(conns[1])
    assert view is not None and view["view"]["turn"] == 1
    return conns, view


def _discard_first(harness: Harness, conn: str, table_id: str) -> None:
    view = harness.last(conn)
    assert view is not None
    tile = view["view"]["legal_actions"][-1]
    assert tile["type"] == "discard"
    harness.play(conn, table_id, view["version"], tile)


def _draw_and_discard(harness: Harness, conn: str, table_id: str) -> None:
    view = harness.last(conn)
    assert view is not None
    harness.play(conn, table_id, view["version"], {"type": "draw"})
    view = harness.last(conn)
    assert view is not None and view["view"]["phase"] == "play"
    discard = next(a for a in view["view"]["legal_actions"] if a["type"] == "discard")
    harness.play(conn, table_id, view["version"], discard)


def _entries(harness: Harness, table_id: str) -> list[tuple[int, dict[str, Any], bool]]:
    return [(i.seat, i.action, i.auto) for i in harness.logs(table_id)]


def test_a_disconnected_seat_is_auto_played_and_can_come_back(harness: Harness) -> None:
    conns, _ = _start(harness, "away")
    _discard_first(harness, conns[1], "away")  # seat 2 to play
    harness.disconnect(conns[3])
    harness.settle()

    table = harness.table("away")
    assert table.connections[3] is None
    latest = harness.last(conns[1])
    assert latest is not None and latest["seats"]["3"]["connected"] is False
    assert unpack(table.state or b"").turn == 2, "seat 3's turn has not come yet"

    before = unpack(table.state or b"")
    _draw_and_discard(harness, conns[2], "away")  # now seat 3's turn comes: auto-played
    harness.settle()

    entries = _entries(harness, "away")
    seat3 = [(action, auto) for seat, action, auto in entries if seat == 3]
    assert [a["type"] for a, _ in seat3] == ["draw", "discard"], "TABLE-2: draw, then discard"
    assert all(auto for _, auto in seat3)
    # The auto-played discard is the deterministic TABLE-2 choice.
    replayed = before
    for seat, action, _ in entries[1:]:
        if seat == 3:
            assert action == _wire(auto_play_step(replayed, 3))
        replayed, _ = apply(replayed, seat, parse_action(action))
    moved = [m for m in harness.logs("away") if m.seat == 3]
    assert moved and all(m.auto for m in moved)
    table = harness.table("away")
    state = unpack(table.state or b"")
    assert state.turn == 4 and not state.round_over, "the round goes on"
    assert state == replayed

    # Seat 3 comes back on a new connection and asks for its view.
    again = harness.connect("q3")
    assert again is not None and again != conns[3]
    harness.settle()
    assert harness.table("away").connections[3] == again
    harness.send(again, {"action": "sync"})
    reply = harness.received(again)[-1]
    assert reply["type"] == "view"
    assert reply["seat"] == 3
    assert reply["version"] == table.version
    assert sorted(reply["view"]["hand"]) == sorted(_names(state.hands[2]))
    assert reply["view"]["turn"] == 4
    assert reply["seats"]["3"]["connected"] is True
    for seat in (1, 2, 4):
        view = harness.last(conns[seat])
        assert view is not None and view["seats"]["3"]["connected"] is True, seat
    # And plays on when its turn comes.
    _draw_and_discard(harness, conns[4], "away")
    _draw_and_discard(harness, conns[1], "away")
    _draw_and_discard(harness, conns[2], "away")
    _draw_and_discard(harness, again, "away")
    seat3_manual = [a for s, a, auto in _entries(harness, "away") if s == 3 and not auto]
    assert [a["type"] for a in seat3_manual] == ["draw", "discard"]


def test_a_seat_that_leaves_on_its_turn_is_auto_played_at_once(harness: Harness) -> None:
    conns, _ = _start(harness, "leave")
    _discard_first(harness, conns[1], "leave")
    version = harness.table("leave").version
    harness.disconnect(conns[2])
    harness.settle()
    table = harness.table("leave")
    assert table.version == version + 1
    assert unpack(table.state or b"").turn == 3
    assert [(s, a["type"], auto) for s, a, auto in _entries(harness, "leave")][1:] == [
        (2, "draw", True),
        (2, "discard", True),
    ]
    view = harness.last(conns[3])
    assert view is not None and view["version"] == table.version
    assert view["last_action"]["seat"] == 2 and view["last_action"]["auto"] is True


def test_a_vanished_client_does_not_block_the_table(quick_turns: Harness) -> None:
    """The client is gone without $disconnect: pushes to it get 410 GoneException."""
    harness = quick_turns
    conns, view = _start(harness, "gone")
    harness.drop(conns[2])
    received_before = len(harness.received(conns[2]))

    _discard_first(harness, conns[1], "gone")

    table = harness.table("gone")
    assert table.version == view["version"] + 1, "the move succeeded"
    assert len(harness.logs("gone")) == 1
    assert table.connections[2] is None, "the seat of the gone connection was cleared"
    assert table.connections[1] == conns[1] and table.connections[3] == conns[3]
    assert len(harness.received(conns[2])) == received_before
    mine = harness.last(conns[1])
    assert mine is not None and mine["version"] == table.version

    # Seat 2's turn is played when its timer fires (no $disconnect ever came).
    harness.aws.dispatcher.run_until(lambda: len(_entries(harness, "gone")) >= 3, 10)
    harness.settle()
    entries = _entries(harness, "gone")
    assert [(s, a["type"], auto) for s, a, auto in entries][1:3] == [
        (2, "draw", True),
        (2, "discard", True),
    ]
    latest = harness.last(conns[3])
    assert latest is not None
    assert latest["seats"]["2"]["connected"] is False
    assert latest["version"] == harness.table("gone").version


def _names(tiles: tuple[int, ...]) -> list[str]:
    from shared_engine.tiles import NAMES

    return [NAMES[t] for t in tiles]


def _wire(action: Any) -> dict[str, Any]:
    from shared_engine import action_to_wire

    return action_to_wire(action)


def test_a_second_tab_takes_the_seat_over_and_the_first_is_told(harness: Harness) -> None:
    """The older connection hears ``opened_elsewhere``; its moves and syncs no longer apply."""
    conns, view = _start(harness, "tabs")
    first = conns[1]
    second = harness.connect("q1")
    assert second is not None and second != first
    harness.settle()
    assert harness.received(first)[-1] == {"type": "opened_elsewhere"}
    assert harness.table("tabs").connections[1] == second

    version = harness.table("tabs").version
    tile = view["view"]["legal_actions"][-1]
    harness.send(
        first,
        {"action": "play", "table_id": "tabs", "version": version, "move": tile, "cid": "old-1"},
    )
    refused = harness.received(first)[-1]
    assert (refused["type"], refused["code"], refused["cid"]) == (
        "error",
        "opened_elsewhere",
        "old-1",
    )
    harness.send(first, {"action": "sync"})
    assert harness.received(first)[-1]["code"] == "opened_elsewhere"
    table = harness.table("tabs")
    assert table.version == version, "a refused move leaves the table unchanged"
    assert table.connections[1] == second, "a sync from the old tab does not take the seat back"

    harness.send(second, {"action": "sync"})
    current = harness.last(second)
    assert current is not None and current["seat"] == 1
    _discard_first(harness, second, "tabs")
    assert harness.table("tabs").version == version + 1
    harness.disconnect(first)
    harness.settle()
    assert harness.table("tabs").connections[1] == second, "closing the old tab frees nothing"


def test_an_old_tab_stays_refused_after_the_newer_one_closes(harness: Harness) -> None:
    """The seat has no connection then, but the old tab is still not the player's: refused.

    Only a reconnect (the player's newest connection) takes the seat back.
    """
    conns, _ = _start(harness, "closed-tab")
    first = conns[1]
    second = harness.connect("q1")
    assert second is not None
    harness.settle()
    harness.disconnect(second)
    harness.settle()
    assert harness.table("closed-tab").connections[1] is None
    version = harness.table("closed-tab").version
    harness.send(
        first,
        {"action": "play", "table_id": "closed-tab", "version": version, "move": {"type": "draw"}},
    )
    assert harness.received(first)[-1]["code"] == "opened_elsewhere"
    harness.send(first, {"action": "sync"})
    assert harness.received(first)[-1]["code"] == "opened_elsewhere"
    table = harness.table("closed-tab")
    assert table.version == version, "a refused move leaves the table unchanged"
    assert table.connections[1] is None, "the old tab does not take the seat back"

    third = harness.connect("q1")
    assert third is not None
    harness.settle()
    assert harness.table("closed-tab").connections[1] == third
    harness.send(third, {"action": "sync"})
    current = harness.last(third)
    assert current is not None and current["seat"] == 1, "a reconnect takes the seat back"
