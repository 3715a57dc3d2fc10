"""The local stack's console: one plain line per event a person follows, errors included."""

from __future__ import annotations

import io
import logging

import pytest

from local.console import ErrorLines, Narrator

pytestmark = pytest.mark.integration

SEATS = {
    "1": {"player_id": "p-ann", "name": "Ann"},
    "2": {"player_id": "bot-1", "name": "Ada (bot)"},
    "3": {"player_id": "p-bob", "name": "Bob"},
    "4": {"player_id": "bot-2", "name": "Bela (bot)"},
}


def test_each_event_a_person_follows_is_one_plain_line() -> None:
    narrator = Narrator()
    table = "abcdef0123456789"
    formed = {"table_id": table, "mode": "one_round", "stake": 0, "seats": SEATS}
    assert narrator.line("TableFormed", formed) == (
        "table abcdef01 formed (one_round): team A Ann & Bob vs team B Ada (bot) & Bela (bot)"
    )
    assert narrator.line("RoundStarted", {"table_id": table, "round": 2}) == (
        "table abcdef01: round 2 started"
    )
    scored = {
        "table_id": table,
        "round": 1,
        "scores": {"A": {"total": 825}, "B": {"total": 1580}},
        "totals": {"A": 825, "B": 1580},
    }
    assert narrator.line("RoundScored", scored) == (
        "table abcdef01: round 1 scored A 825, B 1580; totals A 825, B 1580"
    )
    ended = {"table_id": table, "winner": "B", "totals": {"A": 825, "B": 1580}, "rounds_played": 1}
    assert narrator.line("MatchEnded", ended) == (
        "table abcdef01: match over, team B wins 825 to 1580 after 1 round(s)"
    )
    settled = {
        "table_id": table,
        "purpose": "settlement",
        "changes": {"p-ann": -1000, "bot-1": 1000, "p-bob": -1000, "bot-2": 1000},
    }
    assert narrator.line("LedgerSettled", settled) == (
        "table abcdef01: points settlement: Ada (bot) +1000, Bela (bot) +1000, Ann -1000, Bob -1000"
    )
    seat = {"table_id": table, "player_id": "p-bob", "seat": 3, "connection_id": "c"}
    assert narrator.line("PlayerDisconnected", seat) == (
        "Bob disconnected from table abcdef01 (seat 3)"
    )
    assert narrator.line("PlayerConnected", seat) == "Bob reconnected to table abcdef01 (seat 3)"
    # Connecting to the lobby is not news.
    assert narrator.line("PlayerConnected", {**seat, "table_id": None}) is None


def test_a_handler_error_is_one_line_with_its_service_and_table() -> None:
    from aws_lambda_powertools import Logger

    logger = Logger(service="turn-console-check")
    logger.append_keys(table_id="abcdef0123456789")
    out = io.StringIO()
    formatter = logger.registered_handler.formatter
    logging.getLogger(logger.name).handlers = [ErrorLines(formatter, out)]
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("play failed")
    logger.info("not shown")
    text = out.getvalue()
    assert text == (
        "error in turn-console-check at table abcdef01: play failed: RuntimeError('boom')\n"
    )
    assert not text.startswith("{")
