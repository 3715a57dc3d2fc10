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
Purpose = Literal[
    "settlement", "escrow", "payout", "refund", "joker", "welcome", "external", "void", "credit"
]
"""``void`` reverses a match's entries and ``credit`` is support's: both the operators'."""


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


class BalanceMoved(Exception):
    """The balance changed between its read and the booking: read again and retry."""


class DayLimitReached(Exception):
    """The client's bookings of the day would pass its daily limit."""


class InsufficientFunds(Exception):
    def __init__(self, accounts: list[str]) -> None:
        super().__init__(", ".join(accounts))
        self.accounts = accounts


@dataclass(frozen=True)
class Balance:
    points: int
    jokers: int


@dataclass(frozen=True)
class ExternalBooking:
    """A booking of another mode: ``client``'s ``key`` books it once, with this body only."""

    client: str
    key: str
    account: str
    points: int
    jokers: int

    def posting(self) -> Posting:
        return Posting(
            self.account,
            f"external:{self.client}:{self.key}",
            "external",
            points=self.points,
            jokers=self.jokers,
        )


def client_pk(client: str) -> str:
    return f"CLIENT#{client}"


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
        return self._balance(account)[0]

    def _balance(self, account: str) -> tuple[Balance, bool]:
        """The balance and whether its item exists (an account nothing booked on has none)."""
        item = self._db.get_item(
            TableName=self._name,
            Key={"pk": s(account_pk(account)), "sk": s(BALANCE)},
            ConsistentRead=True,
        ).get("Item")
        found = item or {}
        balance = Balance(
            int(found.get("points", {}).get("N", 0)), int(found.get("jokers", {}).get("N", 0))
        )
        return balance, item is not None

    # --- the other modes' bookings ------------------------------------------------------

    def booked(self, booking: ExternalBooking) -> tuple[ExternalBooking, Balance] | None:
        """What the client's key booked before (its body, the balance it left), if anything."""
        item = self._db.get_item(
            TableName=self._name,
            Key={"pk": s(client_pk(booking.client)), "sk": s(f"KEY#{booking.key}")},
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            return None
        body = ExternalBooking(
            booking.client,
            booking.key,
            item["account"]["S"],
            int(item["points"]["N"]),
            int(item["jokers"]["N"]),
        )
        return body, Balance(int(item["after_points"]["N"]), int(item["after_jokers"]["N"]))

    def book_external(
        self, booking: ExternalBooking, day: str, day_limits: Balance, at: float
    ) -> Balance:
        """Book once per (client, key) and return the balance it leaves.

        One transaction: the key's create-only record (with the body and the
        resulting balance, so a repeat answers exactly what this one did), the
        entry, the balance update conditional on the balance read just before
        (so the result is exact), and the client's usage of the day conditional
        on its limits. ``AlreadyBooked``, ``BalanceMoved``, ``DayLimitReached``
        or ``InsufficientFunds`` (a debit the balance does not cover) book nothing.
        """
        before, exists = self._balance(booking.account)
        after = Balance(before.points + booking.points, before.jokers + booking.jokers)
        if (booking.points < 0 and after.points < 0) or (booking.jokers < 0 and after.jokers < 0):
            raise InsufficientFunds([booking.account])
        used = Balance(abs(booking.points), abs(booking.jokers))
        if used.points > day_limits.points or used.jokers > day_limits.jokers:
            raise DayLimitReached()
        posting = booking.posting()
        key_item = {
            "pk": s(client_pk(booking.client)),
            "sk": s(f"KEY#{booking.key}"),
            "account": s(booking.account),
            "points": n(booking.points),
            "jokers": n(booking.jokers),
            "after_points": n(after.points),
            "after_jokers": n(after.jokers),
            "at": n(at),
        }
        unchanged = (
            "points = :before_p AND jokers = :before_j" if exists else "attribute_not_exists(pk)"
        )
        entry, update = self.items([posting], at)
        update["Update"]["ConditionExpression"] = unchanged
        if exists:
            update["Update"]["ExpressionAttributeValues"].update(
                {":before_p": n(before.points), ":before_j": n(before.jokers)}
            )
        usage = {
            "Update": {
                "TableName": self._name,
                "Key": {"pk": s(client_pk(booking.client)), "sk": s(f"DAY#{day}")},
                "UpdateExpression": "ADD points :p, jokers :j",
                "ConditionExpression": (
                    "attribute_not_exists(pk) OR (points <= :room_p AND jokers <= :room_j)"
                ),
                "ExpressionAttributeValues": {
                    ":p": n(used.points),
                    ":j": n(used.jokers),
                    ":room_p": n(day_limits.points - used.points),
                    ":room_j": n(day_limits.jokers - used.jokers),
                },
            }
        }
        record = {
            "Put": {
                "TableName": self._name,
                "Item": key_item,
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
        try:
            self._db.transact_write_items(TransactItems=[record, entry, update, usage])
        except Exception as exc:
            if error_code(exc) != TRANSACTION_CANCELLED:
                raise
            if cancelled_on(exc, 0) or cancelled_on(exc, 1):
                raise AlreadyBooked() from None
            if cancelled_on(exc, 2):
                raise BalanceMoved() from None
            if cancelled_on(exc, 3):
                raise DayLimitReached() from None
            raise
        return after

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
