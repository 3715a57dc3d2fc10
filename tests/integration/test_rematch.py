"""Playing again at a friends table: the same four, in the same seats, on the real stack.

A match played through the handlers ends; ``rematch`` then opens a lobby whose seats
only the four hold (the bots seated again at their level), offers it to the others,
and starts a new table when the fourth takes their seat. Refusals leave nothing behind.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from services.matchmaking.rematch import rematch_code
from tests.integration.clients import play_match
from tests.integration.harness import Harness
from tests.integration.machine import settle_until
from tests.integration.test_matchmaking_flow import (
    connect,
    create_lobby,
    errors,
    lobby_item,
    mm,  # noqa: F401  (the fixture)
    player_item,
    seated_views,
)

pytestmark = pytest.mark.integration


def lobbies(harness: Harness) -> list[dict[str, Any]]:
    items = harness.aws.client("dynamodb").scan(
        TableName=harness.aws.settings.matchmaking_table, ConsistentRead=True
    )["Items"]
    return [i for i in items if i["pk"]["S"].startswith("LOBBY#")]


def lobbies_after(harness: Harness, connection: str, since: int) -> list[dict[str, Any]]:
    return [m for m in harness.received(connection)[since:] if m["type"] == "lobby"]


def finished_table(harness: Harness, connections: dict[int, str]) -> str:
    settle_until(harness, seated_views(harness, list(connections.values())))
    view = harness.last(connections[min(connections)])
    assert view is not None
    table_id = str(view["table_id"])
    play_match(harness, connections, table_id)
    settle_until(harness, lambda: harness.table(table_id).status == "finished")
    return table_id


def test_the_same_four_play_again_in_the_same_seats(mm: Harness) -> None:  # noqa: F811
    host, code = create_lobby(mm, "r1")
    guests = {p: connect(mm, p) for p in ("r2", "r3", "r4")}
    for conn in guests.values():
        mm.send(conn, {"action": "join_table", "code": code})
    conns = {1: host, 2: guests["r2"], 3: guests["r3"], 4: guests["r4"]}
    ended = finished_table(mm, conns)
    marks = {seat: len(mm.received(c)) for seat, c in conns.items()}

    # Seat 3 asks first: it hosts the rematch; the others are offered their own seats.
    mm.send(conns[3], {"action": "rematch", "table_id": ended, "cid": "r-1"})
    answer = mm.last(conns[3], "lobby")
    assert answer is not None and answer["cid"] == "r-1", mm.received(conns[3])[-3:]
    assert answer["code"] == rematch_code(ended, 0)
    assert (answer["host"], answer["rematch_of"], answer["status"]) == ("r3", ended, "forming")
    assert answer["seats"]["3"]["player_id"] == "r3"
    assert {s: p["player_id"] for s, p in answer["awaiting"].items()} == {
        "1": "r1",
        "2": "r2",
        "4": "r4",
    }
    assert answer["teams"] == {"1": "A", "2": "B", "3": "A", "4": "B"}
    for seat in (1, 2, 4):
        (offer,) = lobbies_after(mm, conns[seat], marks[seat])
        assert offer["you"] == f"r{seat}" and offer["rematch_of"] == ended
        assert str(seat) in offer["awaiting"] and offer.get("cid") is None

    # Nobody else may take a held seat, by code or by asking for the rematch.
    stranger = connect(mm, "r5")
    mm.send(stranger, {"action": "join_table", "code": answer["code"]})
    mm.send(stranger, {"action": "rematch", "table_id": ended})
    assert errors(mm, stranger) == ["table_full", "not_seated"]
    assert "lobby" not in player_item(mm, "r5")

    # Seat 1 and seat 2 answer at once (seat 2 twice); seat 4 last starts the match.
    with ThreadPoolExecutor(3) as pool:
        list(
            pool.map(
                lambda c: mm.send(c, {"action": "rematch", "table_id": ended}),
                [conns[1], conns[2], conns[2]],
            )
        )
    assert [errors(mm, conns[s]) for s in (1, 2)] == [[], []]
    seated = {k for k in lobby_item(mm, answer["code"]) if k in ("s1", "s2", "s3", "s4")}
    assert seated == {"s1", "s2", "s3"}
    mm.send(conns[4], {"action": "rematch", "table_id": ended})
    started = mm.last(conns[4], "lobby")
    assert started is not None and started["status"] == "started"
    again = started["table_id"]
    assert again != ended

    table = mm.table(again)
    assert {s: p.player_id for s, p in table.seats.items()} == {s: f"r{s}" for s in (1, 2, 3, 4)}
    assert table.mode == mm.table(ended).mode and table.variant == mm.table(ended).variant
    for seat in (1, 2, 3, 4):
        item = player_item(mm, f"r{seat}")
        assert (item["table_id"]["S"], int(item["seat"]["N"])) == (again, seat)
        assert "lobby" not in item
    settle_until(mm, seated_views(mm, list(conns.values())))
    assert {(mm.last(c) or {}).get("table_id") for c in conns.values()} == {again}

    # The ended table's rematch is taken: asking again shows the started one.
    mm.send(conns[1], {"action": "rematch", "table_id": ended})
    shown = mm.last(conns[1], "lobby")
    assert shown is not None and (shown["status"], shown["table_id"]) == ("started", again)
    assert len([i for i in lobbies(mm) if i.get("rematch_of")]) == 1


def test_bots_sit_again_at_their_level_and_the_host_may_fill_an_absent_seat(
    mm: Harness,  # noqa: F811
) -> None:
    host, _code = create_lobby(mm, "s1")
    guest = connect(mm, "s2")
    mm.send(guest, {"action": "join_table", "code": _code})
    mm.send(host, {"action": "fill_bots", "level": "easy"})
    ended = finished_table(mm, {1: host, 2: guest})
    before = len(mm.received(host))

    mm.send(guest, {"action": "rematch", "table_id": ended})
    lobby = mm.last(guest, "lobby")
    assert lobby is not None and lobby["host"] == "s2"
    assert [lobby["seats"][s] and lobby["seats"][s].get("level") for s in "34"] == [
        "easy",
        "easy",
    ]
    assert lobby["seats"]["1"] is None and set(lobby["awaiting"]) == {"1"}
    assert lobby["practice"] is True

    # The first player does not come back: the rematch's host gives the seat to a bot.
    mm.send(guest, {"action": "fill_bots"})
    started = mm.last(guest, "lobby")
    assert started is not None and started["status"] == "started"
    table = mm.table(started["table_id"])
    assert [table.seats[s].bot for s in (1, 2, 3, 4)] == [True, False, True, True]
    assert [table.seats[s].level for s in (3, 4)] == ["easy", "easy"]
    told = lobbies_after(mm, host, before)
    assert told[-1]["status"] == "started" and "1" not in told[-1]["awaiting"]

    mm.send(host, {"action": "rematch", "table_id": ended})
    assert errors(mm, host) == ["table_full"]
    assert "lobby" not in player_item(mm, "s1")


def test_a_rematch_is_refused_until_the_match_is_over_and_only_for_friends_tables(
    mm: Harness,  # noqa: F811
) -> None:
    host, code = create_lobby(mm, "t1")
    mm.send(host, {"action": "fill_bots", "level": "easy"})
    settle_until(mm, lambda: mm.last(host) is not None)
    playing = (mm.last(host) or {})["table_id"]
    before = (player_item(mm, "t1"), lobbies(mm))

    mm.send(host, {"action": "rematch", "table_id": playing})
    mm.send(host, {"action": "rematch", "table_id": "0123456789abcdef"})
    mm.send(host, {"action": "rematch", "table_id": f"f-{code}-00000000"})
    assert errors(mm, host) == ["not_over", "no_table", "no_table"]
    assert (player_item(mm, "t1"), lobbies(mm)) == before
    assert lobby_item(mm, rematch_code(playing, 0)) == {}
