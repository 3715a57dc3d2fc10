"""Quick-start and arena queues: a ticket per waiting player, four of them a table.

Quick-start queues exist per match length and variant, arena queues per stake.
Joining a queue writes the entry and starts a ticket of the state machine
(``flow.py``), whose one task is answered only when the ticket ends. Its
``try_match`` seats the ticket at once if four are waiting, and otherwise keeps
the task token on the player item; whoever ends the ticket answers that token: the
formation that seats it (``seated``), its player's ``leave`` or disconnect, or a
balance short of the stake (``gone``). A ``try_match`` that finds its ticket
already ended (a formation seated it before its token arrived) answers its own.
A ticket nobody ends times out in the state machine, whose ``abandon`` takes the
player out and tells them. A table forms in one transaction that moves four
players from the queue to the table (each conditional on still holding their
ticket, with the task token they were read with), creates the table item
carrying ``TableFormed`` in its outbox, and in the arena moves every stake to
escrow (refused if a balance does not cover it).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from services.common.adapters import Clock, send_task_success
from services.common.events import SeatPlayer
from services.common.ledger import Ledger, escrow
from services.common.profiles import ProfileStore
from services.common.protocol import Queue, QueuedMessage, QueueLeftMessage
from services.common.records import Player, QueueTicket
from services.common.tableviews import error_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Contended, Short
from services.matchmaking import skill
from services.matchmaking.forming import ENTRY_TTL, FORM_ATTEMPTS, Tables
from services.matchmaking.replies import Replies
from services.matchmaking.store import PlayerStore, QueueStore
from shared_engine import MatchMode, variant_of

SEATED = "seated"
GONE = "gone"
"""How a ticket's task is answered: seated at a table, or out of the queue otherwise."""
WAITING = "waiting"
"""A ``try_match`` that kept its token: nobody answers it until the ticket ends."""
TIMED_OUT = "States.Timeout"
"""The error of a task unanswered for the ticket's ``wait_seconds``: the queue time was up."""


def queue_key(mode: MatchMode, variant: str, stake: int) -> str:
    return f"{mode.value}:{variant}:{stake}"


def _ticket(entry: QueueTicket, wait_seconds: int) -> dict[str, Any]:
    """The state machine's input for a queue entry: all its task needs, without a read;
    ``wait_seconds``, the task's timeout, is the ticket's queue time."""
    return {
        "player_id": entry.player_id,
        "queue_key": entry.queue_key,
        "sk": entry.sk,
        "name": entry.name,
        "ticket": entry.ticket,
        "expires_at": entry.expires_at,
        "wait_seconds": wait_seconds,
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
        profiles: ProfileStore,
        clock: Clock,
        telemetry: Telemetry,
        queue_seconds: int,
        arena_stakes: tuple[int, ...],
    ) -> None:
        self._store = store
        self._players = players
        self._tables = tables
        self._replies = replies
        self._ledger = ledger
        self._machine = machine
        self._machine_arn = state_machine_arn
        self._profiles = profiles
        self._clock = clock
        self._telemetry = telemetry
        self._queue_seconds = queue_seconds
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
            rating=self._arena_rating(player_id) if arena else None,
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
                input=json.dumps({"ticket": _ticket(entry, self._queue_seconds)}),
            )

    def _arena_rating(self, player_id: str) -> float | None:
        """The player's arena rating (μ) as they queue: one read of their profile."""
        profile = self._profiles.profile(player_id)
        rating = profile.ratings.get(MatchMode.ARENA.value) if profile else None
        return rating.mu if rating else None

    def leave(
        self, ticket: QueueTicket, connection_id: str | None, reason: str, cid: str | None = None
    ) -> bool:
        """Take the player out of the queue, end the ticket and tell them; False if a table
        took them first."""
        held = self._take_out(ticket)
        if held is None:
            return False
        self._telemetry.count("tickets_left")
        self._replies.left(connection_id, reason, cid)
        self._answer(held.task_token, GONE)
        return True

    def form_tables(
        self, queue: str, shard: int = 0, tokens: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """Seat waiting players four by four, oldest first, and answer the task of every
        ticket that ends so; returns those tickets and how each ended (seated, or gone
        when its balance no longer covered the stake).

        ``shard`` is read first (the passing ticket's): in a busy queue its four oldest
        form the table, so each shard's tickets drain their own shard. Each of the four
        players is read for the task token their item holds, and seated only as read.
        ``tokens``: the task tokens not kept yet (the passing ticket's, in hand)."""
        known = tokens or {}
        ended: dict[str, str] = {}
        mode, variant, stake_text = queue.split(":")
        stake = int(stake_text)
        arena = MatchMode(mode) is MatchMode.ARENA
        for _ in range(FORM_ATTEMPTS * 4):
            entries = self._seated_next(queue, shard, arena=arena)
            if entries is None:
                break
            held = [(e, self._players.player(e.player_id)) for e in entries]
            stale = [e for e, player in held if player.ticket != e.ticket]
            for entry in stale:  # the player moved on without their entry (a lost write)
                self._store.delete_entry(entry)
            if stale:
                continue
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
            read = [(e, player.task_token) for e, player in held]
            outcome = self._store.form_table(read, table, event, postings)
            if isinstance(outcome, Short):
                ended |= self._drop_short(outcome, held, known)
            if not outcome.ok:
                continue  # a player moved on, a token arrived, or the stake: read again
            self._telemetry.count("tables_formed")
            for entry, player in held:
                self._answer(player.task_token or known.get(entry.ticket), SEATED)
                ended[entry.ticket] = SEATED
        return ended

    def _seated_next(self, queue: str, shard: int, *, arena: bool) -> list[QueueTicket] | None:
        """The four to seat next, in seat order, or None while they wait: in the arena the
        four nearest in rating around the oldest whose window holds them (``skill``),
        elsewhere the four oldest."""
        if not arena:
            entries = self._store.waiting(queue, 4, shard)
            return entries if len(entries) == 4 else None
        chosen = skill.pick(self._store.waiting(queue, skill.POOL, shard), self._clock.now())
        return list(chosen) if chosen else None

    def try_match(self, ticket: dict[str, Any], task_token: str) -> str:
        """The ticket's one task: seated at once if four are waiting, else its token kept
        on the player item for whoever ends the ticket ("waiting"); a ticket that ended
        before its token arrived answers it here. Returns the status answered, or "waiting".

        A repeated delivery keeps the same token again, or finds the ticket ended and
        answers a token that is already answered: Step Functions refuses the second answer.
        """
        entry = _entry(ticket)
        ended = self.form_tables(entry.queue_key, entry.shard, {entry.ticket: task_token})
        if entry.ticket in ended:
            return ended[entry.ticket]
        if self._store.keep_token(entry, task_token):
            return WAITING
        # The player moved on with a write that could not know the token.
        status = SEATED if self._players.player(entry.player_id).table_id is not None else GONE
        self._send(task_token, status)
        return status

    def abandon(self, ticket: dict[str, Any], error: str) -> None:
        """The state machine gave up on a ticket: its task went unanswered for the queue
        time (``TIMED_OUT``) or could not be sent. A player still waiting leaves the queue
        and is told.

        Counted ``tickets_expired`` when a waiting ticket's time was up, else
        ``tickets_abandoned`` (alarmed on): its task was never sent, or the ticket had
        ended without its answer (a function that died between its write and the answer,
        a ``try_match`` never delivered). The execution succeeds either way.
        """
        held = self._take_out(_entry(ticket))
        if held is not None:
            self._replies.tell(held.player_id, QueueLeftMessage(reason="timeout").model_dump())
        expired = held is not None and error == TIMED_OUT
        self._telemetry.count("tickets_expired" if expired else "tickets_abandoned")

    def _take_out(self, ticket: QueueTicket) -> Player | None:
        """Take the ticket's player out of the queue: the player item as it was, with the
        task token it held; None if the ticket had ended (a table took them, or they left)."""
        for _ in range(FORM_ATTEMPTS):
            player = self._players.player(ticket.player_id)
            if player.ticket != ticket.ticket:
                return None
            if self._store.leave(ticket, player.task_token):
                return player
        raise Contended(f"the player of ticket {ticket.ticket} changed on every read")

    def _drop_short(
        self, outcome: Short, held: list[tuple[QueueTicket, Player]], known: Mapping[str, str]
    ) -> dict[str, str]:
        """After a formation refused for a stake: the players short of it leave the queue;
        returns the tickets that ended so."""
        ended: dict[str, str] = {}
        for entry, player in held:
            if entry.player_id in outcome.accounts and self._store.leave(entry, player.task_token):
                message = error_message(
                    "insufficient_balance", "your points no longer cover the stake"
                )
                self._replies.tell(entry.player_id, message)
                self._answer(player.task_token or known.get(entry.ticket), GONE)
                ended[entry.ticket] = GONE
        return ended

    def _answer(self, task_token: str | None, status: str) -> None:
        """End the ticket's task, if its token is known (else its own ``try_match`` will)."""
        if task_token is not None:
            self._send(task_token, status)

    def _send(self, task_token: str, status: str) -> None:
        """A task already answered or timed out needs no answer any more."""
        late = send_task_success(self._machine, task_token, {"status": status})
        if late is not None:
            self._telemetry.info("task answered before", reason=late)
