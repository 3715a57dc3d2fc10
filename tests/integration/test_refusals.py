"""Bad client messages: each is refused with its code, to its sender only, and changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from services.common.protocol import ServerMessage
from shared_engine import MatchMode
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration

SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(ServerMessage)
ALL_TILES = [f"{r}{c}" for r in range(1, 14) for c in "RYKB"] + ["JK"]


def _setup(
    harness: Harness, table_id: str, *, elsewhere: bool = False
) -> tuple[dict[int, str], dict[int, str], dict[str, Any]]:
    """Table ``table_id`` just dealt; with ``elsewhere``, a second table of other players."""
    conns = harness.start_table(table_id, ["f1", "f2", "f3", "f4"], MatchMode.ONE_ROUND)
    others = (
        harness.start_table("elsewhere", ["g1", "g2", "g3", "g4"], MatchMode.ONE_ROUND)
        if elsewhere
        else {}
    )
    view = harness.last(conns[1])
    assert view is not None and view["view"]["phase"] == "first_discard"
    return conns, others, view


def _refused(
    harness: Harness,
    conns: dict[int, str],
    table_id: str,
    sender: int,
    body: dict[str, Any] | str,
) -> dict[str, Any]:
    """Send; check the table and everyone else's inbox are untouched; return the one reply."""
    before_item = harness.item(table_id, "TABLE")
    before_logs = harness.logs(table_id)
    counts = {seat: len(harness.received(c)) for seat, c in conns.items()}
    result = harness.send(conns[sender], body)
    assert result == {"statusCode": 200}
    after_item = harness.item(table_id, "TABLE")
    assert after_item is not None and before_item is not None
    for key in ("version", "state", "turn_started", "status", "round"):
        assert after_item.get(key) == before_item.get(key), key
    assert harness.logs(table_id) == before_logs
    for seat, conn in conns.items():
        new = harness.received(conn)[counts[seat] :]
        if seat == sender:
            assert len(new) == 1, new
        else:
            assert new == [], f"seat {seat} heard about seat {sender}'s refused message"
    (reply,) = harness.received(conns[sender])[counts[sender] :]
    assert reply["type"] == "error"
    return reply


def test_each_bad_message_gets_its_code(harness: Harness) -> None:
    conns, _, view = _setup(harness, "bad", elsewhere=True)
    v = view["version"]
    hand = view["view"]["hand"]
    absent = next(t for t in ALL_TILES if t not in hand)

    def play(move: Any, **extra: Any) -> dict[str, Any]:
        return {"action": "play", "table_id": "bad", "version": v, "move": move, **extra}

    cases: list[tuple[str, int, dict[str, Any] | str, str]] = [
        ("discard without a tile", 1, play({"type": "discard"}), "malformed"),
        ("not a tile", 1, play({"type": "discard", "tile": "99Z"}), "malformed"),
        ("not JSON", 1, "{not json", "malformed"),
        ("JSON but not an object", 1, '["play"]', "malformed"),
        (
            "a play with an extra field",
            1,
            play({"type": "discard", "tile": hand[0]}, seat=2),
            "malformed",
        ),
        ("a move with an extra field", 1, play({"type": "draw", "tile": hand[0]}), "malformed"),
        (
            "a negative version",
            1,
            play({"type": "discard", "tile": hand[0]}) | {"version": -1},
            "malformed",
        ),
        ("a table id with a slash", 1, play({"type": "draw"}) | {"table_id": "a/b"}, "malformed"),
        (
            "oversized",
            1,
            play({"type": "discard", "tile": hand[0]}, pad="x" * 9000),
            "message_too_large",
        ),
        ("unknown action", 1, {"action": "dance", "table_id": "bad"}, "unknown_action"),
        ("no action at all", 1, {"table_id": "bad", "version": v}, "unknown_action"),
        ("out of turn", 2, play({"type": "draw"}), "not_your_turn"),
        ("out of turn, a discard", 3, play({"type": "discard", "tile": "5R"}), "not_your_turn"),
        ("another table", 1, play({"type": "draw"}) | {"table_id": "elsewhere"}, "not_seated"),
        ("no such table", 1, play({"type": "draw"}) | {"table_id": "nowhere"}, "not_seated"),
        (
            "an old version",
            1,
            play({"type": "discard", "tile": hand[0]}) | {"version": v - 1},
            "stale_version",
        ),
        (
            "a future version",
            1,
            play({"type": "discard", "tile": hand[0]}) | {"version": v + 5},
            "stale_version",
        ),
        ("drawing in the first turn", 1, play({"type": "draw"}), "wrong_phase"),
        ("a tile not in hand", 1, play({"type": "discard", "tile": absent}), "tile_not_in_hand"),
    ]
    wrong: list[str] = []
    for name, sender, body, code in cases:
        reply = _refused(harness, conns, "bad", sender, body)
        if reply["code"] != code:
            wrong.append(f"{name}: {reply['code']} instead of {code} ({reply['message']})")
        if code == "stale_version":
            assert reply["view"]["version"] == v and reply["view"]["seat"] == sender
    assert wrong == []

    # After all that, the right move still goes through.
    harness.play(conns[1], "bad", v, {"type": "discard", "tile": hand[0]})
    assert harness.table("bad").version == v + 1


def test_every_refusal_is_a_valid_server_message(harness: Harness) -> None:
    """Clients parse what they receive with the protocol's models.

    The ``view`` that comes with ``stale_version`` must be a whole
    ``ViewMessage``: ``went_out`` and ``round_scores`` are required (null
    while the round runs), so a client validating the message rejects it.
    """
    conns, _, view = _setup(harness, "proto")
    v = view["version"]
    bodies: list[tuple[int, dict[str, Any] | str]] = [
        (1, "{"),
        (2, {"action": "play", "table_id": "proto", "version": v, "move": {"type": "draw"}}),
        (1, {"action": "play", "table_id": "nowhere", "version": v, "move": {"type": "draw"}}),
        (1, {"action": "play", "table_id": "proto", "version": v + 1, "move": {"type": "draw"}}),
    ]
    for sender, body in bodies:
        reply = _refused(harness, conns, "proto", sender, body)
        SERVER_MESSAGE.validate_python(reply)


def test_an_unknown_move_type_is_malformed(harness: Harness) -> None:
    """SCENARIOS.md: ``malformed`` is anything that is not a well-formed action.

    ``unknown_action`` is for a message whose ``action`` (the route) is unknown;
    a ``play`` whose ``move`` has an unknown ``type`` is a malformed action, as
    the engine's own ``parse_action`` says for the very same move.
    """
    conns, _, view = _setup(harness, "kind")
    for move in ({"type": "fly"}, {}):
        body = {"action": "play", "table_id": "kind", "version": view["version"], "move": move}
        reply = _refused(harness, conns, "kind", 1, body)
        assert reply["code"] == "malformed", json.dumps(reply)


def test_a_refused_message_from_another_table_reaches_no_one_here(harness: Harness) -> None:
    conns, others, view = _setup(harness, "near", elsewhere=True)
    counts = {seat: len(harness.received(c)) for seat, c in conns.items()}
    harness.send(
        others[1],
        {
            "action": "play",
            "table_id": "near",
            "version": view["version"],
            "move": {"type": "discard", "tile": view["view"]["hand"][0]},
        },
    )
    reply = harness.received(others[1])[-1]
    assert reply["type"] == "error" and reply["code"] == "not_seated"
    assert {seat: len(harness.received(c)) for seat, c in conns.items()} == counts
    assert harness.table("near").version == view["version"]
