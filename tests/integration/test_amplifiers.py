"""Messages that could make the server work or write for others: each is answered cheaply.

A replayed move answers its sender only, a flood is refused in memory, invite
codes cannot be guessed at speed, and a client message of the wrong type is
``malformed`` before anything is read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.harness import Harness
from tests.integration.machine import fresh_harness

pytestmark = pytest.mark.integration


@pytest.fixture
def roomy(moto_url: str) -> Iterator[Harness]:
    """Flood control far above the replays these tests send at machine speed."""
    with fresh_harness(moto_url, env={"CANASTA_MESSAGE_BURST": "1000"}) as harness:
        yield harness


def frames(harness: Harness, conns: dict[int, str]) -> dict[int, int]:
    return {seat: len(harness.received(conn)) for seat, conn in conns.items()}


def test_replaying_ones_last_move_answers_the_sender_only(roomy: Harness) -> None:
    harness = roomy
    conns = harness.start_table("rp", ["r1", "r2", "r3", "r4"])
    first = harness.last(conns[1])
    assert first is not None
    discard = next(a for a in first["view"]["legal_actions"] if a["type"] == "discard")
    move = {"action": "play", "table_id": "rp", "version": first["version"], "move": discard}
    harness.send(conns[1], move)
    harness.settle()
    version = harness.table("rp").version
    before = frames(harness, conns)

    for number in range(100):
        harness.send(conns[1], {**move, "cid": f"replay-{number}"})
    harness.settle()

    after = frames(harness, conns)
    extra = {seat: after[seat] - before[seat] for seat in conns}
    replies = harness.received(conns[1])[before[1] :]
    assert Counter(m["type"] for m in replies) == {"error": 100}
    assert {m["code"] for m in replies} == {"stale_version"}
    assert [m["cid"] for m in replies] == [f"replay-{n}" for n in range(100)]
    assert all(m["view"]["version"] == version for m in replies)
    assert extra == {1: 100, 2: 0, 3: 0, 4: 0}, "no frame to any other seat"
    assert harness.table("rp").version == version, "nothing changed"


def test_a_replay_after_a_lost_answer_repairs_once(harness: Harness) -> None:
    """The move was written but nothing after it ran (its invocation died): the first replay
    runs what follows the write (everyone's views) once; the next replays answer the sender."""
    from services.turn import handler as turn_handler

    conns = harness.start_table("rq", ["q1", "q2", "q3", "q4"])
    first = harness.last(conns[1])
    assert first is not None
    discard = next(a for a in first["view"]["legal_actions"] if a["type"] == "discard")
    move = {"action": "play", "table_id": "rq", "version": first["version"], "move": discard}
    service = turn_handler.service()
    after_write = service._after

    def lost(*_: Any) -> None:
        raise TimeoutError("the invocation ended after the write")

    service._after = lost  # type: ignore[assignment,method-assign]
    try:
        harness.send(conns[1], move)
    finally:
        service._after = after_write  # type: ignore[method-assign]
    version = harness.table("rq").version
    assert version == first["version"] + 1, "the move was written"
    assert all((harness.last(c) or {}).get("version") == first["version"] for c in conns.values())

    before = frames(harness, conns)
    for _ in range(5):
        harness.send(conns[1], move)
    harness.settle()
    extra = {seat: len(harness.received(c)) - before[seat] for seat, c in conns.items()}
    assert extra == {1: 5 + 1, 2: 1, 3: 1, 4: 1}, "five answers and one repair"
    assert all((harness.last(c) or {}).get("version") == version for c in conns.values())


# --- flood control ----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_connection_flooding_a_route_is_refused_without_reading_anything(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flood control (defaults: a burst of 40, then 10 a second): the refused messages read
    and write nothing; another connection, and the same one after a pause, are served."""
    from services.common.settings import Settings
    from services.turn import handler as turn_handler

    settings = Settings()
    assert (settings.message_burst, settings.messages_per_second) == (40, 10.0)
    conns = harness.start_table("fl", ["f1", "f2", "f3", "f4"])
    service = turn_handler.service()
    clock = Clock()
    monkeypatch.setattr(service._flood, "_clock", clock)
    reads: list[str] = []
    get_table = service._store.get_table
    monkeypatch.setattr(
        service._store, "get_table", lambda table_id: reads.append(table_id) or get_table(table_id)
    )
    before = len(harness.received(conns[2]))
    sync = {"action": "sync"}
    for number in range(100):
        harness.send(conns[2], {**sync, "cid": f"s-{number}"})
    answers = harness.received(conns[2])[before:]
    assert [m["type"] for m in answers[:40]] == ["view"] * 40
    refused = answers[40:]
    assert [m.get("code") for m in refused] == ["rate_limited"] * 60
    assert [m["cid"] for m in refused] == [f"s-{n}" for n in range(40, 100)]
    assert len(reads) == 40, "a refused message reads nothing"

    # Another connection has its own bucket (its answer, by its cid, is the view it asked
    # for, not the view pushed before the flood); a pause refills this one at the steady rate.
    harness.send(conns[3], {**sync, "cid": "other"})
    (answer,) = [m for m in harness.received(conns[3]) if m.get("cid") == "other"]
    assert (answer["type"], answer.get("seat")) == ("view", 3), answer
    clock.t += 0.5  # five messages' worth
    for _ in range(6):
        harness.send(conns[2], {"action": "ping"})
    tail = [m["type"] for m in harness.received(conns[2])[-6:]]
    assert tail == ["pong"] * 5 + ["error"]


def test_the_lobby_routes_are_flood_controlled_too(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.matchmaking import handler as matchmaking_handler

    conn = harness.connect("lf")
    assert conn is not None
    service = matchmaking_handler.service()
    monkeypatch.setattr(service._flood, "_clock", Clock())
    for _ in range(45):
        harness.send(conn, {"action": "balance"})
    kinds = Counter(m.get("code", m["type"]) for m in harness.received(conn))
    assert (kinds["balance"], kinds["rate_limited"]) == (40, 5)


# --- invite codes ----------------------------------------------------------------------------


def test_invite_codes_tried_are_limited_per_player_across_connections(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.matchmaking import handler as matchmaking_handler
    from tests.services.fakes import FakeClock

    clock = FakeClock()
    monkeypatch.setattr(matchmaking_handler.service().lobbies, "_clock", clock)
    host = harness.connect("ih")
    assert host is not None
    harness.send(host, {"action": "create_table", "mode": "one_round"})
    code = (harness.last(host, "lobby") or {})["code"]

    guesser = harness.connect("ig")
    assert guesser is not None
    wrong = next(c for c in ("ZZZZZZ", "YYYYYY", "XXXXXX") if c != code)
    for _ in range(12):
        harness.send(guesser, {"action": "join_table", "code": wrong})
    # The thirteenth try in ten minutes is refused, the right code too, and a new
    # connection of the same player does not start again.
    harness.send(guesser, {"action": "join_table", "code": code, "cid": "right"})
    again = harness.connect("ig")
    assert again is not None
    harness.send(again, {"action": "join_table", "code": code})
    codes = [m.get("code") for m in harness.received(guesser) if m["type"] == "error"]
    assert codes == ["unknown_code"] * 12 + ["rate_limited"]
    assert (harness.last(guesser, "error") or {}).get("cid") == "right"
    assert (harness.last(again, "error") or {}).get("code") == "rate_limited"
    assert [p for p in (harness.last(host, "lobby") or {})["seats"].values() if p] == [
        {"player_id": "ih", "name": "ih", "bot": False}
    ]
    # Another player is not limited by it; the next window lets the guesser try again.
    friend = harness.connect("if")
    assert friend is not None
    harness.send(friend, {"action": "join_table", "code": code})
    assert (harness.last(friend, "lobby") or {}).get("code") == code
    clock.advance(600)
    harness.send(again, {"action": "join_table", "code": code})
    assert (harness.last(again, "lobby") or {}).get("code") == code


# --- strict types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"action": "play", "table_id": "st", "version": "5", "move": {"type": "draw"}},
        {"action": "play", "table_id": "st", "version": True, "move": {"type": "draw"}},
        {"action": "play", "table_id": "st", "version": 5.0, "move": {"type": "draw"}},
        {"action": "play", "table_id": 5, "version": 5, "move": {"type": "draw"}},
        {"action": "queue", "mode": "arena", "stake": "500"},
        {"action": "queue", "mode": "arena", "stake": True},
        {"action": "queue", "mode": "arena", "stake": 500.0},
        {"action": "join_table", "code": 123456},
        {"action": "sync", "cid": 7},
    ],
)
def test_client_messages_are_strictly_typed(harness: Harness, message: dict[str, Any]) -> None:
    """The protocol's types, not what a lenient parser could make of them: ``malformed``."""
    conns = harness.start_table("st", ["s1", "s2", "s3", "s4"])
    table = harness.table("st")
    before = len(harness.received(conns[1]))
    harness.send(conns[1], message)
    (answer,) = harness.received(conns[1])[before:]
    assert (answer["type"], answer["code"]) == ("error", "malformed"), answer
    assert harness.table("st") == table
    assert harness.items("st", "LOG") == [] or len(harness.logs("st")) == 0
