"""Connections and players: who is online, on which connection, at which table."""

from __future__ import annotations

from services.common.frozen import replace
from services.common.records import Connection, Player
from services.common.unit_of_work import (
    Committed,
    Delete,
    Equals,
    LostRace,
    Outcome,
    Put,
    Storage,
    Update,
    Write,
    unless_contended,
)

__all__ = ["Player", "PresenceStore"]


class PresenceStore:
    """The connections table (one item per live connection) and the players table."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def _commit(self, writes: list[Write]) -> Outcome:
        """Presence's writes name no version: a connection recorded or a player released
        that collided on every try fails the handler rather than pass for done."""
        return unless_contended(self._storage.commit(writes))

    def add_connection(
        self, connection_id: str, player_id: str, name: str, now: float, ttl: int
    ) -> tuple[Player, str | None]:
        """Record a new connection and make it the player's current one.

        Returns the player and the connection this one replaces (another tab or
        device of the same player), if any.
        """
        connection = Connection(connection_id, player_id, now, int(now) + ttl)
        self._commit([Put("connections", connection.to_item())])
        done = self._commit(
            [
                Update(
                    "players",
                    Player.key_of(player_id),
                    set={
                        Player.NAME: name,
                        Player.CONNECTION_ID: connection_id,
                        Player.SEEN_AT: now,
                    },
                    returning="old",
                )
            ]
        )
        old = done.before if isinstance(done, Committed) else None
        if not old:
            return Player(player_id, name, connection_id), None
        before = Player.from_item(old)
        return replace(before, name=name, connection_id=connection_id), before.connection_id

    def remove_connection(self, connection_id: str) -> Player | None:
        """Forget a connection; returns the player if it was their current one."""
        done = self._commit(
            [Delete("connections", Connection.key_of(connection_id), returning="old")]
        )
        old = done.before if isinstance(done, Committed) else None
        if not old:
            return None
        released = self._commit(
            [
                Update(
                    "players",
                    Player.key_of(str(old["player_id"])),
                    remove=(Player.CONNECTION_ID,),
                    when=Equals(Player.CONNECTION_ID, connection_id),
                    refusal=LostRace(),
                    returning="new",
                )
            ]
        )
        if not isinstance(released, Committed) or released.after is None:
            return None
        return Player.from_item(released.after)

    def player_of(self, connection_id: str) -> str | None:
        """The player on a live connection (None once it closed)."""
        item = self._storage.get("connections", Connection.key_of(connection_id), consistent=False)
        return str(item["player_id"]) if item else None

    def get_player(self, player_id: str) -> Player | None:
        item = self._storage.get("players", Player.key_of(player_id))
        return Player.from_item(item) if item else None

    def seat_player(self, player_id: str, name: str, table_id: str, seat: int) -> Player:
        """Record the player's live table (matchmaking guards it with its own conditions)."""
        done = self._commit(
            [
                Update(
                    "players",
                    Player.key_of(player_id),
                    set=Player.at_table(table_id, seat),
                    keep={Player.NAME: name},
                    returning="new",
                )
            ]
        )
        assert isinstance(done, Committed) and done.after is not None
        return Player.from_item(done.after)

    @staticmethod
    def leave_table(player_id: str, table_id: str) -> Update:
        """The match at ``table_id`` is over for this player, who may queue again: only while
        their item still seats them there (``LostRace`` if they moved on since)."""
        return Update(
            "players",
            Player.key_of(player_id),
            remove=Player.SEATED,
            when=Equals(Player.TABLE_ID, table_id),
            refusal=LostRace((player_id,)),
        )
