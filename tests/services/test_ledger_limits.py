"""The ledger API's bookings for the platform's other modes (docs/ledger-api.md), on the
in-memory storage: each client's limits per booking and per UTC day, and one booking per
(client, idempotency key). The points and jokers are the balance the other rummy modes
share (MATCH-3, JOKER-1), so a client must never book past its limits or twice.

``tests/integration/test_ledger_settlement.py`` runs the same requests through the
handler on DynamoDB; here the use case answers them, and its refusals are ``BookingRefused``.
"""

from __future__ import annotations

import pytest

from services.common.identities import MAX_SUBJECT, host_bot_id, player_id_of
from services.common.ledger import Balance, Ledger, escrow_account, match_account
from services.common.memory_storage import MemoryStorage
from services.common.records import shard_of
from services.common.settings import LedgerClient
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.ledger.app import BookingRefused, LedgerService
from tests.services.fakes import FakeClock, RecordingPublisher

pytestmark = pytest.mark.unit

CLIENTS = {
    "rummy": LedgerClient(
        points_per_booking=10_000, points_per_day=25_000, jokers_per_booking=3, jokers_per_day=5
    ),
    "poker": LedgerClient(points_per_booking=500, points_per_day=1_000),
    "bridge": LedgerClient(points_per_booking=100, points_per_day=400, day_shards=4),
    "whist": LedgerClient(points_per_booking=1_000, points_per_day=600),
}
"""As in the integration tests, and ``whist``, whose one booking may exceed its day."""


@pytest.fixture
def ledger(storage: MemoryStorage) -> Ledger:
    return Ledger(storage)


@pytest.fixture
def api(
    ledger: Ledger,
    store: GameStore,
    publisher: RecordingPublisher,
    clock: FakeClock,
    telemetry: RecordingTelemetry,
) -> LedgerService:
    return LedgerService(ledger, store, publisher, clock, telemetry, clients=CLIENTS)


def refusal(
    api: LedgerService,
    account: str,
    key: str,
    points: int = 0,
    jokers: int = 0,
    *,
    client: str = "rummy",
) -> str:
    """The code a post is refused with (it must be refused)."""
    with pytest.raises(BookingRefused) as refused:
        api.post(client, account, key, points, jokers)
    return refused.value.code


def entries(ledger: Ledger, account: str) -> list[object]:
    return [e["sk"] for e in ledger.entries(account)]


# --- limits per booking ------------------------------------------------------------------------


def test_a_booking_larger_than_the_client_may_book_is_refused_and_books_nothing(
    api: LedgerService, ledger: Ledger
) -> None:
    assert refusal(api, "z6", "rummy-big", 10_001) == "booking_limit"
    assert refusal(api, "z6", "rummy-big", -10_001) == "booking_limit", "a debit counts as much"
    assert refusal(api, "z6", "rummy-big", 0, 4) == "booking_limit"
    assert refusal(api, "z6", "poker-big", 501, client="poker") == "booking_limit"
    assert refusal(api, "z6", "poker-joker", 0, 1, client="poker") == "booking_limit"
    assert ledger.balance("z6") == Balance(0, 0) and entries(ledger, "z6") == []
    # A refused key stays free; exactly the limit is within it.
    assert api.post("rummy", "z6", "rummy-big", 10_000, 3) == Balance(10_000, 3)


# --- limits per day ----------------------------------------------------------------------------


def test_a_clients_day_counts_credits_and_debits_until_midnight_utc(
    api: LedgerService, ledger: Ledger, clock: FakeClock
) -> None:
    """25,000 points and 5 jokers a day in all, whichever the accounts; the clock starts at
    08:00 UTC, so the day ends sixteen hours later, not twenty-four."""
    assert api.post("rummy", "z6", "rummy-d1", 10_000, 3) == Balance(10_000, 3)
    assert api.post("rummy", "z7", "rummy-d2", 10_000, 0) == Balance(10_000, 0)
    assert api.post("rummy", "z6", "rummy-d3", -5_000, 0) == Balance(5_000, 3)
    assert refusal(api, "z7", "rummy-d4", 1) == "daily_limit"
    assert refusal(api, "z6", "rummy-d5", 0, 3) == "daily_limit"  # 3 + 3 > 5 jokers
    assert api.post("rummy", "z6", "rummy-d6", 0, -2) == Balance(5_000, 1)
    # A repeat books nothing, so a full day still answers it.
    assert api.post("rummy", "z7", "rummy-d2", 10_000, 0) == Balance(10_000, 0)
    # Another client's day is its own.
    assert api.post("poker", "z7", "poker-d1", 500, 0) == Balance(10_500, 0)
    assert (ledger.balance("z6"), ledger.balance("z7")) == (Balance(5_000, 1), Balance(10_500, 0))

    clock.advance(16 * 3600 - 1)
    assert refusal(api, "z7", "rummy-d4", 1) == "daily_limit", "23:59:59 is the same day"
    clock.advance(1)
    assert api.post("rummy", "z7", "rummy-d4", 1, 0) == Balance(10_501, 0)


def test_one_booking_larger_than_the_clients_day_is_refused(
    api: LedgerService, ledger: Ledger
) -> None:
    """The day's first booking finds no usage to be conditional on: it is measured alone."""
    api.post("rummy", "z8", "rummy-fund", 1_000, 0)
    assert refusal(api, "z8", "whist-big", 601, client="whist") == "daily_limit"
    assert refusal(api, "z8", "whist-big", -601, client="whist") == "daily_limit"
    assert ledger.balance("z8") == Balance(1_000, 0)
    assert entries(ledger, "z8") == ["ENTRY#external:rummy:rummy-fund"]
    assert api.post("whist", "z8", "whist-day", -600, 0) == Balance(400, 0)


def test_a_client_in_day_shards_books_each_shard_up_to_its_share(
    api: LedgerService, ledger: Ledger
) -> None:
    """4 counters of 100 points each (400 a day): keys of 100 book once per counter, so
    exactly four of many book, one in each shard, and the day's total is the limit."""
    booked = []
    for key in (f"bridge-{n}" for n in range(24)):
        try:
            api.post("bridge", "zb", key, 100, 0)
        except BookingRefused as refused:
            assert refused.code == "daily_limit"
        else:
            booked.append(key)
    assert ledger.balance("zb") == Balance(400, 0)
    assert sorted(shard_of(key, 4) for key in booked) == [0, 1, 2, 3]


# --- one booking per key -----------------------------------------------------------------------


def test_a_repeated_key_answers_what_its_booking_left_and_books_nothing(
    api: LedgerService, ledger: Ledger
) -> None:
    assert api.post("rummy", "z1", "rummy-0001", 700, 2) == Balance(700, 2)
    assert api.post("rummy", "z1", "rummy-0002", -300, -1) == Balance(400, 1)
    # The balance the booking left then, not today's.
    assert api.post("rummy", "z1", "rummy-0001", 700, 2) == Balance(700, 2)
    assert api.post("rummy", "z1", "rummy-0002", -300, -1) == Balance(400, 1)
    assert api.balance("rummy", "z1") == Balance(400, 1)
    assert entries(ledger, "z1") == [
        "ENTRY#external:rummy:rummy-0001",
        "ENTRY#external:rummy:rummy-0002",
    ]


def test_a_key_reused_with_another_body_is_a_conflict(api: LedgerService, ledger: Ledger) -> None:
    assert api.post("rummy", "z3", "rummy-0001", 700, 0) == Balance(700, 0)
    for account, points, jokers in (
        ("z3", 9_999, 0),
        ("z3", 700, 1),
        ("z3", -700, 0),
        ("z4", 700, 0),  # the key is the client's, whatever the account
    ):
        code = refusal(api, account, "rummy-0001", points, jokers)
        assert code == "idempotency_conflict", (account, points, jokers)
    assert (ledger.balance("z3"), ledger.balance("z4")) == (Balance(700, 0), Balance(0, 0))
    assert len(entries(ledger, "z3")) == 1 and entries(ledger, "z4") == []
    # Keys are per client: another mode's same key is its own booking.
    assert api.post("poker", "z3", "rummy-0001", 100, 0) == Balance(800, 0)


def test_an_uncovered_debit_books_nothing_and_its_key_stays_free(
    api: LedgerService, ledger: Ledger
) -> None:
    assert api.post("rummy", "z2", "rummy-fund", 400, 1) == Balance(400, 1)
    for number, (points, jokers) in enumerate([(-401, 0), (0, -2), (-10, -2)]):
        assert refusal(api, "z2", f"rummy-over-{number}", points, jokers) == "insufficient_balance"
    assert ledger.balance("z2") == Balance(400, 1)
    assert entries(ledger, "z2") == ["ENTRY#external:rummy:rummy-fund"]
    api.post("rummy", "z2", "rummy-more", 1, 0)
    assert api.post("rummy", "z2", "rummy-over-0", -401, 0) == Balance(0, 1)


# --- whose account ---------------------------------------------------------------------------


@pytest.mark.parametrize("subject", ["auth0|abc", "user=42", "bot-x", "u" * MAX_SUBJECT, "z7"])
def test_a_subject_books_on_the_account_its_player_plays_with(
    api: LedgerService, ledger: Ledger, subject: str
) -> None:
    """The other modes know a player by their token's ``sub``; the game by the player id it
    maps to. A booking for the one is the other's balance."""
    player_id = player_id_of(subject)
    assert player_id is not None
    assert api.post("rummy", subject, "rummy-open", 500, 1) == Balance(500, 1)
    assert api.balance("rummy", subject) == Balance(500, 1)
    assert ledger.balance(player_id) == Balance(500, 1)
    assert entries(ledger, player_id) == ["ENTRY#external:rummy:rummy-open"]
    assert api.post("rummy", subject, "rummy-open", 500, 1) == Balance(500, 1), "booked once"


@pytest.mark.parametrize(
    "account",
    [
        "house:support",
        escrow_account("t-1"),
        match_account("t-1"),
        host_bot_id("KQ7M2X", 2),
        "p-a\n",
        "ann smith",
        "-x",
        "u" * (MAX_SUBJECT + 1),
    ],
)
def test_what_no_token_could_name_is_not_a_players_account(
    api: LedgerService, ledger: Ledger, account: str
) -> None:
    assert refusal(api, account, "rummy-internal", 100) == "not_a_player_account"
    with pytest.raises(BookingRefused) as refused:
        api.balance("rummy", account)
    assert refused.value.code == "not_a_player_account"
    assert ledger.balance(account) == Balance(0, 0) and entries(ledger, account) == []
