"""Correlation ids: every answer echoes the ``cid`` of the message it answers; pushes carry none.

Played through the real handlers on the local AWS: a friends table formed by
four joins, each answered by its own ``lobby``; the fourth join's answer is
the ``started`` lobby; a move's answer is the mover's view of the version it
made, while the other seats get that version without ``cid``; refusals, even
of a message that did not parse, echo the ``cid`` when it is itself valid.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.harness import Harness
from tests.integration.machine import executions, local_harness, settle_until

pytestmark = pytest.mark.integration


@pytest.fixture
def mm(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url) as harness:
        yield harness


def _open(harness: Harness, player_id: str) -> str:
    connection = harness.connect(player_id)
    assert connection is not None
    return connection


def _answer(harness: Harness, connection: str, cid: str) -> dict[str, Any]:
    (answer,) = [m for m in harness.received(connection) if m.get("cid") == cid]
    return answer


def test_lobby_answers_echo_the_cid_and_the_fourth_join_gets_the_started_lobby(
    mm: Harness,
) -> None:
    players = ["k1", "k2", "k3", "k4"]
    conns = {p: _open(mm, p) for p in players}
    mm.send(conns["k1"], {"action": "create_table", "mode": "one_round", "cid": "create"})
    lobby = _answer(mm, conns["k1"], "create")
    assert (lobby["type"], lobby["status"], lobby["you"], lobby["host"]) == (
        "lobby",
        "forming",
        "k1",
        "k1",
    )
    for p in players[1:]:
        mm.send(conns[p], {"action": "join_table", "code": lobby["code"], "cid": f"join-{p}"})
    last = _answer(mm, conns["k4"], "join-k4")
    assert (last["type"], last["status"], last["you"]) == ("lobby", "started", "k4")
    assert last["table_id"].startswith(f"f-{lobby['code']}-")
    assert _answer(mm, conns["k2"], "join-k2")["status"] == "forming"
    for p in players[:3]:
        started = [m for m in mm.received(conns[p]) if m.get("status") == "started"]
        assert len(started) == 1 and "cid" not in started[0], started
        assert started[0]["you"] == p and started[0]["table_id"] == last["table_id"]

    settle_until(mm, lambda: all(mm.last(c) is not None for c in conns.values()))
    views = {p: mm.last(conns[p]) for p in players}
    assert all(v is not None and "cid" not in v for v in views.values())
    first = views["k1"]
    assert first is not None
    mover = next(p for p, v in views.items() if v and v["seat"] == first["view"]["turn"])
    other = next(p for p in players if p != mover)
    view = views[mover]
    assert view is not None
    move = next(a for a in view["view"]["legal_actions"] if a["type"] == "discard")
    base = {"action": "play", "table_id": view["table_id"], "move": move}

    mm.send(conns[other], {**base, "version": view["version"], "cid": "not-mine"})
    refused = _answer(mm, conns[other], "not-mine")
    assert (refused["type"], refused["code"]) == ("error", "not_your_turn")

    mm.send(conns[mover], {**base, "version": view["version"], "cid": "my-move"})
    answer = _answer(mm, conns[mover], "my-move")
    assert (answer["type"], answer["version"]) == ("view", view["version"] + 1)
    pushed = [m for m in mm.received(conns[other]) if m.get("version") == answer["version"]]
    assert pushed and all("cid" not in m for m in pushed)

    mm.send(conns[mover], {**base, "version": view["version"], "cid": "again"})
    stale = _answer(mm, conns[mover], "again")
    assert (stale["code"], stale["view"]["version"]) == ("stale_version", answer["version"])


def test_every_other_answer_echoes_the_cid(mm: Harness) -> None:
    conn = _open(mm, "e1")
    asks = {
        "hello": ({"action": "hello"}, "welcome"),
        "ping": ({"action": "ping"}, "pong"),
        "sync": ({"action": "sync"}, "error"),
        "balance": ({"action": "balance"}, "balance"),
        "profile": ({"action": "profile"}, "profile"),
        "board": ({"action": "leaderboard", "mode": "arena"}, "leaderboard"),
        "replay": ({"action": "replay", "table_id": "nowhere"}, "error"),
        "leave": ({"action": "leave"}, "error"),
        "bots": ({"action": "fill_bots"}, "error"),
        "queue": ({"action": "queue", "mode": "one_round"}, "queued"),
        "bad-stake": ({"action": "queue", "mode": "arena", "stake": 7}, "error"),
        "left": ({"action": "leave"}, "queue_left"),
        "unknown": ({"action": "dance"}, "error"),
        "malformed": ({"action": "queue", "mode": "forever"}, "error"),
    }
    for cid, (message, kind) in asks.items():
        mm.send(conn, {**message, "cid": cid})
        assert _answer(mm, conn, cid)["type"] == kind, (cid, mm.received(conn))
    welcome = _answer(mm, conn, "hello")
    assert (welcome["player_id"], welcome["protocol"]) == ("e1", 1)
    assert _answer(mm, conn, "unknown")["code"] == "unknown_action"
    assert _answer(mm, conn, "malformed")["code"] == "malformed"
    # A cid that is not valid is not echoed: the refusal says why the message was refused.
    mm.send(conn, {"action": "ping", "cid": "x" * 65})
    last = mm.received(conn)[-1]
    assert (last["type"], last["code"], "cid" in last) == ("error", "malformed", False)
    # The ticket the queue started ends once it sees the player gone.
    settle_until(mm, lambda: all(e["status"] != "RUNNING" for e in executions(mm)))
