"""A move written whose follow-through was lost (the invocation died after the commit): the
client re-sends it, and that re-send alone runs what follows the write, once. Any other stale
move, or the same move from another seat, is answered ``stale_version`` and nothing more, so
no client can make the server push to the other seats by sending old moves.

``tests/integration/test_amplifiers.py`` runs the repair through the handlers on DynamoDB.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.common.protocol import Play
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.turn.app import TurnService
from shared_engine import RoundState
from tests.services import test_turn
from tests.services.fakes import RecordingPusher
from tests.services.test_turn import _discard, _play

pytestmark = pytest.mark.unit

turn = test_turn.turn
dealt = test_turn.dealt
"""The turn service and table t1 as ``test_turn.py`` wires and deals them (seat 1 must
discard first, DEAL-2)."""


def _write_and_lose_the_answer(
    turn: TurnService, move: dict[str, Any] | Play, seat: int = 1
) -> None:
    """The seat's move (or message) is committed, then the invocation ends before anything
    follows it."""
    follow_through = turn._after

    def lost(*_: Any) -> None:
        raise TimeoutError("the invocation ended after the write")

    turn._after = lost  # type: ignore[assignment]
    try:
        with pytest.raises(TimeoutError):
            message = move if isinstance(move, Play) else _play("t1", 1, move)
            turn.play(f"p{seat}", f"c{seat}", message)
    finally:
        turn._after = follow_through


def _others_frames(pusher: RecordingPusher, sender: str) -> int:
    """Frames pushed to every seat but the sender's."""
    return sum(len(pusher.to(f"c{seat}")) for seat in (1, 2, 3, 4) if f"c{seat}" != sender)


@pytest.mark.parametrize(
    ("player", "connection", "which"),
    [("p1", "c1", "another tile"), ("p2", "c2", "the same tile")],
    ids=["seat 1, another discard", "seat 2, seat 1's discard"],
)
def test_a_stale_move_other_than_the_lost_one_repairs_nothing(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
    dealt: RoundState,
    player: str,
    connection: str,
    which: str,
) -> None:
    written = _discard(dealt, 1, 0)
    _write_and_lose_the_answer(turn, written)
    pusher.clear()
    other = _discard(dealt, 1, 1) if which == "another tile" else written
    assert other != written or player != "p1"

    turn.play(player, connection, _play("t1", 1, other))

    assert [m["code"] for m in pusher.to(connection, "error")] == ["stale_version"]
    assert _others_frames(pusher, connection) == 0
    assert telemetry.metrics.get("answers_repaired", 0) == 0
    (logged,) = store.history.records("t1").turns
    assert not logged.repaired, "the lost move's repair is still to come"


def test_the_lost_move_re_sent_repairs_once(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
    dealt: RoundState,
) -> None:
    written = _discard(dealt, 1, 0)
    _write_and_lose_the_answer(turn, written)
    pusher.clear()

    for _ in range(3):
        turn.play("p1", "c1", _play("t1", 1, written))

    assert telemetry.metrics["answers_repaired"] == 1
    assert _others_frames(pusher, "c1") == 3, "each other seat's view, once"
    for seat in (2, 3, 4):
        (view,) = pusher.to(f"c{seat}")
        assert [m["type"] for m in view["moves"]] == ["discard"], "with the turn's moves"
    (logged,) = store.history.records("t1").turns
    assert logged.repaired


def test_a_move_within_a_turn_re_sent_is_answered_stale_and_repairs_nothing(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
    dealt: RoundState,
) -> None:
    """Nothing follows a draw but its answer, and ``stale_version`` carries the view: the
    other seats hear nothing of it until seat 2's turn ends."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    follow_through = turn._after
    turn._after = lambda *_: None  # type: ignore[assignment]
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    turn._after = follow_through
    pusher.clear()

    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))

    (answer,) = pusher.sent
    assert answer[0] == "c2" and answer[1]["code"] == "stale_version"
    assert answer[1]["view"]["version"] == 3 and answer[1]["view"]["view"]["phase"] == "play"
    assert telemetry.metrics.get("answers_repaired", 0) == 0
    assert [t.repaired for t in store.history.records("t1").turns] == [False]
