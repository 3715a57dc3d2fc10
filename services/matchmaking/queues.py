"""Quick-start and arena queues: a ticket per waiting player, four of them a table.

Quick-start queues exist per match length and variant, arena queues per stake.
Joining a queue writes the entry and starts a ticket of the state machine
(``flow.py``), which keeps asking ``try_match`` until the player is seated,
gone or expired. A table forms in one transaction that moves four players
from the queue to the table (each conditional on still holding their
ticket), creates the table item carrying ``TableFormed`` in its outbox, and in
the arena moves every stake to escrow (refused if a balance does not cover it).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from services.common.adapters import Clock, send_task_success
from services.common.events import SeatPlayer
from services.common.ledger import Ledger, escrow
from services.common.protocol import Queue, QueuedMessage, QueueLeftMessage
from services.common.records import QueueTicket
from services.common.tableviews import error_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import LostRace, Outcome, Short
from services.matchmaking.forming import ENTRY_TTL, FORM_ATTEMPTS, Tables
from services.matchmaking.replies import Replies
from services.matchmaking.store import PlayerStore, QueueStore
from shared_engine import MatchMode, variant_of


def queue_key(mode: MatchMode, variant: str, stake: int) -> str:
    return f"{mode.value}:{variant}:{stake}"


def _ticket(entry: QueueTicket, poll_seconds: int) -> dict[str, Any]:
    """The state machine's input for a queue entry: all a pass needs, without a read."""
    return {
        "player_id": entry.player_id,
        "queue_key": entry.queue_key,
        "sk": entry.sk,
        "name": entry.name,
        "ticket": entry.ticket,
        "expires_at": entry.expires_at,
        "poll_seconds": poll_seconds,
    }


def _entry(ticket: dict[str, Any]) -> QueueTicket:
    """The queue entry a state machine ticket stands for."""
    return QueueTicket(
        queue_key=ticket["queue_key"],
        sk=ticket["sk"],
        player_id=ticket["player_id"],
        name=ticket["name"],
        ticket=ticket["ticket"],
        expires_at=float(ticket["expires_at"]),
    )


class Queues:
    def __init__(
        self,
        *,
        store: QueueStore,
        players: PlayerStore,
        tables: Tables,
        replies: Replies,
        ledger: Ledger,
        machine: Any,
        state_machine_arn: str | None,
        clock: Clock,
        telemetry: Telemetry,
        queue_seconds: int,
        poll_seconds: int,
        arena_stakes: tuple[int, ...],
    ) -> None:
        self._store = store
        self._players = players
        self._tables = tables
        self._replies = replies
        self._ledger = ledger
        self._machine = machine
        self._machine_arn = state_machine_arn
        self._clock = clock
        self._telemetry = telemetry
        self._queue_seconds = queue_seconds
        self._poll_seconds = poll_seconds
        self._stakes = arena_stakes

    def queue(self, player_id: str, name: str, connection_id: str, message: Queue) -> None:
        arena = message.mode is MatchMode.ARENA
        stake = message.stake if arena else 0
        cid = message.cid
        if arena and stake not in self._stakes:
            stakes = f"arena stakes are {list(self._stakes)}"
            self._replies.refuse(connection_id, "invalid_stake", stakes, cid)
            return
        if arena and self._ledger.balance(player_id).points < stake:
            self._replies.refuse(
                connection_id, "insufficient_balance", "your points do not cover the stake", cid
            )
            return
        now = self._clock.now()
        entry = QueueTicket(
            queue_key=queue_key(message.mode, message.variant, stake),
            sk=f"{now:017.6f}#{player_id}",
            player_id=player_id,
            name=name,
            ticket=uuid.uuid4().hex,
            expires_at=now + self._queue_seconds,
        )
        if not self._replies.claimed(self._store.join(entry, ENTRY_TTL), connection_id, cid):
            return
        self._telemetry.count("tickets_opened")
        self._replies.send(
            connection_id,
            QueuedMessage(
                mode=message.mode,
                variant=message.variant,
                stake=stake,
                expires_at=entry.expires_at,
                cid=cid,
            ).model_dump(mode="json"),
        )
        if self._machine_arn is not None:
            self._machine.start_execution(
                stateMachineArn=self._machine_arn,
                name=entry.ticket,
                input=json.dumps({"ticket": _ticket(entry, self._poll_seconds)}),
            )

    def leave(
        self, ticket: QueueTicket, connection_id: str | None, reason: str, cid: str | None = None
    ) -> bool:
        """Take the player out of the queue and tell them; False if a table took them first."""
        if not self._store.leave(ticket):
            return False
        self._telemetry.count("tickets_left")
        self._replies.left(connection_id, reason, cid)
        return True

    def form_tables(self, queue: str, shard: int = 0) -> int:
        """Seat waiting players four by four, oldest first; returns how many tables formed.

        ``shard`` is read first (the passing ticket's): in a busy queue its four oldest
        form the table, so each shard's tickets drain their own shard."""
        formed = 0
        mode, variant, stake_text = queue.split(":")
        stake = int(stake_text)
        for _ in range(FORM_ATTEMPTS * 4):
            entries = self._store.waiting(queue, 4, shard)
            if len(entries) < 4:
                return formed
            table_id = uuid.uuid4().hex[:16]
            # Each entry was queued through a connection with a verified token: a player's
            # seat, whatever the id looks like (only a host seats bots, MATCH-3).
            seats = {
                i + 1: SeatPlayer(player_id=e.player_id, name=e.name) for i, e in enumerate(entries)
            }
            table, event = self._tables.new(
                table_id, MatchMode(mode), variant_of(variant), stake, seats
            )
            postings = escrow(table_id, seats, stake) if stake else []
            outcome = self._store.form_table(entries, table, event, postings)
            if not outcome.ok:
                self._drop_blockers(outcome, entries)
                continue
            formed += 1
            self._telemetry.count("tables_formed")
        return formed

    def try_match(self, ticket: dict[str, Any]) -> str:
        """One pass of a ticket: seated, gone, expired or waiting."""
        entry = _entry(ticket)
        player = self._players.player(entry.player_id)
        if player.ticket == entry.ticket:
            self.form_tables(entry.queue_key, entry.shard)
            player = self._players.player(entry.player_id)
        if player.ticket != entry.ticket:
            return "seated" if player.table_id is not None else "gone"
        if self._clock.now() >= entry.expires_at and self._expire(entry, "timeout"):
            self._telemetry.count("tickets_expired")
            return "expired"
        return "waiting"

    def answer_task(self, ticket: dict[str, Any], task_token: str) -> None:
        """Answer one pass; a task already answered or timed out needs no answer any more."""
        status = self.try_match(ticket)
        late = send_task_success(self._machine, task_token, {"status": status})
        if late is not None:
            self._telemetry.info("task answered before", reason=late)

    def abandon(self, ticket: dict[str, Any]) -> None:
        """The state machine gave up on a ticket: the player leaves the queue and is told.

        Counted whether or not the player still waited: the execution ends in a Succeed
        state, so this count is the only sign that its tasks went unanswered (alarmed on).
        """
        self._expire(_entry(ticket), "timeout")
        self._telemetry.count("tickets_abandoned")

    def _drop_blockers(self, outcome: Outcome, entries: list[QueueTicket]) -> None:
        """After a lost formation: stale entries go (their player moved on), players short
        of the stake leave the queue."""
        for entry in entries:
            if isinstance(outcome, LostRace) and entry.player_id in outcome.players:
                self._store.delete_entry(entry)
            if isinstance(outcome, Short) and entry.player_id in outcome.accounts:
                self._expire(entry, "insufficient_balance")

    def _expire(self, entry: QueueTicket, reason: str) -> bool:
        if not self._store.leave(entry):
            return False
        if reason == "insufficient_balance":
            message = error_message("insufficient_balance", "your points no longer cover the stake")
        else:
            message = QueueLeftMessage(reason="timeout").model_dump()
        self._replies.tell(entry.player_id, message)
        return True
