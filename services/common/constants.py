"""Names and keys of every AWS resource, shared by the CDK stack and the local stack.

The CDK app builds its tables from ``TABLES`` and the moto fixtures and the
local stack create theirs from the same specs (``create_table_request``), so
a key can never differ between production and tests.
"""

from __future__ import annotations

from typing import Any, Final

from services.common.frozen import Frozen, field


class IndexSpec(Frozen):
    name: str
    partition_key: str
    sort_key: str | None = None
    keys_only: bool = False
    """Project only the keys: the index finds items, a read of the table gets them, and
    a write that changes no key of the index writes nothing to it."""


class TableSpec(Frozen):
    """A DynamoDB table: string keys, on-demand, optional TTL, stream and indexes."""

    name: str
    partition_key: str
    sort_key: str | None = None
    ttl_attribute: str | None = None
    stream: bool = False
    indexes: tuple[IndexSpec, ...] = field(default_factory=tuple)


GAMES: Final = TableSpec(
    name="canasta-games",
    partition_key="pk",
    sort_key="sk",
    ttl_attribute="expires_at",
    stream=True,
)
"""Live tables (``TABLE``), rounds (``ROUND#n``), scores (``SCORE#n``) and action logs.

The stream feeds the outbox relay: items written with an ``outbox`` attribute
become EventBridge events (docs/data-model.md).
"""

CONNECTIONS: Final = TableSpec(
    name="canasta-connections", partition_key="connection_id", ttl_attribute="expires_at"
)
PLAYERS_BY_NAME: Final = "by-name"
PLAYERS: Final = TableSpec(
    name="canasta-players",
    partition_key="player_id",
    indexes=(IndexSpec(PLAYERS_BY_NAME, "name", keys_only=True),),
)
"""Where each player is (queue, lobby, table) and their connection; ``by-name`` finds a
player by the name they play under, for support (names are not unique)."""
LEDGER: Final = TableSpec(name="canasta-ledger", partition_key="pk", sort_key="sk")
"""Accounts (``ACCOUNT#id``/``BALANCE``) and their append-only entries (``ENTRY#key``)."""
MATCHMAKING: Final = TableSpec(
    name="canasta-matchmaking", partition_key="pk", sort_key="sk", ttl_attribute="expires_at"
)
"""Queue entries (``QUEUE#key``/``time#player``) and friends lobbies (``LOBBY#code``)."""

AUDIT: Final = TableSpec(name="canasta-audit", partition_key="pk", sort_key="sk")
"""The operators' actions (``AUDIT#day``/``time#id``) and the action ids they were asked
under (``ACTION#id``), append-only: only the operators' function writes it, create-only,
and no role or policy may update or delete an item of it."""

PROFILES: Final = TableSpec(name="canasta-profiles", partition_key="pk", sort_key="sk")
"""Players' profiles (``PLAYER#id``/``PROFILE``: rating and stats), their match history
(``PLAYER#id``/``MATCH#…``, newest first) and each match added once (``MATCH#table``)."""

TABLES: Final = (GAMES, CONNECTIONS, PLAYERS, LEDGER, MATCHMAKING, AUDIT, PROFILES)
"""Every table; each is named to the functions in a setting."""

EVENT_BUS: Final = "canasta-events"
EVENT_SOURCE: Final = "canasta"
TIMER_QUEUE: Final = "canasta-turn-timers"
SCHEDULE_GROUP: Final = "canasta-turn-timers"
SCHEDULE_DEAD_LETTER_QUEUE: Final = "canasta-turn-schedules-dlq"
"""Where Scheduler puts a far-deadline timer it could not deliver to the timer queue."""

STATE_MACHINE: Final = "canasta-matchmaking"


def queue_name(consumer: str) -> str:
    return f"canasta-{consumer}"


# Item keys of the games table.
TABLE_SK: Final = "TABLE"
CLOSED_SK: Final = "CLOSED"
"""The item of a table an operator closed: who, why, and its ``TableAborted``."""


def table_pk(table_id: str) -> str:
    return f"TABLE#{table_id}"


def round_sk(round_number: int) -> str:
    return f"ROUND#{round_number:04d}"


def score_sk(round_number: int) -> str:
    return f"SCORE#{round_number:04d}"


def log_sk(round_number: int, version: int) -> str:
    return f"{log_prefix(round_number)}{version:06d}"


def log_prefix(round_number: int) -> str:
    """The sort keys of one round's log entries begin with it, in the order played."""
    return f"LOG#{round_number:04d}#"


def create_table_request(spec: TableSpec, name: str | None = None) -> dict[str, Any]:
    """The boto3 ``create_table`` arguments for a spec (used by tests and the local stack)."""
    keys = [(spec.partition_key, "HASH")] + ([(spec.sort_key, "RANGE")] if spec.sort_key else [])
    attributes = {key for key, _ in keys}
    for index in spec.indexes:
        attributes.add(index.partition_key)
        if index.sort_key:
            attributes.add(index.sort_key)
    request: dict[str, Any] = {
        "TableName": name or spec.name,
        "KeySchema": [{"AttributeName": k, "KeyType": t} for k, t in keys],
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": "S"} for a in sorted(attributes)
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if spec.indexes:
        request["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index.name,
                "KeySchema": [{"AttributeName": index.partition_key, "KeyType": "HASH"}]
                + (
                    [{"AttributeName": index.sort_key, "KeyType": "RANGE"}]
                    if index.sort_key
                    else []
                ),
                "Projection": {"ProjectionType": "KEYS_ONLY" if index.keys_only else "ALL"},
            }
            for index in spec.indexes
        ]
    if spec.stream:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    return request
