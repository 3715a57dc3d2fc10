"""The book: its writes, guarded debits, idempotent bookings, the outcomes of refused ones,
and reconciliation. ``BookContract`` runs on the in-memory storage here and on DynamoDB in
``tests/integration/test_storage_contract.py``."""

from __future__ import annotations

from typing import Any

import pytest

from services.common.ledger import Balance, Ledger, Posting, account_pk, escrow_account
from services.common.memory_storage import MemoryStorage
from services.common.unit_of_work import (
    Absent,
    AllOf,
    AlreadyDone,
    AtLeast,
    Committed,
    Put,
    Short,
    Storage,
    Update,
)

pytestmark = pytest.mark.unit


def fund(ledger: Ledger, account: str, points: int = 0, jokers: int = 0) -> None:
    posting = Posting(account, "welcome", "welcome", points=points, jokers=jokers)
    assert isinstance(ledger.book([posting], 1.0), Committed)


def keys(ledger: Ledger, account: str) -> list[Any]:
    return [e["sk"] for e in ledger.entries(account)]


# --- writes() ---------------------------------------------------------------------------


def test_writes_are_one_entry_per_posting_then_one_update_per_account() -> None:
    postings = [
        Posting("p1", "t:settlement:1", "settlement", points=3000, match="t"),
        Posting("escrow:t", "t:escrow:2", "escrow", points=-200, match="t"),
        Posting("p1", "t:joker:1", "joker", jokers=-1, match="t", guarded=True),
        Posting("p2", "welcome", "welcome", points=5, jokers=2),
        Posting("p1", "t:extra", "external", points=-500),
    ]
    writes = Ledger.writes(postings, 12.5)
    assert len(writes) == 5 + 3
    for entry, posting in zip(writes[:5], postings, strict=True):
        assert isinstance(entry, Put) and entry.table == "ledger"
        assert entry.when == Absent() and entry.refusal == AlreadyDone()
        assert entry.item == {
            "pk": account_pk(posting.account),
            "sk": f"ENTRY#{posting.key}",
            "points": posting.points,
            "jokers": posting.jokers,
            "purpose": posting.purpose,
            "at": 12.5,
            **({"match": posting.match} if posting.match else {}),
        }
    updates = writes[5:]
    assert all(isinstance(u, Update) for u in updates)
    # In the order the accounts first appear; the amounts are the accounts' net changes.
    assert [u.key for u in updates] == [Balance.key_of(a) for a in ("p1", "escrow:t", "p2")]
    p1, escrow, p2 = (u for u in updates if isinstance(u, Update))
    assert p1.add == {"points": 2500, "jokers": -1}
    # p1 has a guarded posting: its net joker debit is guarded, its net points credit is not.
    assert p1.when == AtLeast("jokers", 1) and p1.refusal == Short(("p1",))
    # Unguarded accounts take any change, a debit included (escrow, settlement losers).
    assert escrow.when is None and escrow.add == {"points": -200, "jokers": 0}
    assert p2.when is None


@pytest.mark.parametrize(
    ("postings", "condition"),
    [
        ([Posting("a", "k", "escrow", points=-50, jokers=-2, guarded=True)],
         AllOf((AtLeast("points", 50), AtLeast("jokers", 2)))),
        ([Posting("a", "k", "escrow", points=-50, guarded=True)], AtLeast("points", 50)),
        ([Posting("a", "k", "external", points=50, jokers=1, guarded=True)], None),
        # The guard is on the account's net change in this booking.
        ([Posting("a", "k1", "escrow", points=-300, guarded=True),
          Posting("a", "k2", "refund", points=100)], AtLeast("points", 200)),
        ([Posting("a", "k1", "escrow", points=-300, guarded=True),
          Posting("a", "k2", "refund", points=300)], None),
    ],
    ids=["both", "points", "credit", "net-debit", "net-zero"],
)  # fmt: skip
def test_guarded_debits_are_conditional_on_the_net_change(
    postings: list[Posting], condition: Any
) -> None:
    (update,) = [w for w in Ledger.writes(postings, 0.0) if isinstance(w, Update)]
    assert update.when == condition


# --- book() and reconcile(), on a storage -------------------------------------------------


class BookContract:
    """The book's cases on a storage; a subclass provides ``storage``."""

    @pytest.fixture
    def ledger(self, storage: Storage) -> Ledger:
        return Ledger(storage)

    def test_book_changes_balances_and_appends_entries_together(self, ledger: Ledger) -> None:
        assert ledger.balance("nobody") == Balance(0, 0)
        fund(ledger, "p1", 1000, 2)
        booked = ledger.book(
            [
                Posting("p1", "t:escrow:1", "escrow", points=-500, match="t", guarded=True),
                Posting(escrow_account("t"), "t:escrow:1", "escrow", points=500, match="t"),
            ],
            2.0,
        )
        assert isinstance(booked, Committed)
        assert ledger.balance("p1") == Balance(500, 2)
        assert ledger.balance("escrow:t") == Balance(500, 0)
        assert keys(ledger, "p1") == ["ENTRY#t:escrow:1", "ENTRY#welcome"]
        assert keys(ledger, "escrow:t") == ["ENTRY#t:escrow:1"]
        for account in ("p1", "escrow:t"):
            stored, summed = ledger.reconcile(account)
            assert stored == summed

    def test_book_is_idempotent_and_all_or_nothing(self, ledger: Ledger) -> None:
        postings = [
            Posting("p1", "t:settlement:1", "settlement", points=1000, match="t"),
            Posting("p2", "t:settlement:2", "settlement", points=-1000, match="t"),
        ]
        assert isinstance(ledger.book(postings, 1.0), Committed)
        assert ledger.book(postings, 2.0) == AlreadyDone()
        # One posting already booked and one new: neither is booked again.
        again = [postings[1], Posting("p3", "t:settlement:3", "settlement", points=7)]
        assert ledger.book(again, 3.0) == AlreadyDone()
        assert ledger.balance("p1") == Balance(1000, 0)
        assert ledger.balance("p2") == Balance(-1000, 0)
        assert ledger.balance("p3") == Balance(0, 0)
        assert keys(ledger, "p3") == []
        assert keys(ledger, "p2") == ["ENTRY#t:settlement:2"]

    def test_an_uncovered_guarded_debit_books_nothing(self, ledger: Ledger) -> None:
        fund(ledger, "rich", 1000, 1)
        fund(ledger, "poor", 99, 0)
        stakes = [
            Posting(player, f"t:escrow:{player}", "escrow", points=-100, match="t", guarded=True)
            for player in ("rich", "poor", "absent")
        ] + [Posting("escrow:t", "t:escrow:all", "escrow", points=300, match="t")]
        # Every account that fell short, in the order of the postings; no account was touched.
        assert ledger.book(stakes, 1.0) == Short(("poor", "absent"))
        assert ledger.balance("rich") == Balance(1000, 1)
        assert ledger.balance("poor") == Balance(99, 0)
        assert keys(ledger, "rich") == ["ENTRY#welcome"]
        assert keys(ledger, "escrow:t") == []

        joker = Posting("rich", "t:joker:1", "joker", jokers=-2, guarded=True)
        assert ledger.book([joker], 1.0) == Short(("rich",))
        # Exactly covered is covered.
        exact = Posting("poor", "t:exact", "escrow", points=-99, guarded=True)
        assert isinstance(ledger.book([exact], 1.0), Committed)
        assert ledger.balance("poor") == Balance(0, 0)
        # An unguarded debit (a lost match) may go below zero.
        lost = Posting("poor", "t:settlement:2", "settlement", points=-1000)
        assert isinstance(ledger.book([lost], 1.0), Committed)
        assert ledger.balance("poor") == Balance(-1000, 0)

    def test_an_existing_entry_wins_over_a_short_balance(self, ledger: Ledger) -> None:
        """The booking happened before: it is done, not refused for lack of funds."""
        postings = [Posting("p1", "t:settlement:1", "settlement", points=10, match="t")]
        ledger.book(postings, 1.0)
        short = [Posting("p1", "t:settlement:1", "settlement", points=-10_000, guarded=True)]
        assert ledger.book(short, 1.0) == AlreadyDone()

    def test_reconcile_sums_every_entry_and_sees_a_drift(
        self, ledger: Ledger, storage: Storage
    ) -> None:
        for i in range(30):
            ledger.book([Posting("p1", f"k{i:02d}", "external", points=i, jokers=i % 2)], float(i))
        stored, summed = ledger.reconcile("p1")
        assert stored == summed == Balance(sum(range(30)), 15)
        assert len(ledger.entries("p1")) == 30

        # A balance changed without its entry is what reconcile exists to catch.
        storage.commit([Update("ledger", Balance.key_of("p1"), add={"points": 1})])
        stored, summed = ledger.reconcile("p1")
        assert stored.points == summed.points + 1
        assert ledger.reconcile("nobody") == (Balance(0, 0), Balance(0, 0))


class TestBookInMemory(BookContract):
    @pytest.fixture
    def storage(self) -> Storage:
        return MemoryStorage()
