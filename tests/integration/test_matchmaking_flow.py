"""Matchmaking on the real state machine (moto executes it) and the ledger."""

from __future__ import annotations

import time

import pytest

from services.ledger.book import Ledger
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration


def settle_until(harness: Harness, done, seconds: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + seconds
    while time.time() < deadline:
        harness.settle()
        if done():
            return
        time.sleep(0.1)
    raise AssertionError("not reached in time")


def test_four_players_queue_and_get_one_table(harness: Harness) -> None:
    conns = [harness.connect(f"q{i}") for i in range(4)]
    for conn in conns:
        assert conn is not None
        harness.send(conn, {"action": "queue", "mode": "one_round"})
    settle_until(harness, lambda: all(harness.last(c) for c in conns if c))
    tables = {harness.last(c)["table_id"] for c in conns if c}  # type: ignore[index]
    assert len(tables) == 1


def test_arena_escrow(harness: Harness) -> None:
    ledger = Ledger(harness.aws.client("dynamodb"), harness.aws.settings.ledger_table)
    from services.ledger.book import Posting

    for i in range(4):
        ledger.book([Posting(f"a{i}", "welcome", "welcome", points=1000, jokers=1)], 0)
    conns = [harness.connect(f"a{i}") for i in range(4)]
    for conn in conns:
        assert conn is not None
        harness.send(conn, {"action": "queue", "mode": "arena", "stake": 500})
    settle_until(harness, lambda: all(harness.last(c) for c in conns if c))
    assert ledger.balance("a0").points == 500
