"""Use cases of matchmaking: queues, friends tables, forming tables of four.

Quick-start queues exist per match length and variant, arena queues per stake.
Joining a queue writes the entry and starts a ticket of the state machine
(``flow.py``), which keeps asking ``try_match`` until the player is seated,
gone or expired. A table forms in one transaction that moves four players
from the queue to the table (each conditional on still holding their
ticket), creates the table item carrying ``TableFormed`` in its outbox, and in
the arena moves every stake to escrow (refused if a balance does not cover it).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from typing import Any

from pydantic import ConfigDict, TypeAdapter

from services.common import constants
from services.common.adapters import Clock, Pusher, send_task_success
from services.common.events import (
    BOT_ID_PREFIX,
    BotLevel,
    MatchEnded,
    PlayerDisconnected,
    SeatPlayer,
    TableAborted,
    TableFormed,
    is_bot_id,
    is_friends_table,
    is_practice,
)
from services.common.flood import FloodControl, over_rate
from services.common.ledger import Ledger, escrow
from services.common.protocol import (
    Balance,
    BalanceMessage,
    CreateTable,
    FillBots,
    JoinTable,
    Leave,
    LobbyMessage,
    LobbyView,
    Queue,
    QueuedMessage,
    QueueLeftMessage,
    Rematch,
)
from services.common.records import Lobby, Outbound, QueueTicket, TableRecord
from services.common.routing import Refusal, guarded, read_message
from services.common.store import GameStore
from services.common.tableviews import error_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Busy, Committed, LostRace, Outcome, Short
from services.matchmaking.store import LobbyStore, PlayerStore, QueueStore
from shared_engine import MatchMode

SOURCE = f"{constants.EVENT_SOURCE}.matchmaking"
LOBBY_MESSAGE: TypeAdapter[
    Queue | Leave | CreateTable | JoinTable | FillBots | Rematch | Balance
] = (
    # Built by the first lobby message: the events path never reads one.
    TypeAdapter(LobbyMessage, config=ConfigDict(defer_build=True))
)
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
FORM_ATTEMPTS = 5
ENTRY_TTL = 24 * 3600


def rematch_code(table_id: str, attempt: int) -> str:
    """The lobby code of a rematch of ``table_id``: every one of its four, asking at the
    same moment, computes the same code, so they meet in one lobby without a lock. The
    next attempt's code serves when a lobby (another's, or a rematch its host closed)
    holds this one. Guessing it gains nothing: only the four hold its seats."""
    digest = hashlib.sha256(f"{table_id}:{attempt}".encode()).digest()
    return "".join(CODE_ALPHABET[b % len(CODE_ALPHABET)] for b in digest[:CODE_LENGTH])


def queue_key(mode: MatchMode, variant: str, stake: int) -> str:
    return f"{mode.value}:{variant}:{stake}"


def _reply(player_id: str, cid: str | None) -> tuple[str, str] | None:
    """Who gets the answer that echoes ``cid`` (None: nothing to echo)."""
    return (player_id, cid) if cid is not None else None


def _lobby_people(lobby: Lobby, seats: dict[int, SeatPlayer] | None = None) -> list[str]:
    """Who hears of a lobby's change: its seated people (``seats``, when they changed),
    and a rematch's players not seated yet, for whom it is the offer (or the news that
    the others started without them)."""
    seated = [p.player_id for p in (seats or lobby.seats).values() if not p.bot]
    return seated + [p.player_id for p in lobby.held.values() if p.player_id not in seated]


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


class MatchmakingService:
    def __init__(
        self,
        *,
        players: PlayerStore,
        queues: QueueStore,
        lobbies: LobbyStore,
        games: GameStore,
        ledger: Ledger,
        pusher: Pusher,
        machine: Any,
        state_machine_arn: str | None,
        clock: Clock,
        telemetry: Telemetry,
        queue_seconds: int,
        poll_seconds: int,
        arena_stakes: tuple[int, ...],
        max_message_bytes: int,
        flood: FloodControl | None = None,
        join_limit: tuple[int, int] = (12, 600),
    ) -> None:
        self._flood = flood
        self._join_limit = join_limit
        """Invite codes a player may try, per this many seconds."""
        self._players = players
        self._queues = queues
        self._lobbies = lobbies
        self._games = games
        self._ledger = ledger
        self._pusher = pusher
        self._machine = machine
        self._machine_arn = state_machine_arn
        self._clock = clock
        self._telemetry = telemetry
        self._queue_seconds = queue_seconds
        self._poll_seconds = poll_seconds
        self._stakes = arena_stakes
        self._max_bytes = max_message_bytes

    # --- WebSocket routes --------------------------------------------------------------

    def receive(self, player: tuple[str, str] | None, connection_id: str, body: str | None) -> None:
        """One WebSocket message: checked, parsed, dispatched; the client always hears back."""

        def refuse(refusal: Refusal) -> None:
            self._refuse(connection_id, refusal.code, refusal.message, refusal.cid)

        def handle() -> None:
            limited = over_rate(self._flood, connection_id, body)
            if limited is not None:
                refuse(limited)
                return
            incoming = read_message(LOBBY_MESSAGE, player, body, self._max_bytes)
            if isinstance(incoming, Refusal):
                refuse(incoming)
            else:
                self._dispatch(incoming.player_id, incoming.name, connection_id, incoming.message)

        guarded(self._telemetry, refuse, handle, body)

    def _dispatch(
        self,
        player_id: str,
        name: str,
        connection_id: str,
        message: Queue | Leave | CreateTable | JoinTable | FillBots | Rematch | Balance,
    ) -> None:
        self._telemetry.annotate(player_id=player_id, action=message.action)
        cid = message.cid
        if not isinstance(message, Balance) and self._replaced(player_id, connection_id):
            self._telemetry.count("refused_opened_elsewhere")
            self._refuse(
                connection_id,
                "opened_elsewhere",
                "you opened the game in another tab or device; use that one, or reload here",
                cid,
            )
            return
        if isinstance(message, Queue):
            self.queue(player_id, name, connection_id, message)
        elif isinstance(message, Leave):
            self.leave(player_id, connection_id, cid=cid)
        elif isinstance(message, CreateTable):
            self.create_table(player_id, name, connection_id, message)
        elif isinstance(message, JoinTable):
            self.join_table(player_id, name, connection_id, message.code.upper(), cid)
        elif isinstance(message, FillBots):
            self.fill_bots(player_id, connection_id, cid, message.level)
        elif isinstance(message, Rematch):
            self.rematch(player_id, name, connection_id, message.table_id, cid)
        else:
            self.balance(player_id, connection_id, cid)

    def _replaced(self, player_id: str, connection_id: str) -> bool:
        """Whether the player has opened a newer connection: the queue's and the lobby's
        pushes go to that one, so this one may no longer queue, leave or join for them."""
        current = self._players.player(player_id).connection_id
        return current is not None and current != connection_id

    def queue(self, player_id: str, name: str, connection_id: str, message: Queue) -> None:
        arena = message.mode is MatchMode.ARENA
        stake = message.stake if arena else 0
        cid = message.cid
        if arena and stake not in self._stakes:
            stakes = f"arena stakes are {list(self._stakes)}"
            self._refuse(connection_id, "invalid_stake", stakes, cid)
            return
        if arena and self._ledger.balance(player_id).points < stake:
            self._refuse(
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
        if not self._claim(self._queues.join(entry, ENTRY_TTL), connection_id, cid):
            return
        self._telemetry.count("tickets_opened")
        self._pusher.send(
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
            ticket = {
                "player_id": entry.player_id,
                "queue_key": entry.queue_key,
                "sk": entry.sk,
                "name": entry.name,
                "ticket": entry.ticket,
                "expires_at": entry.expires_at,
                "poll_seconds": self._poll_seconds,
            }
            self._machine.start_execution(
                stateMachineArn=self._machine_arn,
                name=entry.ticket,
                input=json.dumps({"ticket": ticket}),
            )

    def leave(
        self,
        player_id: str,
        connection_id: str | None,
        reason: str = "left",
        cid: str | None = None,
    ) -> None:
        player = self._players.player(player_id)
        ticket = QueueTicket.held_by(player)
        if ticket is not None:
            if self._dequeue(ticket):
                self._telemetry.count("tickets_left")
                if connection_id:
                    left = QueueLeftMessage(reason=reason, cid=cid)  # type: ignore[arg-type]
                    self._pusher.send(connection_id, left.model_dump())
                return
        elif player.lobby is not None:
            lobby = self._lobbies.lobby(player.lobby)
            if (
                lobby is not None
                and lobby.status == "forming"
                and self._leave_lobby(lobby, player_id, connection_id, reason, cid)
            ):
                return
        # Not waiting, or a table took the player first: every ``leave`` hears back.
        if connection_id:
            self._refuse(connection_id, "not_queued", "you are not waiting for a table", cid)

    def _leave_lobby(
        self,
        lobby: Lobby,
        player_id: str,
        connection_id: str | None,
        reason: str,
        cid: str | None = None,
    ) -> bool:
        """A guest frees their seat; the host closes the lobby and every guest is told.
        False if the lobby changed first (it started, or the host closed it)."""
        members = [
            p.player_id for p in lobby.seats.values() if not p.bot and p.player_id != player_id
        ]
        if not self._lobbies.leave(lobby, player_id):
            return False
        if connection_id:
            left = QueueLeftMessage(reason=reason, cid=cid)  # type: ignore[arg-type]
            self._pusher.send(connection_id, left.model_dump())
        if player_id != lobby.host:
            self._show_lobby(lobby.code, members)
            return True
        closed = QueueLeftMessage(reason="closed").model_dump()
        for member in members:
            connection = self._players.player(member).connection_id
            if connection:
                self._pusher.send(connection, closed)
        return True

    def create_table(
        self, player_id: str, name: str, connection_id: str, message: CreateTable
    ) -> None:
        host = SeatPlayer(player_id=player_id, name=name)
        for _ in range(FORM_ATTEMPTS):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            lobby = Lobby(
                code, player_id, message.mode, message.variant, "forming", {1: host}, None
            )
            claimed = self._claim(
                self._lobbies.open(lobby, host, int(self._clock.now()) + ENTRY_TTL),
                connection_id,
                message.cid,
            )
            if claimed is None:
                return
            if not claimed:
                continue
            self._telemetry.count("lobbies_opened")
            self._show_lobby(code, [player_id], _reply(player_id, message.cid))
            return
        raise RuntimeError("no free invite code")

    def join_table(
        self, player_id: str, name: str, connection_id: str, code: str, cid: str | None = None
    ) -> None:
        if not self._lobbies.try_code(
            player_id, self._clock.now(), self._join_limit[0], self._join_limit[1]
        ):
            self._refuse(
                connection_id, "rate_limited", "too many invite codes tried: wait a while", cid
            )
            return
        me = SeatPlayer(player_id=player_id, name=name)
        reply = _reply(player_id, cid)
        for _ in range(FORM_ATTEMPTS):
            lobby = self._lobbies.lobby(code)
            if lobby is None or lobby.status != "forming":
                self._refuse(
                    connection_id, "unknown_code", "no table is waiting with this code", cid
                )
                return
            if any(p.player_id == player_id for p in lobby.seats.values()):
                self._show_lobby(code, [player_id], reply)
                return
            free = [s for s in (1, 2, 3, 4) if s not in lobby.seats and s not in lobby.held]
            if not free:
                self._refuse(connection_id, "table_full", "this table is full", cid)
                return
            joined = self._lobbies.join(code, free[0], me)
            claimed = self._claim(joined, connection_id, cid, (player_id, code))
            if claimed is None:
                return
            if not claimed:
                continue
            self._seated(code, reply)
            return
        self._refuse(connection_id, "table_full", "this table is full", cid)

    def fill_bots(
        self,
        player_id: str,
        connection_id: str,
        cid: str | None = None,
        level: BotLevel = "normal",
    ) -> None:
        player = self._players.player(player_id)
        lobby = self._lobbies.lobby(player.lobby) if player.lobby is not None else None
        if lobby is None or lobby.status != "forming":
            self._refuse(connection_id, "unknown_code", "you have no table waiting", cid)
            return
        if lobby.host != player_id:
            self._refuse(connection_id, "not_host", "only the host fills seats with bots", cid)
            return
        seats = dict(lobby.seats)
        for seat in (1, 2, 3, 4):
            if seat not in seats:
                seats[seat] = SeatPlayer(
                    player_id=f"{BOT_ID_PREFIX}{lobby.code}-{seat}",
                    name=f"Bot {seat}",
                    bot=True,
                    level=level,
                )
        self._start_lobby(lobby, seats, _reply(player_id, cid))

    def rematch(
        self, player_id: str, name: str, connection_id: str, table_id: str, cid: str | None
    ) -> None:
        """Seat ``player_id`` again in their seat of ``table_id``'s four, in the lobby of
        its rematch: the first to ask creates it, the others take their held seats."""
        table = self._games.get_table(table_id)
        if table is None or not is_friends_table(table_id):
            self._refuse(connection_id, "no_table", "only a friends table is played again", cid)
            return
        seat = table.seat_of(player_id)
        if seat is None:
            self._refuse(connection_id, "not_seated", "you did not play at this table", cid)
            return
        if table.status == "playing":
            self._refuse(connection_id, "not_over", "this table's match is not over yet", cid)
            return
        me = SeatPlayer(player_id=player_id, name=name)
        reply = _reply(player_id, cid)
        attempt = tries = 0
        while tries < FORM_ATTEMPTS * 2 and attempt < FORM_ATTEMPTS:
            tries += 1
            code = rematch_code(table_id, attempt)
            lobby = self._lobbies.lobby(code)
            if lobby is None:
                bots = {s: p for s, p in table.seats.items() if p.bot}
                held = {s: p for s, p in table.seats.items() if not p.bot}
                lobby = Lobby(
                    code,
                    player_id,
                    table.mode,
                    table.variant,
                    "forming",
                    {**bots, seat: me},
                    None,
                    rematch_of=table_id,
                    held=held,
                )
                outcome = self._lobbies.open(lobby, me, int(self._clock.now()) + ENTRY_TTL)
            elif lobby.rematch_of != table_id or lobby.status == "closed":
                attempt += 1
                continue
            elif seat in lobby.seats and lobby.seats[seat].player_id == player_id:
                self._send_lobby(lobby, [player_id], reply, lobby.table_id)
                return
            elif lobby.status != "forming" or seat in lobby.seats:
                self._refuse(connection_id, "table_full", "the others started without you", cid)
                return
            else:
                outcome = self._lobbies.join(code, seat, me, leaving=table_id)
            claimed = self._claim(outcome, connection_id, cid, (player_id, code))
            if claimed is None:
                return
            if not claimed:
                continue
            self._telemetry.count("rematch_seats_taken")
            self._seated(code, reply)
            return
        self._refuse(connection_id, "table_full", "no rematch could be opened: try again", cid)

    def _seated(self, code: str, reply: tuple[str, str] | None) -> None:
        """After a seat was taken: the fourth starts the table, else everyone sees the
        lobby. Read again, not the copy read before the write: two players taking the
        last two seats at once each read three empty, and one of them must start it."""
        lobby = self._lobbies.lobby(code)
        if lobby is None:
            return
        if lobby.status == "forming" and len(lobby.seats) == 4:
            self._start_lobby(lobby, lobby.seats, reply)
        else:
            self._send_lobby(lobby, _lobby_people(lobby), reply, lobby.table_id)

    def balance(self, player_id: str, connection_id: str, cid: str | None = None) -> None:
        balance = self._ledger.balance(player_id)
        answer = BalanceMessage(points=balance.points, jokers=balance.jokers, cid=cid)
        self._pusher.send(connection_id, answer.model_dump())

    # --- forming tables -------------------------------------------------------------------

    def _new_table(
        self, table_id: str, mode: MatchMode, variant: str, stake: int, seats: dict[int, SeatPlayer]
    ) -> tuple[TableRecord, Outbound]:
        """A new table of these four, and the ``TableFormed`` its creation publishes."""
        table = TableRecord(
            table_id=table_id,
            mode=mode,
            variant="classic" if variant == "classic" else "twos-meld",
            stake=stake,
            seats=seats,
            updated_at=self._clock.now(),
        )
        formed = TableFormed(
            table_id=table_id,
            mode=mode,
            variant=table.variant,
            stake=stake,
            seats={str(seat): player for seat, player in seats.items()},  # type: ignore[misc]
        )
        return table, Outbound("TableFormed", formed.model_dump(mode="json"), SOURCE)

    def _start_lobby(
        self, lobby: Lobby, seats: dict[int, SeatPlayer], reply: tuple[str, str] | None = None
    ) -> None:
        """Seat the four at a new table and tell them; ``reply``: the player whose message
        started it, and its ``cid``."""
        table_id = f"f-{lobby.code}-{uuid.uuid4().hex[:8]}"
        table, event = self._new_table(table_id, MatchMode(lobby.mode), lobby.variant, 0, seats)
        if not self._lobbies.form_table(lobby, seats, table, event):
            self._telemetry.info("lobby start lost a race", code=lobby.code)
            members = [p.player_id for p in lobby.seats.values() if not p.bot]
            self._show_lobby(lobby.code, members, reply)
            return
        self._telemetry.count("tables_formed")
        started = Lobby(**{**lobby.__dict__, "seats": seats})
        self._send_lobby(started, _lobby_people(started), reply, table_id)

    def form_tables(self, queue: str, shard: int = 0) -> int:
        """Seat waiting players four by four, oldest first; returns how many tables formed.

        ``shard`` is read first (the passing ticket's): in a busy queue its four oldest
        form the table, so each shard's tickets drain their own shard."""
        formed = 0
        mode, variant, stake_text = queue.split(":")
        stake = int(stake_text)
        for _ in range(FORM_ATTEMPTS * 4):
            entries = self._queues.waiting(queue, 4, shard)
            if len(entries) < 4:
                return formed
            table_id = uuid.uuid4().hex[:16]
            seats = {
                # A bot that queued like a person (the local stack's fillers) is still a bot:
                # its table is practice (MATCH-3), with no stake taken.
                i + 1: SeatPlayer(player_id=e.player_id, name=e.name, bot=is_bot_id(e.player_id))
                for i, e in enumerate(entries)
            }
            table, event = self._new_table(table_id, MatchMode(mode), variant, stake, seats)
            postings = escrow(table_id, seats, stake) if stake else []
            outcome = self._queues.form_table(entries, table, event, postings)
            if not outcome.ok:
                self._drop_blockers(outcome, entries)
                continue
            formed += 1
            self._telemetry.count("tables_formed")
        return formed

    def _drop_blockers(self, outcome: Outcome, entries: list[QueueTicket]) -> None:
        """After a lost formation: stale entries go (their player moved on), players short
        of the stake leave the queue."""
        for entry in entries:
            if isinstance(outcome, LostRace) and entry.player_id in outcome.players:
                self._queues.delete_entry(entry)
            if isinstance(outcome, Short) and entry.player_id in outcome.accounts:
                self._expire(entry, "insufficient_balance")

    def _dequeue(self, entry: QueueTicket) -> bool:
        """Take the ticket's player out of the queue; False if a table took them first."""
        return self._queues.leave(entry)

    def _expire(self, entry: QueueTicket, reason: str) -> bool:
        if not self._dequeue(entry):
            return False
        connection = self._players.player(entry.player_id).connection_id
        if connection:
            if reason == "insufficient_balance":
                self._pusher.send(
                    connection,
                    error_message("insufficient_balance", "your points no longer cover the stake"),
                )
            else:
                self._pusher.send(connection, QueueLeftMessage(reason="timeout").model_dump())
        return True

    # --- the state machine's task and the events ---------------------------------------------

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
        """The state machine gave up on a ticket: the player leaves the queue and is told."""
        self._expire(_entry(ticket), "timeout")

    def match_over(self, event: MatchEnded | TableAborted) -> None:
        """Free every seated player to queue again."""
        for player in event.seats.values():
            if not player.bot:
                self._players.release(player.player_id, event.table_id)

    def player_disconnected(self, event: PlayerDisconnected) -> None:
        """A queued or waiting player whose connection closed leaves the queue or lobby.

        Not when the player has opened another connection since (a reload, another
        tab): the place is that connection's now, and the event may arrive after it
        queued again.
        """
        if event.table_id is None and not self._replaced(event.player_id, event.connection_id):
            self.leave(event.player_id, None, reason="disconnected")

    # --- answers ----------------------------------------------------------------------------

    def _claim(
        self,
        outcome: Outcome,
        connection_id: str,
        cid: str | None = None,
        joining: tuple[str, str] | None = None,
    ) -> bool | None:
        """What a commit that puts a player somewhere did: True if it did, None if the
        player is busy elsewhere (answered ``already_playing``), False if another write
        lost a race (read again and retry). ``joining``: (player, lobby code); a player
        found in that lobby is not busy: their own message, sent twice at once, seated
        them (the retry shows it)."""
        if not isinstance(outcome, Committed):
            if isinstance(outcome, Busy) and (
                joining is None or self._players.player(joining[0]).lobby != joining[1]
            ):
                self._refuse(
                    connection_id,
                    "already_playing",
                    "you are already queued, in a lobby or at a table",
                    cid,
                )
                return None
            return False
        return True

    def _show_lobby(
        self, code: str, members: list[str], reply: tuple[str, str] | None = None
    ) -> None:
        lobby = self._lobbies.lobby(code)
        if lobby is not None:
            self._send_lobby(lobby, members, reply)

    def _send_lobby(
        self,
        lobby: Lobby,
        members: list[str],
        reply: tuple[str, str] | None,
        table_id: str | None = None,
    ) -> None:
        """Each member's own ``lobby`` (``you`` is the member); ``reply``'s player's answers
        their message and echoes its ``cid``."""
        for member in members:
            connection = self._players.player(member).connection_id
            if not connection:
                continue
            view = LobbyView(
                code=lobby.code,
                host=lobby.host,
                you=member,
                mode=MatchMode(lobby.mode),
                variant="classic" if lobby.variant == "classic" else "twos-meld",
                seats={str(seat): lobby.seats.get(seat) for seat in (1, 2, 3, 4)},  # type: ignore[misc]
                status="started" if table_id else "forming",
                table_id=table_id,
                practice=is_practice(lobby.seats.values()),
                rematch_of=lobby.rematch_of,
                awaiting={str(seat): p for seat, p in lobby.awaiting().items()},  # type: ignore[misc]
                cid=reply[1] if reply is not None and reply[0] == member else None,
            )
            self._pusher.send(connection, view.model_dump(mode="json"))

    def _refuse(self, connection_id: str, code: str, message: str, cid: str | None = None) -> None:
        self._telemetry.count(f"refused_{code}")
        self._pusher.send(connection_id, error_message(code, message, cid=cid))
