"""Connections and players: who is online, on which connection, at which table."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from services.common.dynamo import CONDITION_FAILED, DynamoClient, error_code, n, s


@dataclass(frozen=True)
class Player:
    player_id: str
    name: str
    connection_id: str | None = None
    table_id: str | None = None
    seat: int | None = None


class PresenceStore:
    """The connections table (one item per live connection) and the players table."""

    def __init__(self, client: DynamoClient, connections_table: str, players_table: str) -> None:
        self._db = client
        self._connections = connections_table
        self._players = players_table

    def add_connection(
        self, connection_id: str, player_id: str, name: str, now: float, ttl: int
    ) -> tuple[Player, str | None]:
        """Record a new connection and make it the player's current one.

        Returns the player and the connection this one replaces (another tab or
        device of the same player), if any.
        """
        self._db.put_item(
            TableName=self._connections,
            Item={
                "connection_id": s(connection_id),
                "player_id": s(player_id),
                "connected_at": n(now),
                "expires_at": n(int(now) + ttl),
            },
        )
        old = self._db.update_item(
            TableName=self._players,
            Key={"player_id": s(player_id)},
            UpdateExpression="SET #name = :name, connection_id = :conn, seen_at = :now",
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues={":name": s(name), ":conn": s(connection_id), ":now": n(now)},
            ReturnValues="ALL_OLD",
        ).get("Attributes")
        if not old:
            return Player(player_id, name, connection_id), None
        before = _player(old)
        return replace(before, name=name, connection_id=connection_id), before.connection_id

    def remove_connection(self, connection_id: str) -> Player | None:
        """Forget a connection; returns the player if it was their current one."""
        old = self._db.delete_item(
            TableName=self._connections,
            Key={"connection_id": s(connection_id)},
            ReturnValues="ALL_OLD",
        ).get("Attributes")
        if not old:
            return None
        try:
            item = self._db.update_item(
                TableName=self._players,
                Key={"player_id": old["player_id"]},
                UpdateExpression="REMOVE connection_id",
                ConditionExpression="connection_id = :conn",
                ExpressionAttributeValues={":conn": s(connection_id)},
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                return None
            raise
        return _player(item)

    def player_of(self, connection_id: str) -> str | None:
        """The player on a live connection (None once it closed)."""
        item = self._db.get_item(
            TableName=self._connections, Key={"connection_id": s(connection_id)}
        ).get("Item")
        return item["player_id"]["S"] if item else None

    def get_player(self, player_id: str) -> Player | None:
        item = self._db.get_item(
            TableName=self._players, Key={"player_id": s(player_id)}, ConsistentRead=True
        ).get("Item")
        return _player(item) if item else None

    def seat_player(self, player_id: str, name: str, table_id: str, seat: int) -> Player:
        """Record the player's live table (matchmaking guards it with its own conditions)."""
        item = self._db.update_item(
            TableName=self._players,
            Key={"player_id": s(player_id)},
            UpdateExpression=(
                "SET #name = if_not_exists(#name, :name), table_id = :table, seat = :seat"
            ),
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues={":name": s(name), ":table": s(table_id), ":seat": n(seat)},
            ReturnValues="ALL_NEW",
        )["Attributes"]
        return _player(item)


def _player(item: dict[str, Any]) -> Player:
    return Player(
        player_id=item["player_id"]["S"],
        name=item.get("name", {}).get("S", ""),
        connection_id=item["connection_id"]["S"] if "connection_id" in item else None,
        table_id=item["table_id"]["S"] if "table_id" in item else None,
        seat=int(item["seat"]["N"]) if "seat" in item else None,
    )
