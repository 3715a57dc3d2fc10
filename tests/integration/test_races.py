"""Optimistic concurrency: two moves on one version, sequential and truly concurrent."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from shared_engine import MatchMode, to_json, unpack
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration

PLAYERS = ["r1", "r2", "r3", "r4"]


def _opening(harness: Harness, table_id: str) -> tuple[dict[int, str], dict[str, Any]]:
    """A dealt table; seat 1 holds 15 tiles and must discard (DEAL-2)."""
    conns = harness.start_table(table_id, PLAYERS, MatchMode.ONE_ROUND)
    view = harness.last(conns[1])
    assert view is not None
    assert view["view"]["turn"] == 1 and view["view"]["phase"] == "first_discard"
    return conns, view


def test_a_second_move_on_the_same_version_gets_stale_version(harness: Harness) -> None:
    conns, view = _opening(harness, "seq")
    version = view["version"]
    hand = view["view"]["hand"]
    first, second = hand[0], next(t for t in hand if t != hand[0])
    before = len(harness.received(conns[1]))

    assert harness.play(conns[1], "seq", version, {"type": "discard", "tile": first}) == {
        "statusCode": 200
    }
    assert harness.play(conns[1], "seq", version, {"type": "discard", "tile": second}) == {
        "statusCode": 200
    }

    table = harness.table("seq")
    assert table.version == version + 1
    (log,) = harness.logs("seq")
    assert log.action == {"type": "discard", "tile": first}
    replies = harness.received(conns[1])[before:]
    assert [m["type"] for m in replies] == ["view", "error"]
    error = replies[1]
    assert error["code"] == "stale_version"
    # The error carries the fresh view: the first discard is in it, the second is not.
    assert error["view"]["version"] == version + 1
    assert error["view"]["view"]["discard"] == [first]
    assert sorted(error["view"]["view"]["hand"]) == sorted(_without(hand, first))
    assert error["view"]["view"]["turn"] == 2
    # Nobody else heard about the refused move.
    for seat in (2, 3, 4):
        assert harness.last(conns[seat]) is not None
        assert all(m["type"] == "view" for m in harness.received(conns[seat]))


def test_concurrent_moves_on_one_version_apply_exactly_once(harness: Harness) -> None:
    conns, view = _opening(harness, "race")
    version = view["version"]
    tiles = sorted(set(view["view"]["hand"]))[:8]
    assert len(tiles) >= 6
    before = {seat: len(harness.received(c)) for seat, c in conns.items()}
    barrier = threading.Barrier(len(tiles))
    results: list[dict[str, Any]] = []
    failures: list[BaseException] = []

    def move(tile: str) -> None:
        barrier.wait()
        try:
            results.append(
                harness.play(conns[1], "race", version, {"type": "discard", "tile": tile})
            )
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=move, args=(tile,)) for tile in tiles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert failures == [], f"a handler raised: {failures!r}"
    assert results == [{"statusCode": 200}] * len(tiles)
    table = harness.table("race")
    assert table.version == version + 1, "the version moved by exactly one accepted move"
    (log,) = harness.logs("race")
    applied = log.action
    assert applied["type"] == "discard" and applied["tile"] in tiles
    assert table.state is not None
    state = to_json(unpack(table.state))
    assert state["discard"] == [applied["tile"]]
    assert state["ply"] == 1

    replies = harness.received(conns[1])[before[1] :]
    views = [m for m in replies if m["type"] == "view"]
    errors = [m for m in replies if m["type"] == "error"]
    assert len(views) == 1 and views[0]["version"] == version + 1
    assert views[0]["last_action"]["tile"] == applied["tile"]
    assert len(errors) == len(tiles) - 1, "every losing move was answered"
    assert {e["code"] for e in errors} == {"stale_version"}
    assert all(e["view"]["version"] == version + 1 for e in errors)
    for seat in (2, 3, 4):
        pushed = harness.received(conns[seat])[before[seat] :]
        assert [m["version"] for m in pushed if m["type"] == "view"] == [version + 1]
        assert all(m["type"] == "view" for m in pushed)


def test_the_next_move_after_a_race_goes_through(harness: Harness) -> None:
    conns, view = _opening(harness, "after")
    version = view["version"]
    hand = view["view"]["hand"]
    for tile in (hand[0], hand[-1]):
        harness.play(conns[1], "after", version, {"type": "discard", "tile": tile})
    current = harness.last(conns[2])
    assert current is not None and current["version"] == version + 1
    harness.play(conns[2], "after", current["version"], {"type": "draw"})
    assert harness.table("after").version == version + 2
    assert [i.ply for i in harness.logs("after")] == [1, 2]


def _without(hand: list[str], tile: str) -> list[str]:
    rest = list(hand)
    rest.remove(tile)
    return rest
