"""Matchmaking's reads and conditional writes: queue entries, lobbies, and the players' guard.

A player is in at most one queue, lobby or live table: every write that puts
them somewhere is conditional on the player item naming none of the three,
and every write that moves them on is conditional on where it found them.
Conditions, not checks-then-writes, so races cannot seat anyone twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from services.common.dynamo import CONDITION_FAILED, DynamoClient, error_code, n, s
from services.common.events import SeatPlayer
from services.common.unit_of_work import DynamoStorage, Write

FREE = " AND ".join(f"attribute_not_exists({a})" for a in ("queue_key", "lobby", "table_id"))


@dataclass(frozen=True)
class Entry:
    """A player waiting in a queue."""

    queue_key: str
    sk: str
    player_id: str
    name: str
    ticket: str
    expires_at: float


@dataclass(frozen=True)
class Lobby:
    code: str
    host: str
    mode: str
    variant: str
    status: str
    seats: dict[int, SeatPlayer]
    table_id: str | None
    rematch_of: str | None = None
    """The ended friends table whose four this lobby seats again, each in their seat."""
    held: dict[int, SeatPlayer] = field(default_factory=dict)
    """A rematch's seats kept for the ended match's players (taken or not): nobody
    else may take one; the host's bots may fill one still empty."""

    def awaiting(self) -> dict[int, SeatPlayer]:
        """The held seats not taken yet."""
        return {seat: p for seat, p in self.held.items() if seat not in self.seats}


def queue_pk(queue_key: str) -> str:
    return f"QUEUE#{queue_key}"


def lobby_pk(code: str) -> str:
    return f"LOBBY#{code}"


class MatchmakingStore:
    def __init__(
        self, client: DynamoClient, table: str, players_table: str, storage: DynamoStorage
    ) -> None:
        self._db = client
        self._name = table
        self._players = players_table
        self._storage = storage

    def transaction_items(self, writes: list[Write]) -> list[dict[str, Any]]:
        """Other stores' writes (a table, ledger postings) as items of this store's
        transactions."""
        return [self._storage.transaction_item(w) for w in writes]

    def try_code(self, player_id: str, now: float, limit: int, window_seconds: int) -> bool:
        """Count one invite code the player tries; False once ``limit`` were tried in this
        window. One conditional write per ``join_table`` (its item expires with the window),
        so no number of connections or containers gives a player more guesses."""
        window = int(now // window_seconds)
        try:
            self._db.update_item(
                TableName=self._name,
                Key={"pk": s(f"JOINS#{player_id}"), "sk": s(str(window))},
                UpdateExpression="ADD tries :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(tries) OR tries < :limit",
                ExpressionAttributeValues={
                    ":one": n(1),
                    ":limit": n(limit),
                    ":expires": n((window + 2) * window_seconds),
                },
            )
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                return False
            raise
        return True

    # --- items for transactions ---------------------------------------------------

    def enqueue_items(self, entry: Entry, ttl: int) -> list[dict[str, Any]]:
        return [
            {
                "Update": {
                    "TableName": self._players,
                    "Key": {"player_id": s(entry.player_id)},
                    "UpdateExpression": (
                        "SET queue_key = :q, queue_sk = :sk, ticket = :t, #name = :name"
                    ),
                    "ConditionExpression": FREE,
                    "ExpressionAttributeNames": {"#name": "name"},
                    "ExpressionAttributeValues": {
                        ":q": s(entry.queue_key),
                        ":sk": s(entry.sk),
                        ":t": s(entry.ticket),
                        ":name": s(entry.name),
                    },
                }
            },
            {
                "Put": {
                    "TableName": self._name,
                    "Item": {
                        "pk": s(queue_pk(entry.queue_key)),
                        "sk": s(entry.sk),
                        "player_id": s(entry.player_id),
                        "name": s(entry.name),
                        "ticket": s(entry.ticket),
                        "queue_expires_at": n(entry.expires_at),
                        "expires_at": n(int(entry.expires_at) + ttl),
                    },
                }
            },
        ]

    def dequeue_items(self, entry: Entry) -> list[dict[str, Any]]:
        """Take a player out of the queue, only if this ticket still holds them."""
        return [
            {
                "Update": {
                    "TableName": self._players,
                    "Key": {"player_id": s(entry.player_id)},
                    "UpdateExpression": "REMOVE queue_key, queue_sk, ticket",
                    "ConditionExpression": "ticket = :t",
                    "ExpressionAttributeValues": {":t": s(entry.ticket)},
                }
            },
            self._delete_entry(entry),
        ]

    def _delete_entry(self, entry: Entry) -> dict[str, Any]:
        return {
            "Delete": {
                "TableName": self._name,
                "Key": {"pk": s(queue_pk(entry.queue_key)), "sk": s(entry.sk)},
            }
        }

    def seat_from_queue_item(self, entry: Entry, table_id: str, seat: int) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._players,
                "Key": {"player_id": s(entry.player_id)},
                "UpdateExpression": (
                    "REMOVE queue_key, queue_sk, ticket SET table_id = :table, seat = :seat"
                ),
                "ConditionExpression": "ticket = :t",
                "ExpressionAttributeValues": {
                    ":t": s(entry.ticket),
                    ":table": s(table_id),
                    ":seat": n(seat),
                },
            }
        }

    def seat_from_lobby_item(
        self, player_id: str, code: str, table_id: str, seat: int
    ) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._players,
                "Key": {"player_id": s(player_id)},
                "UpdateExpression": "REMOVE lobby SET table_id = :table, seat = :seat",
                "ConditionExpression": "lobby = :code",
                "ExpressionAttributeValues": {
                    ":code": s(code),
                    ":table": s(table_id),
                    ":seat": n(seat),
                },
            }
        }

    def delete_entry_item(self, entry: Entry) -> dict[str, Any]:
        return self._delete_entry(entry)

    def transact(self, items: list[dict[str, Any]]) -> None:
        self._db.transact_write_items(TransactItems=items)

    # --- queues --------------------------------------------------------------------

    def waiting(self, queue_key: str, limit: int) -> list[Entry]:
        page = self._db.query(
            TableName=self._name,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(queue_pk(queue_key))},
            ConsistentRead=True,
            Limit=limit,
        )
        return [
            Entry(
                queue_key=queue_key,
                sk=item["sk"]["S"],
                player_id=item["player_id"]["S"],
                name=item["name"]["S"],
                ticket=item["ticket"]["S"],
                expires_at=float(item["queue_expires_at"]["N"]),
            )
            for item in page.get("Items", [])
        ]

    def delete_entry(self, entry: Entry) -> None:
        self._db.delete_item(**self._delete_entry(entry)["Delete"])

    # --- lobbies ---------------------------------------------------------------------

    def create_lobby_items(
        self, lobby: Lobby, host: SeatPlayer, expires_at: int
    ) -> list[dict[str, Any]]:
        """The lobby with its first seats (the host's; a rematch's bots too), and the host
        put in it: a rematch's host may still be at the ended table."""
        item = {
            "pk": s(lobby_pk(lobby.code)),
            "sk": s("LOBBY"),
            "host": s(lobby.host),
            "mode": s(lobby.mode),
            "variant": s(lobby.variant),
            "status": s("forming"),
            "expires_at": n(expires_at),
        }
        item.update({f"s{seat}": s(p.model_dump_json()) for seat, p in lobby.seats.items()})
        item.update({f"h{seat}": s(p.model_dump_json()) for seat, p in lobby.held.items()})
        if lobby.rematch_of is not None:
            item["rematch_of"] = s(lobby.rematch_of)
        return [
            {
                "Put": {
                    "TableName": self._name,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            self.player_to_lobby_item(lobby.host, host.name, lobby.code, lobby.rematch_of),
        ]

    def player_to_lobby_item(
        self, player_id: str, name: str, code: str, leaving: str | None = None
    ) -> dict[str, Any]:
        """Put a free player in a lobby; with ``leaving``, also one still seated at that
        (ended) table, whose release may not have arrived yet."""
        values = {":code": s(code), ":name": s(name)}
        update = "SET lobby = :code, #name = if_not_exists(#name, :name)"
        condition = FREE
        if leaving is not None:
            update += " REMOVE table_id, seat"
            condition = (
                f"({FREE}) OR (table_id = :ended AND attribute_not_exists(queue_key)"
                " AND attribute_not_exists(lobby))"
            )
            values[":ended"] = s(leaving)
        return {
            "Update": {
                "TableName": self._players,
                "Key": {"player_id": s(player_id)},
                "UpdateExpression": update,
                "ConditionExpression": condition,
                "ExpressionAttributeNames": {"#name": "name"},
                "ExpressionAttributeValues": values,
            }
        }

    def take_seat_item(self, code: str, seat: int, player: SeatPlayer) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._name,
                "Key": {"pk": s(lobby_pk(code)), "sk": s("LOBBY")},
                "UpdateExpression": f"SET s{seat} = :p",
                "ConditionExpression": f"#status = :forming AND attribute_not_exists(s{seat})",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {
                    ":p": s(player.model_dump_json()),
                    ":forming": s("forming"),
                },
            }
        }

    def start_lobby_item(
        self, lobby: Lobby, seats: dict[int, SeatPlayer], table_id: str
    ) -> dict[str, Any]:
        """Close a lobby as started, only if its seats are still as read."""
        values: dict[str, Any] = {
            ":forming": s("forming"),
            ":started": s("started"),
            ":table": s(table_id),
        }
        sets = ["#status = :started", "table_id = :table"]
        conditions = ["#status = :forming"]
        for seat in (1, 2, 3, 4):
            if seat in lobby.seats:
                conditions.append(f"s{seat} = :was{seat}")
                values[f":was{seat}"] = s(lobby.seats[seat].model_dump_json())
            else:
                conditions.append(f"attribute_not_exists(s{seat})")
                sets.append(f"s{seat} = :now{seat}")
                values[f":now{seat}"] = s(seats[seat].model_dump_json())
        return {
            "Update": {
                "TableName": self._name,
                "Key": {"pk": s(lobby_pk(lobby.code)), "sk": s("LOBBY")},
                "UpdateExpression": "SET " + ", ".join(sets),
                "ConditionExpression": " AND ".join(conditions),
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": values,
            }
        }

    def leave_lobby_items(self, lobby: Lobby, player_id: str) -> list[dict[str, Any]]:
        """A guest leaves: their seat is freed; the host leaving closes the lobby."""
        release = {
            "Update": {
                "TableName": self._players,
                "Key": {"player_id": s(player_id)},
                "UpdateExpression": "REMOVE lobby",
                "ConditionExpression": "lobby = :code",
                "ExpressionAttributeValues": {":code": s(lobby.code)},
            }
        }
        if player_id == lobby.host:
            close = {
                "Update": {
                    "TableName": self._name,
                    "Key": {"pk": s(lobby_pk(lobby.code)), "sk": s("LOBBY")},
                    "UpdateExpression": "SET #status = :closed",
                    "ConditionExpression": "#status = :forming",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":closed": s("closed"), ":forming": s("forming")},
                }
            }
            others = [
                {
                    "Update": {
                        "TableName": self._players,
                        "Key": {"player_id": s(p.player_id)},
                        "UpdateExpression": "REMOVE lobby",
                        "ConditionExpression": "lobby = :code",
                        "ExpressionAttributeValues": {":code": s(lobby.code)},
                    }
                }
                for p in lobby.seats.values()
                if p.player_id != player_id and not p.bot
            ]
            return [close, release, *others]
        seat = next(k for k, p in lobby.seats.items() if p.player_id == player_id)
        free = {
            "Update": {
                "TableName": self._name,
                "Key": {"pk": s(lobby_pk(lobby.code)), "sk": s("LOBBY")},
                "UpdateExpression": f"REMOVE s{seat}",
                "ConditionExpression": f"#status = :forming AND s{seat} = :me",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {
                    ":forming": s("forming"),
                    ":me": s(lobby.seats[seat].model_dump_json()),
                },
            }
        }
        return [free, release]

    def lobby(self, code: str) -> Lobby | None:
        item = self._db.get_item(
            TableName=self._name,
            Key={"pk": s(lobby_pk(code)), "sk": s("LOBBY")},
            ConsistentRead=True,
        ).get("Item")
        if not item:
            return None

        def players(prefix: str) -> dict[int, SeatPlayer]:
            return {
                seat: SeatPlayer.model_validate(json.loads(item[f"{prefix}{seat}"]["S"]))
                for seat in (1, 2, 3, 4)
                if f"{prefix}{seat}" in item
            }

        seats = players("s")
        return Lobby(
            code=code,
            host=item["host"]["S"],
            mode=item["mode"]["S"],
            variant=item["variant"]["S"],
            status=item["status"]["S"],
            seats=seats,
            table_id=item["table_id"]["S"] if "table_id" in item else None,
            rematch_of=item["rematch_of"]["S"] if "rematch_of" in item else None,
            held=players("h"),
        )

    # --- players ---------------------------------------------------------------------

    def player(self, player_id: str) -> dict[str, Any]:
        return dict(
            self._db.get_item(
                TableName=self._players, Key={"player_id": s(player_id)}, ConsistentRead=True
            ).get("Item", {})
        )

    def release(self, player_id: str, table_id: str) -> None:
        """The match at ``table_id`` is over for this player: they may queue again."""
        try:
            self._db.update_item(
                TableName=self._players,
                Key={"player_id": s(player_id)},
                UpdateExpression="REMOVE table_id, seat",
                ConditionExpression="table_id = :t",
                ExpressionAttributeValues={":t": s(table_id)},
            )
        except Exception as exc:
            if error_code(exc) != CONDITION_FAILED:
                raise
