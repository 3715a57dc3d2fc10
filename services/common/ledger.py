"""The book: balances and their append-only entries, changed only together.

Every change of a balance is an entry keyed by an idempotency key derived from
(match, player, purpose), written create-only in the same commit that updates
the balance. A replayed event, a retried Lambda or a crash between two calls
therefore never books twice and never loses a booking: either the entry and
the balance change both exist, or neither does. Balances can always be
recomputed from the entries (``reconcile``).

Postings are an ordinary part of any unit of work (``Ledger.writes``): the
ledger service books a match's end with them, matchmaking moves the arena's
stakes to escrow with the table it forms, and the turn service pays the joker
button with the move. So no service imports another to pay.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from services.common.events import SeatPlayer, is_practice
from services.common.frozen import Frozen
from services.common.records import shard_of
from services.common.unit_of_work import (
    Absent,
    AllOf,
    AlreadyDone,
    AnyOf,
    AtLeast,
    AtMost,
    Committed,
    ConditionFailed,
    Equals,
    Item,
    Key,
    Outcome,
    Put,
    Short,
    Storage,
    Update,
    VersionConflict,
    Write,
    all_of,
)
from shared_engine.rules import JOKER_BUTTON_COST

BALANCE = "BALANCE"
DAY_LIMIT = ConditionFailed("day_limit")
"""A client's bookings of the day would pass its daily limit."""
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


def closing(table_id: str, purpose: Purpose) -> Posting:
    """A match is settled, refunded or voided once, whichever comes first: the create-only
    marker that every booking of the match's end carries makes any later one a
    duplicate (a second MatchEnded, a refund after the payout, or the reverse)."""
    return Posting(match_account(table_id), f"{table_id}:closed", purpose, match=table_id)


RECORD_SHARDS = 8
"""A client's key records spread over this many partition keys by a hash of the key, so
that a client booking as often as this game does (231 a second at the peak) takes no
more than a quarter of a partition's writes on any one (docs/capacity.md). A repeat
finds its record in the same shard. Never change it: a repeat of a key recorded under
another count would not find its record and would book again."""


def client_pk(client: str, shard: int) -> str:
    return f"CLIENT#{client}#{shard}"


class Posting(Frozen):
    """One entry: ``points``/``jokers`` change ``account``; ``key`` makes it happen once."""

    account: str
    key: str
    purpose: Purpose
    points: int = 0
    jokers: int = 0
    match: str | None = None
    guarded: bool = False
    """A debit that must be covered by the balance (escrow, joker button)."""

    @property
    def entry_key(self) -> Key:
        return {"pk": account_pk(self.account), "sk": f"ENTRY#{self.key}"}

    def entry(self, at: float) -> Item:
        """The entry's item (a ledger entry record)."""
        return {
            **self.entry_key,
            "points": self.points,
            "jokers": self.jokers,
            "purpose": self.purpose,
            "at": at,
            **({"match": self.match} if self.match else {}),
        }


class Entry(Frozen):
    """A booked entry as it is read back (``Posting.entry`` wrote it)."""

    key: str
    purpose: str
    points: int
    jokers: int
    match: str | None
    at: float

    @classmethod
    def from_item(cls, item: Item) -> Entry:
        match = item.get("match")
        return cls(
            key=str(item["sk"]).removeprefix("ENTRY#"),
            purpose=str(item.get("purpose", "")),
            points=int(item.get("points", 0)),
            jokers=int(item.get("jokers", 0)),
            match=str(match) if match is not None else None,
            at=float(item.get("at", 0)),
        )


class Balance(Frozen):
    """An account's balance item (the sum of its entries)."""

    points: int
    jokers: int

    @staticmethod
    def key_of(account: str) -> Key:
        return {"pk": account_pk(account), "sk": BALANCE}

    @classmethod
    def from_item(cls, item: Item | None) -> Balance:
        found = item or {}
        return cls(int(found.get("points", 0)), int(found.get("jokers", 0)))


class ExternalBooking(Frozen):
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

    @property
    def record_key(self) -> Key:
        return {
            "pk": client_pk(self.client, shard_of(self.key, RECORD_SHARDS)),
            "sk": f"KEY#{self.key}",
        }

    def record(self, after: Balance, at: float) -> Item:
        """The key's record: the body and the balance it left, so a repeat answers the same."""
        return {
            **self.record_key,
            "account": self.account,
            "points": self.points,
            "jokers": self.jokers,
            "after_points": after.points,
            "after_jokers": after.jokers,
            "at": at,
        }

    def recorded(self, item: Item) -> tuple[ExternalBooking, Balance]:
        body = ExternalBooking(
            self.client,
            self.key,
            str(item["account"]),
            int(item["points"]),
            int(item["jokers"]),
        )
        return body, Balance(int(item["after_points"]), int(item["after_jokers"]))


def escrow(table_id: str, seats: dict[int, SeatPlayer], stake: int) -> list[Posting]:
    """MATCH-4: each player's stake moves to the table's escrow; refused if not covered.
    A practice table (MATCH-3) holds no stake."""
    postings: list[Posting] = []
    if is_practice(seats.values()):
        return postings
    for seat, player in sorted(seats.items()):
        key = f"{table_id}:escrow:{seat}"
        postings.append(
            Posting(player.player_id, key, "escrow", points=-stake, match=table_id, guarded=True)
        )
        postings.append(
            Posting(escrow_account(table_id), key, "escrow", points=stake, match=table_id)
        )
    return postings


def joker_debit(table_id: str, round_number: int, player_id: str) -> Posting:
    """JOKER-1: the button's cost in spare jokers, once per round per player, paid with the
    move, at every table (a practice table too)."""
    return Posting(
        player_id,
        f"{table_id}:joker:{round_number}",
        "joker",
        jokers=-JOKER_BUTTON_COST,
        match=table_id,
        guarded=True,
    )


class Ledger:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    @staticmethod
    def writes(postings: Sequence[Posting], at: float) -> list[Write]:
        """The writes of ``postings``: one create-only entry each (``AlreadyDone`` if it
        exists), then one balance update per account, in the order accounts first appear;
        a guarded debit that the balance does not cover is ``Short`` of that account."""
        entries: list[Write] = [
            Put("ledger", p.entry(at), when=Absent(), refusal=AlreadyDone()) for p in postings
        ]
        points: dict[str, int] = defaultdict(int)
        jokers: dict[str, int] = defaultdict(int)
        guarded: dict[str, bool] = defaultdict(bool)
        for p in postings:
            points[p.account] += p.points
            jokers[p.account] += p.jokers
            guarded[p.account] |= p.guarded
        updates: list[Write] = []
        for account in dict.fromkeys(p.account for p in postings):
            covered = None
            if guarded[account]:
                covered = all_of(
                    AtLeast("points", -points[account]) if points[account] < 0 else None,
                    AtLeast("jokers", -jokers[account]) if jokers[account] < 0 else None,
                )
            updates.append(
                Update(
                    "ledger",
                    Balance.key_of(account),
                    add={"points": points[account], "jokers": jokers[account]},
                    when=covered,
                    refusal=Short((account,)),
                )
            )
        return entries + updates

    def book(self, postings: Sequence[Posting], at: float) -> Outcome:
        """Book postings at once: ``Committed``, ``AlreadyDone`` (booked before) or ``Short``."""
        return self._storage.commit(self.writes(postings, at))

    def balance(self, account: str) -> Balance:
        return Balance.from_item(self._storage.get("ledger", Balance.key_of(account)))

    # --- the other modes' bookings ------------------------------------------------------

    def booked(self, booking: ExternalBooking) -> tuple[ExternalBooking, Balance] | None:
        """What the client's key booked before (its body, the balance it left), if anything."""
        item = self._storage.get("ledger", booking.record_key)
        return booking.recorded(item) if item is not None else None

    def book_external(
        self,
        booking: ExternalBooking,
        day: str,
        day_limits: Balance,
        at: float,
        shards: int = 1,
    ) -> tuple[Outcome, Balance]:
        """Book once per (client, key); the outcome and the balance it leaves.

        One commit: the key's create-only record (with the body and the
        resulting balance, so a repeat answers exactly what this one did), the
        entry, the balance update conditional on the balance read just before
        (so the result is exact), and the client's usage of the day conditional
        on its limits. ``AlreadyDone``, ``VersionConflict`` (the balance moved),
        ``DAY_LIMIT`` or ``Short`` (a debit the balance does not cover) book nothing.

        The usage is counted in one of ``shards`` counters of the day, by the
        key, and ``day_limits`` is what one counter may take (the client's
        share per shard): a busy client's usage is not one hot item.
        """
        found = self._storage.get("ledger", Balance.key_of(booking.account))
        before = Balance.from_item(found)
        after = Balance(before.points + booking.points, before.jokers + booking.jokers)
        if (booking.points < 0 and after.points < 0) or (booking.jokers < 0 and after.jokers < 0):
            return Short((booking.account,)), before
        used = Balance(abs(booking.points), abs(booking.jokers))
        if used.points > day_limits.points or used.jokers > day_limits.jokers:
            return DAY_LIMIT, before
        posting = booking.posting()
        unchanged = (
            all_of(Equals("points", before.points), Equals("jokers", before.jokers))
            if found is not None
            else Absent()
        )
        usage = Update(
            "ledger",
            {"pk": client_pk(booking.client, shard_of(booking.key, shards)), "sk": f"DAY#{day}"},
            add={"points": used.points, "jokers": used.jokers},
            when=AnyOf(
                (
                    Absent(),
                    AllOf(
                        (
                            AtMost("points", day_limits.points - used.points),
                            AtMost("jokers", day_limits.jokers - used.jokers),
                        )
                    ),
                )
            ),
            refusal=DAY_LIMIT,
        )
        outcome = self._storage.commit(
            [
                Put("ledger", booking.record(after, at), when=Absent(), refusal=AlreadyDone()),
                Put("ledger", posting.entry(at), when=Absent(), refusal=AlreadyDone()),
                Update(
                    "ledger",
                    Balance.key_of(booking.account),
                    add={"points": booking.points, "jokers": booking.jokers},
                    when=unchanged,
                    refusal=VersionConflict(),
                ),
                usage,
            ]
        )
        return outcome, after if isinstance(outcome, Committed) else before

    def entries(self, account: str) -> list[Item]:
        return self._storage.query("ledger", account_pk(account), prefix="ENTRY#")

    def booked_entries(self, account: str) -> list[Entry]:
        return [Entry.from_item(item) for item in self.entries(account)]

    def has(self, posting: Posting) -> bool:
        """Whether the posting's entry was booked (by whichever commit)."""
        return self._storage.get("ledger", posting.entry_key) is not None

    def reconcile(self, account: str) -> tuple[Balance, Balance]:
        """(the stored balance, the sum of the entries): they must be equal."""
        entries = self.entries(account)
        summed = Balance(
            sum(int(e["points"]) for e in entries), sum(int(e["jokers"]) for e in entries)
        )
        return self.balance(account), summed
