"""What each of the operators' actions would change, and the one commit that changes it.

A plan is read from what the tables hold at that moment: the operator confirms
its changes, and the function carries out a plan it reads again itself, only if
it is the one confirmed (``services.ops.app``). Every change is one commit with
the conditions that make it safe (the table at the version read, create-only
entries, a covered debit), so an action happens once, whole, or not at all.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Literal

from services.common.adapters import Clock, Closer
from services.common.afterwrite import AfterWrite
from services.common.events import TableAborted
from services.common.frozen import Frozen
from services.common.ledger import Ledger, Posting, closing, escrow_account, match_account
from services.common.presence import PresenceStore
from services.common.records import ClosedRecord, Connection, Outbound, Player, TableRecord
from services.common.store import GameStore
from services.common.unit_of_work import AlreadyDone, Committed, Outcome, Short, Storage

Action = Literal["void", "close", "credit", "kick"]
SUPPORT_ACCOUNT = "house:support"
"""Where support credits come from: every credit is a transfer, so the book stays zero-sum."""
OPERATORS = "ops"
"""The emitter of what the operators publish (``events.OPERATOR_EMITS``)."""
DONE_BEFORE: dict[str, Any] = {"outcome": "done before"}
APPLIED: dict[str, Any] = {"outcome": "applied"}


class ActionRefused(Exception):
    """The action cannot be done as asked, and nothing was changed; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def changed_meanwhile() -> ActionRefused:
    return ActionRefused(
        "plan_changed", "what the action would change moved meanwhile: plan it again and confirm"
    )


class CreditLimit(Frozen):
    """The most one ``credit`` may move, either way: larger amounts go through the ledger's
    own review, never through an operator."""

    points: int = 10_000
    jokers: int = 5


class Plan(Frozen):
    """What an action would change; ``carry_out`` changes it, given who acts."""

    action: Action
    target: str
    changes: dict[str, Any]
    done_before: bool
    """A previous run did it: carrying it out again changes nothing."""
    carry_out: Callable[[str], dict[str, Any]]


class Planner:
    def __init__(
        self,
        storage: Storage,
        after_write: AfterWrite,
        connections: Closer,
        clock: Clock,
        limit: CreditLimit,
    ) -> None:
        self._storage = storage
        self._games = GameStore(storage)
        self._ledger = Ledger(storage)
        self._after_write = after_write
        self._connections = connections
        self._clock = clock
        self._limit = limit

    def void(self, table_id: str, reason: str) -> Plan:
        """Reverse every entry the match booked (stakes in escrow, a settlement, payouts, a
        refund, joker debits) with compensating entries, mark the match closed so that no
        later settlement or refund books, and end it if it is still played: one commit."""
        table = self._table(table_id)
        accounts = [p.player_id for p in table.seats.values() if not p.bot]
        accounts += [escrow_account(table_id), match_account(table_id)]
        booked = [
            (account, entry)
            for account in accounts
            for entry in self._ledger.booked_entries(account)
            if entry.match == table_id
        ]
        marker = Posting(match_account(table_id), f"{table_id}:void", "void", match=table_id)
        postings = [
            Posting(
                account,
                f"void:{entry.key}",
                "void",
                points=-entry.points,
                jokers=-entry.jokers,
                match=table_id,
            )
            for account, entry in booked
            if entry.points or entry.jokers
        ]
        postings.append(marker)
        keys = {entry.key for _, entry in booked}
        if f"{table_id}:closed" not in keys:
            postings.append(closing(table_id, "void"))
        points: dict[str, int] = defaultdict(int)
        jokers: dict[str, int] = defaultdict(int)
        for p in postings:
            points[p.account] += p.points
            jokers[p.account] += p.jokers
        changes = {
            "points": {a: v for a, v in points.items() if v},
            "jokers": {a: v for a, v in jokers.items() if v},
            "reversed_entries": sum(p.key.startswith("void:") for p in postings),
            "sum": sum(points.values()),
            "ends_the_match": table.status == "playing",
        }

        def carry_out(operator: str) -> dict[str, Any]:
            if table.status == "playing":
                outcome = self._end(table, operator, f"voided: {reason}", postings)
            else:
                outcome = self._ledger.book(postings, self._clock.now())
            if isinstance(outcome, Committed):
                return APPLIED
            if isinstance(outcome, AlreadyDone) and self._ledger.has(marker):
                return DONE_BEFORE
            raise changed_meanwhile()

        return Plan("void", table_id, changes, marker.key in keys, carry_out)

    def close(self, table_id: str, reason: str) -> Plan:
        """End a table still played as when every player left: ``TableAborted`` (source
        ``canasta.ops``), so its stakes are refunded and its players freed by the services
        that do so. At the version read: a move made since makes it plan again."""
        table = self._table(table_id)
        done = table.status != "playing"
        changes = {
            "status": table.status if done else f"{table.status} -> aborted",
            "version": table.version,
            "players": [p.player_id for p in table.seats.values() if not p.bot],
        }

        def carry_out(operator: str) -> dict[str, Any]:
            if isinstance(self._end(table, operator, reason), Committed):
                return APPLIED
            raise changed_meanwhile()

        return Plan("close", table_id, changes, done, carry_out)

    def credit(
        self, player_id: str, points: int, jokers: int, reason: str, key: str | None
    ) -> Plan:
        """Move points or jokers between support's account and a player's, within the limit
        either way; ``key`` (by default one made of the request) makes it happen once."""
        if self._player(player_id) is None or ":" in player_id:
            raise ActionRefused("not_a_player_account", f"{player_id!r} is not a player's account")
        if not points and not jokers:
            raise ActionRefused("nothing_to_credit", "give points or jokers to credit")
        if abs(points) > self._limit.points or abs(jokers) > self._limit.jokers:
            raise ActionRefused(
                "credit_limit",
                f"over the limit of {self._limit.points} points and {self._limit.jokers} "
                "jokers per credit, either way",
            )
        key = (
            key
            or hashlib.sha256(f"{player_id}|{points}|{jokers}|{reason}".encode()).hexdigest()[:16]
        )
        credited = Posting(
            player_id,
            f"credit:{key}",
            "credit",
            points=points,
            jokers=jokers,
            guarded=points < 0 or jokers < 0,
        )
        postings = [
            credited,
            Posting(
                SUPPORT_ACCOUNT,
                f"credit:{key}:{player_id}",
                "credit",
                points=-points,
                jokers=-jokers,
            ),
        ]

        def carry_out(operator: str) -> dict[str, Any]:
            booked = self._ledger.book(postings, self._clock.now())
            if isinstance(booked, AlreadyDone):
                return DONE_BEFORE
            if isinstance(booked, Short):
                raise ActionRefused(
                    "insufficient_balance",
                    f"the balance of {', '.join(booked.accounts)} does not cover it",
                )
            balance = self._ledger.balance(player_id)
            return {**APPLIED, "balance": {"points": balance.points, "jokers": balance.jokers}}

        changes = {"points": points, "jokers": jokers, "key": key, "from": SUPPORT_ACCOUNT}
        return Plan("credit", player_id, changes, self._ledger.has(credited), carry_out)

    def kick(self, connection_id: str) -> Plan:
        """Close a connection, as API Gateway does when it drops one: ``$disconnect`` runs."""
        item = self._storage.get("connections", Connection.key_of(connection_id))
        player = str(item["player_id"]) if item else None

        def carry_out(operator: str) -> dict[str, Any]:
            return APPLIED if self._connections.close(connection_id) else DONE_BEFORE

        return Plan("kick", connection_id, {"player_id": player}, item is None, carry_out)

    def _end(
        self, table: TableRecord, operator: str, reason: str, postings: list[Posting] | None = None
    ) -> Outcome:
        """Abort the table at the version read, with its ``CLOSED`` item (whose outbox
        carries ``TableAborted``) and ``postings``; then the seats are shown the ended table."""
        now = self._clock.now()
        aborted = TableAborted(
            table_id=table.table_id,
            mode=table.mode,
            stake=table.stake,
            seats={str(k): p for k, p in table.seats.items()},  # type: ignore[misc]
            reason=f"closed by an operator: {reason}",
        )
        new = table.evolve(
            status="aborted", version=table.version + 1, turn_deadline=None, updated_at=now
        )
        closed = ClosedRecord(
            table_id=table.table_id,
            operator=operator,
            reason=reason,
            at=now,
            outbox=(Outbound.of(aborted, emitter=OPERATORS),),
        )
        outcome = self._games.close_table(table, new, closed, postings or ())
        if isinstance(outcome, Committed):
            self._after_write(new)
        return outcome

    def _table(self, table_id: str) -> TableRecord:
        table = self._games.get_table(table_id)
        if table is None:
            raise ActionRefused("no_table", f"no table {table_id!r}")
        return table

    def _player(self, player_id: str) -> Player | None:
        return PresenceStore(self._storage).get_player(player_id)
