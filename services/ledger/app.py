"""Settling matches and serving the other modes' bookings.

MATCH-3 (quick start, friends): each winner gains 1,000 points per round
played, each loser loses as much. MATCH-4 (arena): the stakes were moved to
the table's escrow account when the table formed; each winner receives two
stakes from it (net: the stake), losers nothing (net: minus the stake); an
aborted match refunds every stake. A match with a seat played by a bot from
its start is practice (MATCH-3) and books nothing at all: no house account
stands in for the bots, so playing against them cannot mint points.

What a match's end books is what the games table holds, never what an event
says: anyone allowed to put an event on the bus could otherwise mint points.
``MatchEnded`` and ``TableAborted`` only name the table whose records are read
(the relay publishes them after the write that ended the table, and every read
is strongly consistent, so the records are always there for a genuine event).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Literal

from services.common.adapters import Clock, Publisher
from services.common.events import (
    LedgerSettled,
    MatchEnded,
    SeatPlayer,
    TableAborted,
    is_practice,
)
from services.common.identities import player_id_of
from services.common.ledger import (
    DAY_LIMIT,
    Balance,
    ExternalBooking,
    Ledger,
    Posting,
    closing,
    escrow_account,
)
from services.common.records import Outbound, TableRecord
from services.common.settings import LedgerClient
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Committed, Short, VersionConflict
from shared_engine import MatchMode
from shared_engine.match import held_stake, settle_match, winner_after

BOOKING_ATTEMPTS = 10
"""A booking retries when another on the same account commits between its read and its
write: it fails (``busy``) only if ten others commit during it."""


class BookingRefused(Exception):
    """A request of the API refused, with its code; nothing was booked."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def settlement(table: TableRecord, winner: int) -> list[Posting]:
    """The postings that settle an ended table; their keys are (match, player, purpose).

    The amounts are the engine's (``settle_match``) for the rounds the table played;
    arena payouts come out of the table's escrow, the other modes' settlements out of
    nowhere but the losers' matching debits.
    """
    amounts = settle_match(table.mode, winner, table.round, table.stake)
    postings = [closing(table.table_id, "settlement")]
    for seat, player in sorted(table.seats.items()):
        paid = amounts[seat].paid
        account = player.player_id
        if table.mode is MatchMode.ARENA:
            if paid > 0:
                key = f"{table.table_id}:payout:{seat}"
                postings.append(Posting(account, key, "payout", points=paid, match=table.table_id))
                postings.append(
                    Posting(
                        escrow_account(table.table_id),
                        key,
                        "payout",
                        points=-paid,
                        match=table.table_id,
                    )
                )
        else:
            key = f"{table.table_id}:settlement:{seat}"
            postings.append(Posting(account, key, "settlement", points=paid, match=table.table_id))
    return postings


def refund(table: TableRecord) -> list[Posting]:
    held = held_stake(table.mode, table.stake)
    postings = [closing(table.table_id, "refund")]
    for seat, player in sorted(table.seats.items()):
        key = f"{table.table_id}:refund:{seat}"
        postings.append(Posting(player.player_id, key, "refund", points=held, match=table.table_id))
        postings.append(
            Posting(
                escrow_account(table.table_id),
                key,
                "refund",
                points=-held,
                match=table.table_id,
            )
        )
    return postings


class LedgerService:
    def __init__(
        self,
        ledger: Ledger,
        store: GameStore,
        publisher: Publisher,
        clock: Clock,
        telemetry: Telemetry,
        *,
        clients: Mapping[str, LedgerClient] | None = None,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._clients = dict(clients or {})
        self._publisher = publisher
        self._clock = clock
        self._telemetry = telemetry

    def match_ended(self, event: MatchEnded) -> None:
        """Settle the table if its records say it ended, as they say it ended.

        Its winner and rounds are the ones the rules give its scored rounds
        (``winner_after``): a table whose records disagree with them books nothing.
        """
        self._telemetry.annotate(table_id=event.table_id)
        table = self._store.get_table(event.table_id)
        if table is None or table.status != "finished":
            self._unbacked(event, "the table has not ended")
            return
        if self._practice(table.seats.values()):
            return
        scores = self._store.scores(table.table_id)
        winner = winner_after(table.mode, [score.totals for score in scores])
        if winner is None or [score.round for score in scores] != list(range(1, table.round + 1)):
            self._unbacked(event, "the table's rounds do not end its match")
            return
        self._settle(table.table_id, "settlement", settlement(table, winner))

    def table_aborted(self, event: TableAborted) -> None:
        """Refund the stakes the table's record says were held, if it says it was aborted."""
        self._telemetry.annotate(table_id=event.table_id)
        table = self._store.get_table(event.table_id)
        if table is None or table.status != "aborted":
            self._unbacked(event, "the table was not aborted")
            return
        if self._practice(table.seats.values()):
            return
        if held_stake(table.mode, table.stake) > 0:
            self._settle(table.table_id, "refund", refund(table))

    def _unbacked(self, event: MatchEnded | TableAborted, reason: str) -> None:
        """An event the games table does not back books nothing and is not retried: a
        genuine one is published only after the write it reports, so a later read would
        find nothing more. Counted, so that a forger (or a wiring mistake) is seen."""
        self._telemetry.warning("booking refused", reason=reason, detail_type=type(event).__name__)
        self._telemetry.count("ledger_unbacked_events")

    def _practice(self, players: Iterable[SeatPlayer]) -> bool:
        """MATCH-3: a practice match's end books nothing, not even its closing marker."""
        if not is_practice(players):
            return False
        self._telemetry.info("booking skipped", reason="practice match")
        self._telemetry.count("ledger_practice_skipped")
        return True

    def _settle(
        self, table_id: str, purpose: Literal["settlement", "refund"], postings: list[Posting]
    ) -> None:
        """Book the match's end once; announce what was booked.

        A duplicate books and announces nothing: ``LedgerSettled`` is for
        observers, and must never report changes the ledger does not hold.
        """
        outcome = self._ledger.book(postings, self._clock.now())
        if isinstance(outcome, AlreadyDone):
            self._telemetry.info("booking skipped", reason="already booked", purpose=purpose)
            return
        if not isinstance(outcome, Committed):
            raise RuntimeError(f"the match's end was not booked: {outcome}")
        self._telemetry.count(f"ledger_{purpose}s")
        changes: dict[str, int] = {}
        for p in postings:
            if p.points:
                changes[p.account] = changes.get(p.account, 0) + p.points
        settled = LedgerSettled(table_id=table_id, purpose=purpose, changes=changes)
        self._publisher.publish([Outbound.of(settled)])

    # --- the API of the other modes --------------------------------------------------

    def balance(self, client: str | None, subject: str) -> Balance:
        self._caller(client)
        return self._ledger.balance(self._player_account(subject))

    def post(self, client: str | None, subject: str, key: str, points: int, jokers: int) -> Balance:
        """Credit or debit a player's account once per (client, ``key``), within the client's
        limits; the balance the booking left, the same for every repeat of it."""
        name, limits = self._caller(client)
        booking = ExternalBooking(name, key, self._player_account(subject), points, jokers)
        if abs(points) > limits.points_per_booking or abs(jokers) > limits.jokers_per_booking:
            raise BookingRefused("booking_limit", "the booking is larger than this client may book")
        day = time.strftime("%Y-%m-%d", time.gmtime(self._clock.now()))
        day_limits = Balance(*limits.shard_limits)
        for _ in range(BOOKING_ATTEMPTS):
            done = self._ledger.booked(booking)
            if done is not None:
                body, after = done
                if body != booking:
                    raise BookingRefused(
                        "idempotency_conflict", "this idempotency key booked another body before"
                    )
                self._telemetry.info("booking skipped", reason="already booked", key=key)
                return after
            outcome, after = self._ledger.book_external(
                booking, day, day_limits, self._clock.now(), limits.day_shards
            )
            if isinstance(outcome, (AlreadyDone, VersionConflict)):
                continue
            if outcome == DAY_LIMIT:
                raise BookingRefused(
                    "daily_limit", "this client's bookings of the day reach its limit"
                )
            if isinstance(outcome, Short):
                raise BookingRefused("insufficient_balance", "the balance does not cover the debit")
            self._telemetry.count("ledger_external_bookings")
            return after
        raise BookingRefused(
            "busy", "the account changed during every attempt: retry with the same key"
        )

    def _caller(self, client: str | None) -> tuple[str, LedgerClient]:
        """The configured client invoking the API (its alias) and its limits, or
        ``unknown_client``."""
        limits = self._clients.get(client) if client is not None else None
        if client is None or limits is None:
            raise BookingRefused("unknown_client", "invoke the alias configured for your mode")
        self._telemetry.annotate(client=client)
        return client, limits

    @staticmethod
    def _player_account(subject: str) -> str:
        """The account of the player a token's ``sub`` names, as the authorizer maps it. The
        game's own accounts (house, escrows, match markers, a host's bots) hold a ``:``,
        which no subject does."""
        account = player_id_of(subject)
        if account is None:
            raise BookingRefused("not_a_player_account", "only a player's subject may be named")
        return account

    def welcome(self, account: str, points: int, jokers: int) -> None:
        """The local sign-in's starting balance, once per account."""
        self._ledger.book(
            [Posting(account, "welcome", "welcome", points=points, jokers=jokers)],
            self._clock.now(),
        )
