"""Friends tables: a lobby behind an invite code, its seats taken by the host's friends
or filled with bots, started as a table of four when the last seat is taken.

Each step is one conditional commit of the lobby store; a lost race reads the
lobby again and decides again. Every seated person (and a rematch's players
not seated yet) sees the lobby after each change, each as ``you``.
"""

from __future__ import annotations

import secrets
import uuid

from services.common.adapters import Clock
from services.common.events import BotLevel, SeatPlayer, is_practice
from services.common.identities import host_bot_id
from services.common.protocol import CreateTable, LobbyView, QueueLeftMessage
from services.common.records import Lobby
from services.common.telemetry import Telemetry
from services.matchmaking.forming import ENTRY_TTL, FORM_ATTEMPTS, Tables
from services.matchmaking.replies import Replies, Reply, reply_to
from services.matchmaking.store import LobbyStore, PlayerStore
from shared_engine import MatchMode

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


def _lobby_people(lobby: Lobby) -> list[str]:
    """Who hears of a lobby's change: its seated people, and a rematch's players not
    seated yet, for whom it is the offer (or the news that the others started without
    them)."""
    seated = [p.player_id for p in lobby.seats.values() if not p.bot]
    return seated + [p.player_id for p in lobby.held.values() if p.player_id not in seated]


class Lobbies:
    def __init__(
        self,
        *,
        store: LobbyStore,
        players: PlayerStore,
        tables: Tables,
        replies: Replies,
        clock: Clock,
        telemetry: Telemetry,
        join_limit: tuple[int, int] = (12, 600),
    ) -> None:
        self._store = store
        self._players = players
        self._tables = tables
        self._replies = replies
        self._clock = clock
        self._telemetry = telemetry
        self._join_limit = join_limit
        """Invite codes a player may try, per this many seconds."""

    def create_table(
        self, player_id: str, name: str, connection_id: str, message: CreateTable
    ) -> None:
        host = SeatPlayer(player_id=player_id, name=name)
        for _ in range(FORM_ATTEMPTS):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            lobby = Lobby(
                code, player_id, message.mode, message.variant, "forming", {1: host}, None
            )
            claimed = self._replies.claimed(
                self._store.open(lobby, host, int(self._clock.now()) + ENTRY_TTL),
                connection_id,
                message.cid,
            )
            if claimed is None:
                return
            if not claimed:
                continue
            self._telemetry.count("lobbies_opened")
            self._show(code, [player_id], reply_to(player_id, message.cid))
            return
        raise RuntimeError("no free invite code")

    def join_table(
        self, player_id: str, name: str, connection_id: str, code: str, cid: str | None = None
    ) -> None:
        if not self._store.try_code(
            player_id, self._clock.now(), self._join_limit[0], self._join_limit[1]
        ):
            self._replies.refuse(
                connection_id, "rate_limited", "too many invite codes tried: wait a while", cid
            )
            return
        me = SeatPlayer(player_id=player_id, name=name)
        reply = reply_to(player_id, cid)
        for _ in range(FORM_ATTEMPTS):
            lobby = self._store.lobby(code)
            if lobby is None or lobby.status != "forming":
                self._replies.refuse(
                    connection_id, "unknown_code", "no table is waiting with this code", cid
                )
                return
            if any(p.player_id == player_id for p in lobby.seats.values()):
                self._show(code, [player_id], reply)
                return
            free = [s for s in (1, 2, 3, 4) if s not in lobby.seats and s not in lobby.held]
            if not free:
                self._replies.refuse(connection_id, "table_full", "this table is full", cid)
                return
            joined = self._store.join(code, free[0], me)
            claimed = self._replies.claimed(joined, connection_id, cid, (player_id, code))
            if claimed is None:
                return
            if not claimed:
                continue
            self.seated(code, reply)
            return
        self._replies.refuse(connection_id, "table_full", "this table is full", cid)

    def fill_bots(
        self,
        player_id: str,
        connection_id: str,
        cid: str | None = None,
        level: BotLevel = "normal",
    ) -> None:
        player = self._players.player(player_id)
        lobby = self._store.lobby(player.lobby) if player.lobby is not None else None
        if lobby is None or lobby.status != "forming":
            self._replies.refuse(connection_id, "unknown_code", "you have no table waiting", cid)
            return
        if lobby.host != player_id:
            self._replies.refuse(
                connection_id, "not_host", "only the host fills seats with bots", cid
            )
            return
        seats = dict(lobby.seats)
        for seat in (1, 2, 3, 4):
            if seat not in seats:
                seats[seat] = SeatPlayer(
                    player_id=host_bot_id(lobby.code, seat),
                    name=f"Bot {seat}",
                    bot=True,
                    level=level,
                )
        self._start(lobby, seats, reply_to(player_id, cid))

    def leave(
        self,
        code: str,
        player_id: str,
        connection_id: str | None,
        reason: str,
        cid: str | None = None,
    ) -> bool:
        """A guest frees their seat; the host closes the lobby and every guest is told.
        False if the lobby is not forming, or changed first (it started, or the host
        closed it)."""
        lobby = self._store.lobby(code)
        if lobby is None or lobby.status != "forming":
            return False
        members = [
            p.player_id for p in lobby.seats.values() if not p.bot and p.player_id != player_id
        ]
        if not self._store.leave(lobby, player_id):
            return False
        self._replies.left(connection_id, reason, cid)
        if player_id != lobby.host:
            self._show(lobby.code, members)
            return True
        closed = QueueLeftMessage(reason="closed").model_dump()
        for member in members:
            self._replies.tell(member, closed)
        return True

    def seated(self, code: str, reply: Reply) -> None:
        """After a seat was taken: the fourth starts the table, else everyone sees the
        lobby. Read again, not the copy read before the write: two players taking the
        last two seats at once each read three empty, and one of them must start it."""
        lobby = self._store.lobby(code)
        if lobby is None:
            return
        if lobby.status == "forming" and len(lobby.seats) == 4:
            self._start(lobby, lobby.seats, reply)
        else:
            self.send(lobby, _lobby_people(lobby), reply, lobby.table_id)

    def send(
        self, lobby: Lobby, members: list[str], reply: Reply, table_id: str | None = None
    ) -> None:
        """Each member's own ``lobby`` (``you`` is the member); ``reply``'s player's answers
        their message and echoes its ``cid``."""
        for member in members:
            view = LobbyView(
                code=lobby.code,
                host=lobby.host,
                you=member,
                mode=MatchMode(lobby.mode),
                variant=lobby.variant,
                seats={str(seat): lobby.seats.get(seat) for seat in (1, 2, 3, 4)},  # type: ignore[misc]
                status="started" if table_id else "forming",
                table_id=table_id,
                practice=is_practice(lobby.seats.values()),
                rematch_of=lobby.rematch_of,
                awaiting={str(seat): p for seat, p in lobby.awaiting().items()},  # type: ignore[misc]
                cid=reply[1] if reply is not None and reply[0] == member else None,
            )
            self._replies.tell(member, view.model_dump(mode="json"))

    def _show(self, code: str, members: list[str], reply: Reply = None) -> None:
        lobby = self._store.lobby(code)
        if lobby is not None:
            self.send(lobby, members, reply)

    def _start(self, lobby: Lobby, seats: dict[int, SeatPlayer], reply: Reply = None) -> None:
        """Seat the four at a new table and tell them; ``reply``: the player whose message
        started it, and its ``cid``."""
        table_id = f"f-{lobby.code}-{uuid.uuid4().hex[:8]}"
        table, event = self._tables.new(table_id, MatchMode(lobby.mode), lobby.variant, 0, seats)
        if not self._store.form_table(lobby, seats, table, event):
            self._telemetry.info("lobby start lost a race", code=lobby.code)
            members = [p.player_id for p in lobby.seats.values() if not p.bot]
            self._show(lobby.code, members, reply)
            return
        self._telemetry.count("tables_formed")
        started = Lobby(**{**lobby.__dict__, "seats": seats})
        self.send(started, _lobby_people(started), reply, table_id)
