"""At-least-once delivery: every event type delivered again changes nothing.

EventBridge, SQS and Lambda may all deliver twice. The events are captured as
the consumers received them (a catch-all rule on the bus), then published
again and also handed straight to the handlers as SQS batches.
"""

from __future__ import annotations

from typing import Any

import pytest

from local.dispatcher import LambdaContext
from services.deal import handler as deal_handler
from services.ledger import handler as ledger_handler
from services.score import handler as score_handler
from services.turn import handler as turn_handler
from shared_engine import MatchMode
from tests.integration.harness import EventCapture, Harness, sqs_event

pytestmark = pytest.mark.integration

GAME_EVENTS = ("TableFormed", "RoundStarted", "RoundEnded", "RoundScored", "MatchEnded")
CONSUMER_OF = {
    "TableFormed": deal_handler.events,
    "RoundScored": deal_handler.events,
    "RoundEnded": score_handler.events,
    "MatchEnded": ledger_handler.events,
    "RoundStarted": turn_handler.events,
    "PlayerConnected": turn_handler.events,
    "PlayerDisconnected": turn_handler.events,
}


def republish(harness: Harness, events: list[dict[str, Any]]) -> None:
    for event in events:
        harness.publish(event["detail-type"], event["detail"], event["source"])
    harness.settle()


def redeliver(events: list[dict[str, Any]], *, times: int = 2) -> None:
    """Hand each captured event straight to its consumer, as a redelivered SQS message."""
    for event in events:
        handler = CONSUMER_OF.get(event["detail-type"])
        if handler is None:
            continue
        for _ in range(times):
            result = handler(sqs_event(event, event), LambdaContext("redelivery"))
            assert result == {"batchItemFailures": []}, (event["detail-type"], result)


def by_type(capture: EventCapture, *types: str) -> list[dict[str, Any]]:
    return [e for e in capture.drain() if e["detail-type"] in types]


def scan(harness: Harness, table: str) -> list[dict[str, Any]]:
    """Every item of a table, in a stable order (for before/after comparisons)."""
    items = harness.aws.client("dynamodb").scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(
        items,
        key=lambda i: sorted((k, str(v)) for k, v in i.items() if k in ("pk", "sk", "player_id")),
    )


def test_every_game_event_delivered_again_changes_nothing(harness: Harness) -> None:
    """A one-round match played out by TABLE-2 auto-play (nobody connected), then replayed."""
    capture = harness.capture()
    harness.form_table("dup", ["d1", "d2", "d3", "d4"], MatchMode.ONE_ROUND)
    table = harness.table("dup")
    assert table.status in ("finished", "aborted")
    events = by_type(capture, *GAME_EVENTS)
    seen = {e["detail-type"] for e in events}
    expected = set(GAME_EVENTS) - ({"MatchEnded"} if table.status == "aborted" else set())
    assert expected <= seen, seen
    before = harness.history("dup")
    rounds = [i["sk"]["S"] for i in before if i["sk"]["S"].startswith(("ROUND#", "SCORE#"))]
    settings = harness.aws.settings
    ledger = scan(harness, settings.ledger_table)
    players = scan(harness, settings.players_table)

    republish(harness, events)
    assert harness.history("dup") == before, "a redelivered event changed the table"
    assert scan(harness, settings.ledger_table) == ledger, "MATCH-3: paid twice"

    redeliver(events)
    after = harness.history("dup")
    assert after == before
    assert [i["sk"]["S"] for i in after if i["sk"]["S"].startswith(("ROUND#", "SCORE#"))] == rounds
    assert scan(harness, settings.ledger_table) == ledger, "MATCH-3: paid twice"
    assert scan(harness, settings.players_table) == players, (
        "a redelivered event moved players (TableFormed seats them again at a finished table)"
    )


def test_duplicates_during_a_round_change_nothing(harness: Harness) -> None:
    """TableFormed, RoundStarted and presence events again while round 1 is played."""
    capture = harness.capture()
    conns = harness.start_table("live", ["l1", "l2", "l3", "l4"], MatchMode.ONE_ROUND)
    view = harness.last(conns[1])
    assert view is not None
    harness.play(
        conns[1], "live", view["version"], {"type": "discard", "tile": view["view"]["hand"][0]}
    )
    harness.disconnect(conns[3])  # not seat 3's turn: nothing is auto-played yet
    harness.settle()
    back = harness.connect("l3")
    assert back is not None
    harness.settle()
    table = harness.table("live")
    assert table.connections[3] == back
    events = by_type(
        capture, "TableFormed", "RoundStarted", "PlayerConnected", "PlayerDisconnected"
    )
    assert {e["detail-type"] for e in events} == {
        "TableFormed",
        "RoundStarted",
        "PlayerConnected",
        "PlayerDisconnected",
    }
    before = harness.history("live")

    republish(harness, events)
    redeliver(events)

    assert harness.history("live") == before
    after = harness.table("live")
    assert after.version == table.version
    assert after.connections == {1: conns[1], 2: conns[2], 3: back, 4: conns[4]}
    assert [i["sk"]["S"] for i in harness.items("live", "ROUND#")] == ["ROUND#0001"]
    # The duplicate PlayerDisconnected of the old connection did not mark seat 3 absent.
    latest = harness.last(conns[1])
    assert latest is not None and latest["seats"]["3"]["connected"] is True


def test_a_late_table_formed_does_not_seat_players_back_at_an_old_table(harness: Harness) -> None:
    """Players finish a match and sit at a new table; the old TableFormed comes again.

    The deal service must not move them back (players table), or they would
    resync to the old, finished table and never be reconnected to the new one.
    """
    capture = harness.capture()
    players = ["o1", "o2", "o3", "o4"]
    harness.form_table("old", players, MatchMode.ONE_ROUND)  # auto-played to its end
    assert harness.table("old").status in ("finished", "aborted")
    (formed_old,) = by_type(capture, "TableFormed")
    conns = harness.start_table("new", players, MatchMode.ONE_ROUND)
    for player in players:
        seated = harness.presence.get_player(player)
        assert seated is not None and seated.table_id == "new"
    old_before = harness.history("old")

    republish(harness, [formed_old])

    for seat, player in enumerate(players, start=1):
        seated = harness.presence.get_player(player)
        assert seated is not None
        assert (seated.table_id, seated.seat) == ("new", seat), f"{player} was moved back"
    assert harness.history("old") == old_before
    harness.send(conns[1], {"action": "sync"})
    reply = harness.received(conns[1])[-1]
    assert reply["type"] == "view" and reply["table_id"] == "new"
