"""Turn timers (TABLE-2): an idle connected seat is auto-played; old timers do nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.dispatcher import LambdaContext
from services.turn import handler as turn_handler
from shared_engine import MatchMode, loads
from tests.integration.harness import Harness, sqs_event

pytestmark = pytest.mark.integration

PLAYERS = ["w1", "w2", "w3", "w4"]


def _fire(table_id: str, turn_started: int) -> dict[str, Any]:
    """A timer's message, delivered straight to the timer handler (as the queue would)."""
    body = {"table_id": table_id, "turn_started": turn_started}
    return turn_handler.timers(sqs_event(body), LambdaContext("timers"))


def _entries(harness: Harness, table_id: str) -> list[tuple[int, str, bool]]:
    return [
        (int(i["seat"]["N"]), json.loads(i["action"]["S"])["type"], i["auto"]["BOOL"])
        for i in harness.logs(table_id)
    ]


def test_an_idle_seat_is_auto_played_when_its_timer_fires(harness: Harness) -> None:
    conns = harness.start_table("idle", PLAYERS, MatchMode.ONE_ROUND)
    table = harness.table("idle")
    assert f"turn-idle-{table.turn_started}" in harness.schedules(), "a durable timer is set"
    assert table.turn_deadline is not None

    assert harness.aws.dispatcher.fire_timers(all_due=True) == 1
    harness.settle()

    after = harness.table("idle")
    assert after.version == table.version + 1
    assert _entries(harness, "idle") == [(1, "discard", True)]
    assert loads(after.state or "").turn == 2
    assert after.turn_started == after.version
    assert f"turn-idle-{after.turn_started}" in harness.schedules(), "the next turn is timed"
    for seat, conn in conns.items():
        view = harness.last(conn)
        assert view is not None and view["version"] == after.version, seat
        assert view["last_action"]["auto"] is True


def test_a_timer_for_a_turn_already_played_does_nothing(harness: Harness) -> None:
    conns = harness.start_table("late", PLAYERS, MatchMode.ONE_ROUND)
    first = harness.table("late")
    view = harness.last(conns[1])
    assert view is not None
    harness.play(conns[1], "late", view["version"], view["view"]["legal_actions"][0])
    played = harness.table("late")
    assert played.version == first.version + 1
    received = {seat: len(harness.received(c)) for seat, c in conns.items()}
    before = harness.store.history("late")

    assert _fire("late", first.turn_started) == {"batchItemFailures": []}
    assert _fire("late", first.turn_started) == {"batchItemFailures": []}
    assert _fire("late", 999) == {"batchItemFailures": []}
    assert _fire("no-such-table", 1) == {"batchItemFailures": []}

    assert harness.store.history("late") == before
    assert {seat: len(harness.received(c)) for seat, c in conns.items()} == received


def test_a_timer_fired_twice_plays_the_turn_once(harness: Harness) -> None:
    harness.start_table("twice", PLAYERS, MatchMode.ONE_ROUND)
    table = harness.table("twice")
    assert _fire("twice", table.turn_started) == {"batchItemFailures": []}
    assert _fire("twice", table.turn_started) == {"batchItemFailures": []}
    assert _entries(harness, "twice") == [(1, "discard", True)]
    assert harness.table("twice").version == table.version + 1


def test_a_timer_after_the_draw_plays_only_the_discard(harness: Harness) -> None:
    conns = harness.start_table("half", PLAYERS, MatchMode.ONE_ROUND)
    view = harness.last(conns[1])
    assert view is not None
    harness.play(conns[1], "half", view["version"], view["view"]["legal_actions"][0])
    view = harness.last(conns[2])
    assert view is not None
    harness.play(conns[2], "half", view["version"], {"type": "draw"})
    table = harness.table("half")
    assert loads(table.state or "").phase == "play"

    assert _fire("half", table.turn_started) == {"batchItemFailures": []}

    assert _entries(harness, "half") == [
        (1, "discard", False),
        (2, "draw", False),
        (2, "discard", True),
    ]
    assert loads(harness.table("half").state or "").turn == 3


def test_a_malformed_timer_message_is_reported_not_swallowed(harness: Harness) -> None:
    harness.start_table("junk", PLAYERS, MatchMode.ONE_ROUND)
    before = harness.store.history("junk")
    event = sqs_event({"table_id": "junk"}, {"table_id": "junk", "turn_started": 999})
    result = turn_handler.timers(event, LambdaContext("timers"))
    assert result == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert harness.store.history("junk") == before
