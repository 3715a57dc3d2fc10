"""The same four again: a friends table's players, once its match is over, meet in the
lobby of its rematch, each in the seat they played (the host's bots in theirs)."""

from __future__ import annotations

import hashlib

from services.common.adapters import Clock
from services.common.events import SeatPlayer, is_friends_table
from services.common.records import Lobby
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.matchmaking.forming import ENTRY_TTL, FORM_ATTEMPTS
from services.matchmaking.lobbies import CODE_ALPHABET, CODE_LENGTH, Lobbies
from services.matchmaking.replies import Replies, reply_to
from services.matchmaking.store import LobbyStore


def rematch_code(table_id: str, attempt: int) -> str:
    """The lobby code of a rematch of ``table_id``: every one of its four, asking at the
    same moment, computes the same code, so they meet in one lobby without a lock. The
    next attempt's code serves when a lobby (another's, or a rematch its host closed)
    holds this one. Guessing it gains nothing: only the four hold its seats."""
    digest = hashlib.sha256(f"{table_id}:{attempt}".encode()).digest()
    return "".join(CODE_ALPHABET[b % len(CODE_ALPHABET)] for b in digest[:CODE_LENGTH])


class Rematches:
    def __init__(
        self,
        *,
        games: GameStore,
        store: LobbyStore,
        lobbies: Lobbies,
        replies: Replies,
        clock: Clock,
        telemetry: Telemetry,
    ) -> None:
        self._games = games
        self._store = store
        self._lobbies = lobbies
        self._replies = replies
        self._clock = clock
        self._telemetry = telemetry

    def rematch(
        self, player_id: str, name: str, connection_id: str, table_id: str, cid: str | None
    ) -> None:
        """Seat ``player_id`` again in their seat of ``table_id``'s four, in the lobby of
        its rematch: the first to ask creates it, the others take their held seats."""
        refuse = self._replies.refuse
        table = self._games.get_table(table_id)
        if table is None or not is_friends_table(table_id):
            refuse(connection_id, "no_table", "only a friends table is played again", cid)
            return
        seat = table.seat_of(player_id)
        if seat is None:
            refuse(connection_id, "not_seated", "you did not play at this table", cid)
            return
        if table.status == "playing":
            refuse(connection_id, "not_over", "this table's match is not over yet", cid)
            return
        me = SeatPlayer(player_id=player_id, name=name)
        reply = reply_to(player_id, cid)
        attempt = tries = 0
        while tries < FORM_ATTEMPTS * 2 and attempt < FORM_ATTEMPTS:
            tries += 1
            code = rematch_code(table_id, attempt)
            lobby = self._store.lobby(code)
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
                outcome = self._store.open(lobby, me, int(self._clock.now()) + ENTRY_TTL)
            elif lobby.rematch_of != table_id or lobby.status == "closed":
                attempt += 1
                continue
            elif seat in lobby.seats and lobby.seats[seat].player_id == player_id:
                self._lobbies.send(lobby, [player_id], reply, lobby.table_id)
                return
            elif lobby.status != "forming" or seat in lobby.seats:
                refuse(connection_id, "table_full", "the others started without you", cid)
                return
            else:
                outcome = self._store.join(code, seat, me, leaving=table_id)
            claimed = self._replies.claimed(outcome, connection_id, cid, (player_id, code))
            if claimed is None:
                return
            if not claimed:
                continue
            self._telemetry.count("rematch_seats_taken")
            self._lobbies.seated(code, reply)
            return
        refuse(connection_id, "table_full", "no rematch could be opened: try again", cid)
