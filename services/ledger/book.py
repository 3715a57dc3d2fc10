"""The ledger's book: balances and their append-only entries, changed only together.

Every change of a balance is an entry keyed by an idempotency key derived from
(match, player, purpose), written create-only in the same DynamoDB
transaction that updates the balance. A replayed event, a retried Lambda or a
crash between two calls therefore never books twice and never loses a
booking: either the entry and the balance change both exist, or neither does.
Balances can always be recomputed from the entries (``reconcile``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from services.common.dynamo import (
    TRANSACTION_CANCELLED,
    DynamoClient,
    cancelled_on,
    error_code,
    n,
    query_all,
    s,
)

BALANCE = "BALANCE"
Purpose = Literal["settlement", "escrow", "payout", "refund", "joker", "welcome", "external"]


def account_pk(account: str) -> str:
    return f"ACCOUNT#{account}"


def escrow_account(table_id: str) -> str:
    return f"escrow:{table_id}"


def match_account(table_id: str) -> str:
    """Holds no points: its entries mark what happened once to a match (its closing)."""
    return f"match:{table_id}"


@dataclass(frozen=True)
class Posting:
    """One entry: ``points``/``jokers`` change ``account``; ``key`` makes it happen once."""

    account: str
    key: str
    purpose: Purpose
    points: int = 0
    jokers: int = 0
    match: str | None = None
    guarded: bool = False
    """A debit that must be covered by the balance (escrow, joker button)."""


class AlreadyBooked(Exception):
    """The postings' entries exist: this booking happened before."""


class InsufficientFunds(Exception):
    def __init__(self, accounts: list[str]) -> None:
        super().__init__(", ".join(accounts))
        self.accounts = accounts


@dataclass(frozen=True)
class Balance:
    points: int
    jokers: int


class Ledger:
    def __init__(self, client: DynamoClient, table_name: str) -> None:
        self._db = client
        self._name = table_name

    # --- transaction items, for this service and for moves that pay with the account

    def items(self, postings: Sequence[Posting], at: float) -> list[dict[str, Any]]:
        """Transaction items for ``postings``: one create-only entry each, one update per account.

        Entries come first, in posting order, then the balance updates in the
        order their accounts first appear; ``accounts_of_items`` maps a
        cancellation back to the account whose funds did not cover a debit.
        """
        entries = [
            {
                "Put": {
                    "TableName": self._name,
                    "Item": {
                        "pk": s(account_pk(p.account)),
                        "sk": s(f"ENTRY#{p.key}"),
                        "points": n(p.points),
                        "jokers": n(p.jokers),
                        "purpose": s(p.purpose),
                        "at": n(at),
                        **({"match": s(p.match)} if p.match else {}),
                    },
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
            for p in postings
        ]
        points: dict[str, int] = defaultdict(int)
        jokers: dict[str, int] = defaultdict(int)
        guarded: dict[str, bool] = defaultdict(bool)
        for p in postings:
            points[p.account] += p.points
            jokers[p.account] += p.jokers
            guarded[p.account] |= p.guarded
        updates = []
        for account in dict.fromkeys(p.account for p in postings):
            update: dict[str, Any] = {
                "TableName": self._name,
                "Key": {"pk": s(account_pk(account)), "sk": s(BALANCE)},
                "UpdateExpression": "ADD points :p, jokers :j",
                "ExpressionAttributeValues": {":p": n(points[account]), ":j": n(jokers[account])},
            }
            if guarded[account]:
                conditions = []
                if points[account] < 0:
                    conditions.append("points >= :need_p")
                    update["ExpressionAttributeValues"][":need_p"] = n(-points[account])
                if jokers[account] < 0:
                    conditions.append("jokers >= :need_j")
                    update["ExpressionAttributeValues"][":need_j"] = n(-jokers[account])
                if conditions:
                    update["ConditionExpression"] = " AND ".join(conditions)
            updates.append({"Update": update})
        return entries + updates

    @staticmethod
    def explain(exc: Exception, postings: Sequence[Posting], offset: int = 0) -> Exception:
        """What a cancelled transaction that held ``items(postings)`` at ``offset`` means."""
        if error_code(exc) != TRANSACTION_CANCELLED:
            return exc
        if any(cancelled_on(exc, offset + i) for i in range(len(postings))):
            return AlreadyBooked()
        accounts = list(dict.fromkeys(p.account for p in postings))
        short = [a for i, a in enumerate(accounts) if cancelled_on(exc, offset + len(postings) + i)]
        return InsufficientFunds(short) if short else exc

    # --- standalone bookings ----------------------------------------------------------

    def book(self, postings: Sequence[Posting], at: float) -> None:
        """Book postings atomically; ``AlreadyBooked`` if done before, ``InsufficientFunds``."""
        try:
            self._db.transact_write_items(TransactItems=self.items(postings, at))
        except Exception as exc:
            raise self.explain(exc, postings) from None

    def balance(self, account: str) -> Balance:
        item = self._db.get_item(
            TableName=self._name,
            Key={"pk": s(account_pk(account)), "sk": s(BALANCE)},
            ConsistentRead=True,
        ).get("Item", {})
        return Balance(
            int(item.get("points", {}).get("N", 0)), int(item.get("jokers", {}).get("N", 0))
        )

    def entries(self, account: str) -> list[dict[str, Any]]:
        return query_all(
            self._db,
            TableName=self._name,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :entry)",
            ExpressionAttributeValues={":pk": s(account_pk(account)), ":entry": s("ENTRY#")},
            ConsistentRead=True,
        )

    def reconcile(self, account: str) -> tuple[Balance, Balance]:
        """(the stored balance, the sum of the entries): they must be equal."""
        entries = self.entries(account)
        summed = Balance(
            sum(int(e["points"]["N"]) for e in entries), sum(int(e["jokers"]["N"]) for e in entries)
        )
        return self.balance(account), summed
