"""What a match's end books: what the games table's records say, whatever the event says.

``MatchEnded`` and ``TableAborted`` only name a table: its item (ended or aborted, who
sat, mode, stake) and its scored rounds (the totals after each) are the settlement's
facts, and the rounds paid are those the rules let the match run (MATCH-1, MATCH-2).
An event the records do not back books nothing, is counted, and is not retried.
``tests/integration/test_ledger_settlement.py`` plays the same through the handler.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.common.events import LedgerSettled, MatchEnded, SeatPlayer, TableAborted
from services.common.ledger import (
    Balance,
    Ledger,
    Posting,
    escrow,
    escrow_account,
    match_account,
)
from services.common.memory_storage import MemoryStorage
from services.common.records import Status, TableRecord
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Committed
from services.ledger.app import LedgerService
from shared_engine import MatchMode
from tests.scored import scored_table
from tests.services.conftest import PLAYERS, build
from tests.services.fakes import RecordingPublisher

pytestmark = pytest.mark.unit

MINTED = 10**9
THIEVES = {
    str(seat): SeatPlayer(player_id=f"thief{seat}", name=f"T{seat}") for seat in (1, 2, 3, 4)
}
"""Seats a forged event names instead of the table's."""


@pytest.fixture
def ledger_service(deps: dict[str, Any]) -> LedgerService:
    return build(LedgerService, deps)


@pytest.fixture
def book(storage: MemoryStorage) -> Ledger:
    return Ledger(storage)


def played(
    store: GameStore,
    table_id: str,
    mode: MatchMode,
    totals_by_round: list[tuple[int, int]],
    *,
    stake: int = 0,
    status: Status = "finished",
    seats: dict[int, SeatPlayer] | None = None,
) -> TableRecord:
    return scored_table(
        store, table_id, mode, totals_by_round, seats or PLAYERS, stake=stake, status=status
    )


def ended_event(
    table_id: str,
    *,
    mode: MatchMode = MatchMode.ONE_ROUND,
    winner: str = "A",
    rounds: int = 1,
    stake: int = 0,
    seats: dict[str, SeatPlayer] | None = None,
) -> MatchEnded:
    return MatchEnded.model_validate(
        {
            "table_id": table_id,
            "mode": mode,
            "stake": stake,
            "winner": winner,
            "totals": {"A": 1, "B": 0} if winner == "A" else {"A": 0, "B": 1},
            "rounds_played": rounds,
            "seats": seats or {str(s): p for s, p in PLAYERS.items()},
        }
    )


def aborted_event(
    table_id: str,
    *,
    mode: MatchMode = MatchMode.ARENA,
    stake: int = 100,
    seats: dict[str, SeatPlayer] | None = None,
) -> TableAborted:
    return TableAborted.model_validate(
        {
            "table_id": table_id,
            "mode": mode,
            "stake": stake,
            "seats": seats or {str(s): p for s, p in PLAYERS.items()},
            "reason": "every player left",
        }
    )


def match_entries(book: Ledger, table_id: str) -> list[tuple[str, str, int]]:
    """(account, entry key, points) of every entry of the match, its closing marker too,
    on the players', the thieves', the escrow's and the match's accounts."""
    accounts = [p.player_id for p in (*PLAYERS.values(), *THIEVES.values())]
    accounts += [escrow_account(table_id), match_account(table_id)]
    return sorted(
        (account, str(entry["sk"]), int(str(entry["points"])))
        for account in accounts
        for entry in book.entries(account)
        if entry.get("match") == table_id
    )


def balances(book: Ledger, *accounts: str) -> dict[str, int]:
    return {account: book.balance(account).points for account in accounts}


def settled(publisher: RecordingPublisher) -> list[LedgerSettled]:
    return [LedgerSettled.model_validate(e.detail) for e in publisher.published]


def hold_stakes(book: Ledger, table_id: str, stake: int) -> None:
    """Fund the players and move their stakes to escrow, as forming an arena table does."""
    for player in PLAYERS.values():
        book.book([Posting(player.player_id, "welcome", "welcome", points=1000)], 1.0)
    assert isinstance(book.book(escrow(table_id, dict(PLAYERS), stake), 1.0), Committed)


def assert_unbacked(telemetry: RecordingTelemetry, count: int = 1) -> None:
    """Refused as unbacked: warned with its reason and counted, once per event."""
    assert telemetry.metrics.get("ledger_unbacked_events") == count
    levels = [level for level, message, _ in telemetry.lines if message == "booking refused"]
    assert levels == ["warning"] * count


# --- MatchEnded ----------------------------------------------------------------------------


def test_a_match_ended_for_a_table_that_never_existed_books_nothing_match_3(
    *,
    ledger_service: LedgerService,
    book: Ledger,
    publisher: RecordingPublisher,
    telemetry: RecordingTelemetry,
) -> None:
    """The forged event that credited a billion to each "winner": no table, no booking."""
    forged = ended_event("never-existed", rounds=MINTED, mode=MatchMode.TO_10000)
    ledger_service.match_ended(forged)  # returns: acknowledged, not retried
    assert match_entries(book, "never-existed") == []
    assert balances(book, "p1", "p2", "p3", "p4") == dict.fromkeys(("p1", "p2", "p3", "p4"), 0)
    assert settled(publisher) == []
    assert_unbacked(telemetry)


@pytest.mark.parametrize(
    ("mode", "totals_by_round"),
    [
        # Two rounds of three scored (MATCH-1): the match is not over.
        (MatchMode.THREE_ROUNDS, [(500, 100), (900, 300)]),
        # Its scores would end it, but the table's item says it plays on: the item is the
        # word on whether a table ended (the score service writes both at once).
        (MatchMode.ONE_ROUND, [(500, 100)]),
    ],
    ids=["rounds-to-go", "item-in-play"],
)
def test_a_match_ended_for_a_table_still_in_play_books_nothing_match_1(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    book: Ledger,
    publisher: RecordingPublisher,
    telemetry: RecordingTelemetry,
    mode: MatchMode,
    totals_by_round: list[tuple[int, int]],
) -> None:
    played(store, "live", mode, totals_by_round, status="playing")
    ledger_service.match_ended(ended_event("live", mode=mode, rounds=len(totals_by_round)))
    assert match_entries(book, "live") == []
    assert settled(publisher) == []
    assert_unbacked(telemetry)


def test_a_bloated_match_ended_books_exactly_what_the_ended_table_says_match_3(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    book: Ledger,
    publisher: RecordingPublisher,
    telemetry: RecordingTelemetry,
) -> None:
    """A one-round match team B won: an event claiming a billion rounds, team A, an arena
    stake and other seats books the table's own settlement, and only once (MATCH-3)."""
    played(store, "real", MatchMode.ONE_ROUND, [(300, 1200)])
    bloated = ended_event(
        "real", mode=MatchMode.ARENA, winner="A", rounds=MINTED, stake=MINTED, seats=THIEVES
    )
    ledger_service.match_ended(bloated)
    ledger_service.match_ended(ended_event("real", winner="B"))  # the genuine one, later
    expected = {"p1": -1000, "p2": 1000, "p3": -1000, "p4": 1000}
    assert balances(book, *expected) == expected
    assert match_entries(book, "real") == sorted(
        [("match:real", "ENTRY#real:closed", 0)]
        + [(f"p{s}", f"ENTRY#real:settlement:{s}", expected[f"p{s}"]) for s in (1, 2, 3, 4)]
    )
    assert [s.changes for s in settled(publisher)] == [expected]
    assert balances(book, *(p.player_id for p in THIEVES.values())) == dict.fromkeys(
        (p.player_id for p in THIEVES.values()), 0
    )
    assert "ledger_unbacked_events" not in telemetry.metrics


def test_tie_break_rounds_are_paid_as_the_rules_played_them_match_2_match_3(
    *, ledger_service: LedgerService, store: GameStore, book: Ledger
) -> None:
    """Three rounds tied, a fourth decides (MATCH-2): four rounds at 1,000 (MATCH-3)."""
    played(store, "tied", MatchMode.THREE_ROUNDS, [(100, 0), (200, 300), (900, 900), (950, 900)])
    ledger_service.match_ended(ended_event("tied", rounds=3, winner="B"))
    assert balances(book, "p1", "p2") == {"p1": 4000, "p2": -4000}


@pytest.mark.parametrize(
    ("mode", "totals_by_round", "table_round"),
    [
        # The table says five rounds; its scores end the one-round match after the first.
        (MatchMode.ONE_ROUND, [(500, 300)], 5),
        # Scores past the match's end (MATCH-1: one round, decided).
        (MatchMode.ONE_ROUND, [(500, 300), (900, 300)], None),
        # Ended before its planned rounds (MATCH-1: three rounds).
        (MatchMode.THREE_ROUNDS, [(500, 300), (900, 300)], None),
        # Tied at its end: no winner (MATCH-2 would have played on).
        (MatchMode.THREE_ROUNDS, [(500, 300), (900, 300), (900, 900)], None),
    ],
    ids=["round-count", "past-its-end", "short", "tied"],
)
def test_a_table_whose_rounds_do_not_end_its_match_books_nothing_match_1_match_2(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    storage: MemoryStorage,
    book: Ledger,
    telemetry: RecordingTelemetry,
    mode: MatchMode,
    totals_by_round: list[tuple[int, int]],
    table_round: int | None,
) -> None:
    table = played(store, "odd", mode, totals_by_round)
    if table_round is not None:
        storage.put("games", table.evolve(round=table_round).to_item())
    ledger_service.match_ended(ended_event("odd", mode=mode, rounds=table_round or 1))
    assert match_entries(book, "odd") == []
    assert_unbacked(telemetry)


def test_the_table_s_seats_not_the_event_s_decide_practice_match_3(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    book: Ledger,
    telemetry: RecordingTelemetry,
) -> None:
    """MATCH-3: a table with a bot seat books nothing even if the event names no bot; a
    table of four people settles even if the event names bots."""
    with_bot = {**PLAYERS, 2: SeatPlayer(player_id="bot-x-2", name="Bot", bot=True)}
    played(store, "practice", MatchMode.ONE_ROUND, [(900, 100)], seats=with_bot)
    ledger_service.match_ended(ended_event("practice"))
    assert match_entries(book, "practice") == []
    assert telemetry.metrics.get("ledger_practice_skipped") == 1

    played(store, "people", MatchMode.ONE_ROUND, [(900, 100)])
    bots = {s: SeatPlayer(player_id=p.player_id, name=p.name, bot=True) for s, p in PLAYERS.items()}
    ledger_service.match_ended(ended_event("people", seats={str(s): p for s, p in bots.items()}))
    assert balances(book, "p1", "p2") == {"p1": 1000, "p2": -1000}


def test_an_arena_match_pays_the_table_s_stake_from_its_escrow_match_4(
    *, ledger_service: LedgerService, store: GameStore, book: Ledger
) -> None:
    hold_stakes(book, "arena", 100)
    played(store, "arena", MatchMode.ARENA, [(100, 0), (200, 300), (400, 900)], stake=100)
    ledger_service.match_ended(ended_event("arena", mode=MatchMode.ARENA, stake=MINTED))
    assert balances(book, "p1", "p2", "p3", "p4") == {"p1": 900, "p2": 1100, "p3": 900, "p4": 1100}
    assert book.balance(escrow_account("arena")) == Balance(0, 0)


# --- TableAborted ------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["never existed", "playing", "finished"])
def test_a_table_aborted_the_table_does_not_back_refunds_nothing_match_4(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    book: Ledger,
    publisher: RecordingPublisher,
    telemetry: RecordingTelemetry,
    state: str,
) -> None:
    """No stake held (the table never existed) or still held for a match in play or paid
    out: a forged TableAborted moves none of it."""
    if state != "never existed":
        hold_stakes(book, "arena", 100)
        rounds = [(100, 0)] if state == "playing" else [(100, 0), (200, 300), (400, 900)]
        played(store, "arena", MatchMode.ARENA, rounds, stake=100, status=state)
    before = sorted(match_entries(book, "arena"))
    ledger_service.table_aborted(aborted_event("arena", stake=MINTED))
    assert sorted(match_entries(book, "arena")) == before
    assert settled(publisher) == []
    assert_unbacked(telemetry)


def test_an_aborted_table_refunds_the_stakes_its_record_holds_once_match_4(
    *,
    ledger_service: LedgerService,
    store: GameStore,
    book: Ledger,
    publisher: RecordingPublisher,
) -> None:
    hold_stakes(book, "arena", 100)
    played(store, "arena", MatchMode.ARENA, [(0, 0)], stake=100, status="aborted")
    ledger_service.table_aborted(aborted_event("arena", stake=MINTED, seats=THIEVES))
    ledger_service.table_aborted(aborted_event("arena"))  # delivered again
    assert balances(book, "p1", "p2", "p3", "p4") == dict.fromkeys(("p1", "p2", "p3", "p4"), 1000)
    assert book.balance(escrow_account("arena")) == Balance(0, 0)
    assert [s.changes for s in settled(publisher)] == [
        {"p1": 100, "escrow:arena": -400, "p2": 100, "p3": 100, "p4": 100}
    ]
    assert not [a for a, _, _ in match_entries(book, "arena") if a.startswith("thief")]
