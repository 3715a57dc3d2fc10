"""The ledger's book on in-process DynamoDB (moto): transaction items, guarded debits,
idempotent bookings, the mapping of cancelled transactions, and reconciliation."""

from __future__ import annotations

from typing import Any

import pytest

from services.common import constants
from services.common.dynamo import s
from services.ledger.book import (
    AlreadyBooked,
    Balance,
    InsufficientFunds,
    Ledger,
    Posting,
    account_pk,
    escrow_account,
)

pytestmark = pytest.mark.unit

TABLE = constants.LEDGER.name


@pytest.fixture
def ledger(db: Any) -> Ledger:
    return Ledger(db, TABLE)


def fund(ledger: Ledger, account: str, points: int = 0, jokers: int = 0) -> None:
    ledger.book([Posting(account, "welcome", "welcome", points=points, jokers=jokers)], 1.0)


def keys(ledger: Ledger, account: str) -> list[str]:
    return [e["sk"]["S"] for e in ledger.entries(account)]


def cancelled(db: Any, items: list[dict[str, Any]]) -> Exception:
    """Run a transaction that must be cancelled; return what botocore raised."""
    with pytest.raises(db.exceptions.TransactionCanceledException) as caught:
        db.transact_write_items(TransactItems=items)
    exc = caught.value
    assert isinstance(exc, Exception)
    return exc


def marker(db: Any, *, fails: bool) -> dict[str, Any]:
    """An unrelated item that rides in the same transaction (before the ledger's items)."""
    return {
        "Put": {
            "TableName": constants.PLAYERS.name,
            "Item": {"player_id": s("someone")},
            "ConditionExpression": "attribute_exists(player_id)"
            if fails
            else "attribute_not_exists(player_id)",
        }
    }


# --- items() ---------------------------------------------------------------------------


def test_items_are_one_entry_per_posting_then_one_update_per_account(ledger: Ledger) -> None:
    postings = [
        Posting("p1", "t:settlement:1", "settlement", points=3000, match="t"),
        Posting("escrow:t", "t:escrow:2", "escrow", points=-200, match="t"),
        Posting("p1", "t:joker:1", "joker", jokers=-1, match="t", guarded=True),
        Posting("p2", "welcome", "welcome", points=5, jokers=2),
        Posting("p1", "t:extra", "external", points=-500),
    ]
    items = ledger.items(postings, 12.5)
    assert len(items) == 5 + 3

    entries = [i["Put"] for i in items[:5]]
    for entry, posting in zip(entries, postings, strict=True):
        assert entry["TableName"] == TABLE
        assert entry["ConditionExpression"] == "attribute_not_exists(pk)"
        item = entry["Item"]
        assert item["pk"] == {"S": account_pk(posting.account)}
        assert item["sk"] == {"S": f"ENTRY#{posting.key}"}
        assert item["points"] == {"N": str(posting.points)}
        assert item["jokers"] == {"N": str(posting.jokers)}
        assert item["purpose"] == {"S": posting.purpose}
        assert item["at"] == {"N": "12.5"}
        assert item.get("match") == ({"S": posting.match} if posting.match else None)

    updates = [i["Update"] for i in items[5:]]
    # In the order the accounts first appear; the amounts are the accounts' net changes.
    assert [u["Key"] for u in updates] == [
        {"pk": {"S": "ACCOUNT#p1"}, "sk": {"S": "BALANCE"}},
        {"pk": {"S": "ACCOUNT#escrow:t"}, "sk": {"S": "BALANCE"}},
        {"pk": {"S": "ACCOUNT#p2"}, "sk": {"S": "BALANCE"}},
    ]
    assert all(u["UpdateExpression"] == "ADD points :p, jokers :j" for u in updates)
    p1, escrow, p2 = updates
    assert p1["ExpressionAttributeValues"] == {
        ":p": {"N": "2500"},
        ":j": {"N": "-1"},
        ":need_j": {"N": "1"},
    }
    # p1 has a guarded posting: its net joker debit is guarded, its net points credit is not.
    assert p1["ConditionExpression"] == "jokers >= :need_j"
    # Unguarded accounts take any change, a debit included (escrow, settlement losers).
    assert "ConditionExpression" not in escrow
    assert escrow["ExpressionAttributeValues"] == {":p": {"N": "-200"}, ":j": {"N": "0"}}
    assert "ConditionExpression" not in p2


@pytest.mark.parametrize(
    ("postings", "condition", "needs"),
    [
        ([Posting("a", "k", "escrow", points=-50, jokers=-2, guarded=True)],
         "points >= :need_p AND jokers >= :need_j", {":need_p": "50", ":need_j": "2"}),
        ([Posting("a", "k", "escrow", points=-50, guarded=True)],
         "points >= :need_p", {":need_p": "50"}),
        ([Posting("a", "k", "external", points=50, jokers=1, guarded=True)], None, {}),
        # The guard is on the account's net change in this booking.
        ([Posting("a", "k1", "escrow", points=-300, guarded=True),
          Posting("a", "k2", "refund", points=100)],
         "points >= :need_p", {":need_p": "200"}),
        ([Posting("a", "k1", "escrow", points=-300, guarded=True),
          Posting("a", "k2", "refund", points=300)], None, {}),
    ],
    ids=["both", "points", "credit", "net-debit", "net-zero"],
)  # fmt: skip
def test_guarded_debits_are_conditional_on_the_net_change(
    ledger: Ledger, postings: list[Posting], condition: str | None, needs: dict[str, str]
) -> None:
    (update,) = [i["Update"] for i in ledger.items(postings, 0.0) if "Update" in i]
    assert update.get("ConditionExpression") == condition
    values = update["ExpressionAttributeValues"]
    assert {k: v["N"] for k, v in values.items() if k.startswith(":need")} == needs


# --- book() -----------------------------------------------------------------------------


def test_book_changes_balances_and_appends_entries_together(ledger: Ledger) -> None:
    assert ledger.balance("nobody") == Balance(0, 0)
    fund(ledger, "p1", 1000, 2)
    ledger.book(
        [
            Posting("p1", "t:escrow:1", "escrow", points=-500, match="t", guarded=True),
            Posting(escrow_account("t"), "t:escrow:1", "escrow", points=500, match="t"),
        ],
        2.0,
    )
    assert ledger.balance("p1") == Balance(500, 2)
    assert ledger.balance("escrow:t") == Balance(500, 0)
    assert keys(ledger, "p1") == ["ENTRY#t:escrow:1", "ENTRY#welcome"]
    assert keys(ledger, "escrow:t") == ["ENTRY#t:escrow:1"]
    for account in ("p1", "escrow:t"):
        stored, summed = ledger.reconcile(account)
        assert stored == summed


def test_book_is_idempotent_and_all_or_nothing(ledger: Ledger) -> None:
    postings = [
        Posting("p1", "t:settlement:1", "settlement", points=1000, match="t"),
        Posting("p2", "t:settlement:2", "settlement", points=-1000, match="t"),
    ]
    ledger.book(postings, 1.0)
    with pytest.raises(AlreadyBooked):
        ledger.book(postings, 2.0)
    # One posting already booked and one new: neither is booked again.
    with pytest.raises(AlreadyBooked):
        ledger.book([postings[1], Posting("p3", "t:settlement:3", "settlement", points=7)], 3.0)
    assert ledger.balance("p1") == Balance(1000, 0)
    assert ledger.balance("p2") == Balance(-1000, 0)
    assert ledger.balance("p3") == Balance(0, 0)
    assert keys(ledger, "p3") == []
    assert keys(ledger, "p2") == ["ENTRY#t:settlement:2"]


def test_an_uncovered_guarded_debit_books_nothing(ledger: Ledger) -> None:
    fund(ledger, "rich", 1000, 1)
    fund(ledger, "poor", 99, 0)
    stakes = [
        Posting(player, f"t:escrow:{player}", "escrow", points=-100, match="t", guarded=True)
        for player in ("rich", "poor", "absent")
    ] + [Posting("escrow:t", "t:escrow:all", "escrow", points=300, match="t")]
    with pytest.raises(InsufficientFunds) as refused:
        ledger.book(stakes, 1.0)
    # Every account that fell short, in the order of the postings; no account was touched.
    assert refused.value.accounts == ["poor", "absent"]
    assert ledger.balance("rich") == Balance(1000, 1)
    assert ledger.balance("poor") == Balance(99, 0)
    assert keys(ledger, "rich") == ["ENTRY#welcome"]
    assert keys(ledger, "escrow:t") == []

    with pytest.raises(InsufficientFunds) as refused:
        ledger.book([Posting("rich", "t:joker:1", "joker", jokers=-2, guarded=True)], 1.0)
    assert refused.value.accounts == ["rich"]
    # Exactly covered is covered.
    ledger.book([Posting("poor", "t:exact", "escrow", points=-99, guarded=True)], 1.0)
    assert ledger.balance("poor") == Balance(0, 0)
    # An unguarded debit (a lost match) may go below zero.
    ledger.book([Posting("poor", "t:settlement:2", "settlement", points=-1000)], 1.0)
    assert ledger.balance("poor") == Balance(-1000, 0)


# --- explain() --------------------------------------------------------------------------


def test_explain_maps_a_short_account_at_an_offset(ledger: Ledger, db: Any) -> None:
    fund(ledger, "p1", 50)
    postings = [
        Posting("p1", "t:escrow:1", "escrow", points=-100, match="t", guarded=True),
        Posting("escrow:t", "t:escrow:1", "escrow", points=100, match="t"),
    ]
    exc = cancelled(db, [marker(db, fails=False), *ledger.items(postings, 1.0)])
    explained = Ledger.explain(exc, postings, offset=1)
    assert isinstance(explained, InsufficientFunds)
    assert explained.accounts == ["p1"]
    # Read without the offset, the same cancellation points at the wrong item.
    assert getattr(Ledger.explain(exc, postings), "accounts", None) != ["p1"]


def test_explain_maps_an_existing_entry_to_already_booked(ledger: Ledger, db: Any) -> None:
    postings = [Posting("p1", "t:settlement:1", "settlement", points=10, match="t")]
    ledger.book(postings, 1.0)
    exc = cancelled(db, [marker(db, fails=False), *ledger.items(postings, 1.0)])
    assert isinstance(Ledger.explain(exc, postings, offset=1), AlreadyBooked)
    # An existing entry wins over a short balance: the booking happened before.
    short = [Posting("p1", "t:settlement:1", "settlement", points=-10_000, guarded=True)]
    exc = cancelled(db, ledger.items(short, 1.0))
    assert isinstance(Ledger.explain(exc, short), AlreadyBooked)


def test_explain_leaves_other_failures_as_they_are(ledger: Ledger, db: Any) -> None:
    postings = [Posting("p1", "k", "external", points=10)]
    exc = cancelled(db, [marker(db, fails=True), *ledger.items(postings, 1.0)])
    assert Ledger.explain(exc, postings, offset=1) is exc
    other = RuntimeError("not a transaction")
    assert Ledger.explain(other, postings) is other
    assert ledger.balance("p1") == Balance(0, 0)


# --- reconcile() -------------------------------------------------------------------------


def test_reconcile_sums_every_entry_and_sees_a_drift(ledger: Ledger, db: Any) -> None:
    for i in range(30):
        ledger.book([Posting("p1", f"k{i:02d}", "external", points=i, jokers=i % 2)], float(i))
    stored, summed = ledger.reconcile("p1")
    assert stored == summed == Balance(sum(range(30)), 15)
    assert len(ledger.entries("p1")) == 30

    # A balance changed without its entry is what reconcile exists to catch.
    db.update_item(
        TableName=TABLE,
        Key={"pk": s("ACCOUNT#p1"), "sk": s("BALANCE")},
        UpdateExpression="ADD points :p",
        ExpressionAttributeValues={":p": {"N": "1"}},
    )
    stored, summed = ledger.reconcile("p1")
    assert stored.points == summed.points + 1
    assert ledger.reconcile("nobody") == (Balance(0, 0), Balance(0, 0))
