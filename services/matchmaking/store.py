"""Matchmaking's reads and conditional writes: queue tickets, lobbies, and the players' guard.

A player is in at most one queue, lobby or live table: every write that puts
them somewhere is conditional on the player item naming none of the three
(``Busy`` if it does), and every write that moves them on is conditional on
where it found them (``LostRace`` if they moved). Conditions, not
checks-then-writes, so races cannot seat anyone twice. A table forms in one
unit of work with its players' moves and its ledger postings. The player item
holds the ticket's task token once it arrived, and a player moves on from the
queue only with the token they were read with: whoever moves them answers
that token, and a token kept after they moved is refused, so its own
``try_match`` answers it.

Each write is built by a static method of its store, so each condition can be
tested alone; the use cases call the methods that commit them, in the words of
the game (join, leave, form a table).
"""

from __future__ import annotations

from collections.abc import Sequence

from services.common.events import SeatPlayer
from services.common.ledger import Ledger, Posting
from services.common.presence import PresenceStore
from services.common.records import (
    QUEUE_SHARDS,
    SEATS,
    Lobby,
    Outbound,
    Player,
    QueueTicket,
    TableRecord,
    lobby_key,
    queue_pk,
    seat_attribute,
)
from services.common.store import GameStore
from services.common.unit_of_work import (
    Absent,
    AllOf,
    AnyOf,
    Below,
    Busy,
    Committed,
    Condition,
    ConditionFailed,
    Delete,
    Equals,
    Item,
    Lacks,
    LostRace,
    Outcome,
    Put,
    Storage,
    UnitOfWork,
    Update,
    Write,
    unless_contended,
)

FREE = AllOf((Lacks(Player.QUEUE_KEY), Lacks(Player.LOBBY), Lacks(Player.TABLE_ID)))
"""The player is in no queue, no lobby and at no table."""
CODE_TAKEN = ConditionFailed("code taken")


def _moved(player_id: str) -> LostRace:
    return LostRace((player_id,))


def _holding(ticket: QueueTicket, task_token: str | None) -> Condition:
    """The player still holds the ticket, with the task token they were read with: whoever
    moves them on answers that token, and one kept since refuses the move (``LostRace``:
    read the player again to tell which)."""
    kept = Lacks(Player.TASK_TOKEN) if task_token is None else Equals(Player.TASK_TOKEN, task_token)
    return AllOf((Equals(Player.TICKET, ticket.ticket), kept))


class PlayerStore:
    """Where each player is, as matchmaking reads it, and their release from a table."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def player(self, player_id: str) -> Player:
        """The player's item (a player nothing was written for yet is nowhere)."""
        item = self._storage.get("players", Player.key_of(player_id))
        return Player.from_item(item) if item else Player(player_id, "")

    def release(self, player_id: str, table_id: str) -> None:
        """The match at ``table_id`` is over for this player: they may queue again."""
        unless_contended(self._storage.commit([PresenceStore.leave_table(player_id, table_id)]))


class _Writes:
    """A store whose writes commit in units of work, alone or with other stores' writes."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def unit(self) -> UnitOfWork:
        """A unit of work for this store's writes and those that go with them."""
        return UnitOfWork(self._storage)


class QueueStore(_Writes):
    """The queues' entries, each with the ticket its player item holds while they wait."""

    def join(self, ticket: QueueTicket, ttl: int) -> Outcome:
        """Put a free player in the queue (``Busy`` if they are somewhere already)."""
        return self.unit().add(*self.enqueue(ticket, ttl)).commit()

    def leave(self, ticket: QueueTicket, task_token: str | None) -> bool:
        """Take the ticket's player out of the queue, as read with ``task_token``; False if
        they moved on or their token changed since."""
        return self.unit().add(*self.dequeue(ticket, task_token)).commit().ok

    def keep_token(self, ticket: QueueTicket, task_token: str) -> bool:
        """Keep the ticket's task token on its player's item; False if the ticket already
        ended (a table took them, or they left: then nobody else will answer the token)."""
        write = self.token_kept(ticket, task_token)
        return unless_contended(self._storage.commit([write])).ok

    def form_table(
        self,
        entries: Sequence[tuple[QueueTicket, str | None]],
        table: TableRecord,
        formed: Outbound,
        postings: Sequence[Posting],
    ) -> Outcome:
        """Seat the entries' players in order (the first in seat 1) at the new table, each
        as read with their task token, with the stakes ``postings`` move as it forms:
        ``LostRace`` names the players who moved on or whose token changed, ``Short`` the
        accounts that do not cover their stake."""
        work = self.unit()
        for seat, (entry, task_token) in enumerate(entries, start=1):
            work.add(*self.seat_from_queue(entry, task_token, table.table_id, seat))
        work.add(GameStore.new_table(table, [formed]), *Ledger.writes(postings, table.updated_at))
        return work.commit()

    def waiting(self, queue_key: str, limit: int, first: int = 0) -> list[QueueTicket]:
        """The ``limit`` oldest entries of the queue, shard ``first`` read alone if it holds
        that many (a busy queue: one read), else every shard read and merged, oldest first."""
        shards = [(first + n) % QUEUE_SHARDS for n in range(QUEUE_SHARDS)]
        items: list[Item] = []
        for number, shard in enumerate(shards):
            items += self._storage.query("matchmaking", queue_pk(queue_key, shard), limit=limit)
            if number == 0 and len(items) >= limit:
                break
        items.sort(key=lambda item: str(item["sk"]))
        return [QueueTicket.from_item(queue_key, item) for item in items[:limit]]

    def delete_entry(self, ticket: QueueTicket) -> None:
        unless_contended(self._storage.commit([Delete("matchmaking", ticket.key)]))

    @staticmethod
    def enqueue(ticket: QueueTicket, ttl: int) -> list[Write]:
        return [
            Update(
                "players",
                Player.key_of(ticket.player_id),
                set={
                    Player.QUEUE_KEY: ticket.queue_key,
                    Player.QUEUE_SK: ticket.sk,
                    Player.TICKET: ticket.ticket,
                    Player.NAME: ticket.name,
                },
                when=FREE,
                refusal=Busy((ticket.player_id,)),
            ),
            Put("matchmaking", ticket.to_item(ttl)),
        ]

    @staticmethod
    def token_kept(ticket: QueueTicket, task_token: str) -> Update:
        """The task token written to the player item, only while it holds the ticket."""
        return Update(
            "players",
            Player.key_of(ticket.player_id),
            set={Player.TASK_TOKEN: task_token},
            when=Equals(Player.TICKET, ticket.ticket),
            refusal=_moved(ticket.player_id),
        )

    @staticmethod
    def dequeue(ticket: QueueTicket, task_token: str | None) -> list[Write]:
        """Take a player out of the queue, only if this ticket still holds them as read."""
        return [
            Update(
                "players",
                Player.key_of(ticket.player_id),
                remove=Player.QUEUED,
                when=_holding(ticket, task_token),
                refusal=_moved(ticket.player_id),
            ),
            Delete("matchmaking", ticket.key),
        ]

    @staticmethod
    def seat_from_queue(
        ticket: QueueTicket, task_token: str | None, table_id: str, seat: int
    ) -> list[Write]:
        """Seat a waiting player, only if this ticket still holds them as read; their entry
        goes."""
        return [
            Update(
                "players",
                Player.key_of(ticket.player_id),
                set=Player.at_table(table_id, seat),
                remove=Player.QUEUED,
                when=_holding(ticket, task_token),
                refusal=_moved(ticket.player_id),
            ),
            Delete("matchmaking", ticket.key),
        ]


class LobbyStore(_Writes):
    """The friends tables being formed behind their invite codes, and who sits in them."""

    def lobby(self, code: str) -> Lobby | None:
        item = self._storage.get("matchmaking", lobby_key(code))
        return Lobby.from_item(item) if item else None

    def try_code(self, player_id: str, now: float, limit: int, window_seconds: int) -> bool:
        """Count one invite code the player tries; False once ``limit`` were tried in this
        window. One conditional write per ``join_table`` (its item expires with the window),
        so no number of connections or containers gives a player more guesses. A collision
        on every try is not the limit: it raises (``unless_contended``)."""
        window = int(now // window_seconds)
        tried = Update(
            "matchmaking",
            {"pk": f"JOINS#{player_id}", "sk": str(window)},
            set={"expires_at": (window + 2) * window_seconds},
            add={"tries": 1},
            when=AnyOf((Lacks("tries"), Below("tries", limit))),
            refusal=ConditionFailed("rate limited"),
        )
        return isinstance(unless_contended(self._storage.commit([tried])), Committed)

    def open(self, lobby: Lobby, host: SeatPlayer, expires_at: int) -> Outcome:
        """Create the lobby with its host in it (``CODE_TAKEN`` if its code is not free)."""
        return self.unit().add(*self.create_lobby(lobby, host, expires_at)).commit()

    def join(self, code: str, seat: int, player: SeatPlayer, leaving: str | None = None) -> Outcome:
        """Seat a player in the lobby, at ``seat`` (``leaving``: see ``player_to_lobby``)."""
        moved = self.player_to_lobby(player.player_id, player.name, code, leaving)
        return self.unit().add(moved, self.take_seat(code, seat, player)).commit()

    def form_table(
        self, lobby: Lobby, seats: dict[int, SeatPlayer], table: TableRecord, formed: Outbound
    ) -> bool:
        """Start the lobby as read, its people seated at the new table; False if it changed."""
        work = self.unit().add(self.start_lobby(lobby, seats, table.table_id))
        work.add(
            *(
                self.seat_from_lobby(p.player_id, lobby.code, table.table_id, seat)
                for seat, p in seats.items()
                if not p.bot
            )
        )
        return work.add(GameStore.new_table(table, [formed])).commit().ok

    def leave(self, lobby: Lobby, player_id: str) -> bool:
        """Leave the lobby as read (see ``leave_lobby``); False if it changed first."""
        return self.unit().add(*self.leave_lobby(lobby, player_id)).commit().ok

    @staticmethod
    def seat_from_lobby(player_id: str, code: str, table_id: str, seat: int) -> Update:
        return Update(
            "players",
            Player.key_of(player_id),
            set=Player.at_table(table_id, seat),
            remove=(Player.LOBBY,),
            when=Equals(Player.LOBBY, code),
            refusal=_moved(player_id),
        )

    @classmethod
    def create_lobby(cls, lobby: Lobby, host: SeatPlayer, expires_at: int) -> list[Write]:
        """The host put in the lobby (a rematch's host may still be at the ended table),
        and the lobby with its first seats (the host's; a rematch's bots too)."""
        return [
            cls.player_to_lobby(lobby.host, host.name, lobby.code, lobby.rematch_of),
            Put("matchmaking", lobby.to_item(expires_at), when=Absent(), refusal=CODE_TAKEN),
        ]

    @staticmethod
    def player_to_lobby(player_id: str, name: str, code: str, leaving: str | None = None) -> Update:
        """Put a free player in a lobby; with ``leaving``, also one still seated at that
        (ended) table, whose release may not have arrived yet."""
        free: Condition = FREE
        if leaving is not None:
            ended = AllOf(
                (Equals(Player.TABLE_ID, leaving), Lacks(Player.QUEUE_KEY), Lacks(Player.LOBBY))
            )
            free = AnyOf((FREE, ended))
        return Update(
            "players",
            Player.key_of(player_id),
            set={Player.LOBBY: code},
            keep={Player.NAME: name},
            remove=Player.SEATED if leaving is not None else (),
            when=free,
            refusal=Busy((player_id,)),
        )

    @staticmethod
    def take_seat(code: str, seat: int, player: SeatPlayer) -> Update:
        return Update(
            "matchmaking",
            lobby_key(code),
            set={seat_attribute(seat): player.model_dump_json()},
            when=AllOf((Equals("status", "forming"), Lacks(seat_attribute(seat)))),
            refusal=LostRace(),
        )

    @staticmethod
    def start_lobby(lobby: Lobby, seats: dict[int, SeatPlayer], table_id: str) -> Update:
        """Close a lobby as started, only if its seats are still as read."""
        held: list[Condition] = [Equals("status", "forming")]
        filled = {}
        for seat in SEATS:
            name = seat_attribute(seat)
            if seat in lobby.seats:
                held.append(Equals(name, lobby.seats[seat].model_dump_json()))
            else:
                held.append(Lacks(name))
                filled[name] = seats[seat].model_dump_json()
        return Update(
            "matchmaking",
            lobby.key,
            set={"status": "started", "table_id": table_id, **filled},
            when=AllOf(tuple(held)),
            refusal=LostRace(),
        )

    @staticmethod
    def leave_lobby(lobby: Lobby, player_id: str) -> list[Write]:
        """A guest leaves: their seat is freed; the host leaving closes the lobby."""

        def release(member: str) -> Update:
            return Update(
                "players",
                Player.key_of(member),
                remove=(Player.LOBBY,),
                when=Equals(Player.LOBBY, lobby.code),
                refusal=_moved(member),
            )

        if player_id == lobby.host:
            close = Update(
                "matchmaking",
                lobby.key,
                set={"status": "closed"},
                when=Equals("status", "forming"),
                refusal=LostRace(),
            )
            others = [
                release(p.player_id)
                for p in lobby.seats.values()
                if p.player_id != player_id and not p.bot
            ]
            return [close, release(player_id), *others]
        seat = next(k for k, p in lobby.seats.items() if p.player_id == player_id)
        name = seat_attribute(seat)
        free = Update(
            "matchmaking",
            lobby.key,
            remove=(name,),
            when=AllOf(
                (Equals("status", "forming"), Equals(name, lobby.seats[seat].model_dump_json()))
            ),
            refusal=LostRace(),
        )
        return [free, release(player_id)]
