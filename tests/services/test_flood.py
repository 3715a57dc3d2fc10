"""Flood control's token buckets: burst, steady rate, a bounded memory, and the key: the
connection that sent the message, on the turn and the lobby routes alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from services.common.flood import FloodControl
from services.common.memory_storage import MemoryStorage
from services.matchmaking.root import compose
from services.turn.app import TurnService
from tests.services.conftest import build
from tests.services.fakes import RecordingPusher

pytestmark = pytest.mark.unit


Route = tuple[Callable[[tuple[str, str] | None, str, str | None], None], str, str]
"""A route's ``receive``, the action a connection sends it, and the answer's type."""


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_burst_then_the_steady_rate() -> None:
    clock = Clock()
    flood = FloodControl(rate=2.0, burst=3, kept=10, clock=clock)
    assert [flood.allow("c") for _ in range(4)] == [True, True, True, False]
    clock.t += 0.5  # one message's worth at 2 a second
    assert [flood.allow("c") for _ in range(2)] == [True, False]
    clock.t += 100  # refilled to the burst, no more
    assert [flood.allow("c") for _ in range(4)] == [True, True, True, False]


def test_a_refused_message_costs_nothing_and_time_alone_refills() -> None:
    clock = Clock()
    flood = FloodControl(rate=1.0, burst=1, kept=10, clock=clock)
    assert flood.allow("c")
    for _ in range(90):
        clock.t += 0.01
        assert not flood.allow("c")
    clock.t += 0.11  # one second since the last allowed message, refusals or not
    assert flood.allow("c")


def test_buckets_are_per_connection_and_bounded() -> None:
    clock = Clock()
    flood = FloodControl(rate=1.0, burst=1, kept=3, clock=clock)
    assert flood.allow("a") and not flood.allow("a")
    assert flood.allow("b")
    for number in range(1000):
        flood.allow(f"new-{number}")
    assert len(flood) == 3
    # "a" was forgotten: it starts again with a full bucket (the bound's price).
    assert flood.allow("a")


# --- the key: each connection's own bucket, whoever holds it ------------------------------


def _turn(deps: dict[str, Any], storage: MemoryStorage, flood: FloodControl) -> Route:
    """The turn routes' receive, and the message a connection may send with no table."""
    return build(TurnService, deps, flood=flood).receive, "ping", "pong"


def _lobby(deps: dict[str, Any], storage: MemoryStorage, flood: FloodControl) -> Route:
    """The lobby routes' receive (matchmaking's graph, as its root composes it)."""
    service = compose(
        storage=storage,
        ledger=deps["ledger"],
        pusher=deps["views"],
        machine=None,
        state_machine_arn=None,
        clock=deps["clock"],
        telemetry=deps["telemetry"],
        queue_seconds=120,
        arena_stakes=(100,),
        max_message_bytes=deps["max_message_bytes"],
        flood=flood,
    )
    return service.receive, "balance", "balance"


@pytest.mark.parametrize("route", [_turn, _lobby], ids=["turn", "lobby"])
def test_every_connection_has_a_bucket_of_its_own_even_one_player_s_tabs(
    route: Callable[[dict[str, Any], MemoryStorage, FloodControl], Route],
    deps: dict[str, Any],
    storage: MemoryStorage,
    pusher: RecordingPusher,
) -> None:
    """The bucket is the connection's: one connection's flood refuses its own messages only,
    never another player's, nor another connection (a second tab) of the same player.
    Each answer is matched to the message it answers by its ``cid``."""
    flood = FloodControl(rate=1.0, burst=2, kept=10, clock=Clock())
    receive, action, answer = route(deps, storage, flood)

    def send(player: str, connection_id: str, cid: str) -> str:
        receive((player, player.upper()), connection_id, json.dumps({"action": action, "cid": cid}))
        (reply,) = [m for m in pusher.to(connection_id) if m.get("cid") == cid]
        return str(reply.get("code", reply["type"]))

    assert [send("p2", "c2", f"flood-{n}") for n in range(3)] == [answer, answer, "rate_limited"]
    assert send("p3", "c3", "other-player") == answer
    assert send("p2", "c2-tab", "other-tab") == answer
    assert send("p2", "c2", "flood-3") == "rate_limited", "the flooding connection waits"
