"""The services' unit tier: application code with fakes, DynamoDB in-process (moto ``mock_aws``).

No network: ``mock_aws`` intercepts botocore inside this process.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest

from local.issuer import LocalIssuer
from services.common import constants
from services.common.auth import Issuer, TokenVerifier
from services.common.dynamo_storage import DynamoStorage
from services.common.events import SeatPlayer
from services.common.ledger import Ledger
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.records import SEATS, TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Storage
from shared_engine import MatchMode, RoundState, dumps, start_round
from tests.services.fakes import (
    FakeClock,
    RecordingPublisher,
    RecordingPusher,
    RecordingTimers,
    SeededEntropy,
)

T = TypeVar("T")
REGION = "eu-west-1"
PLAYERS = {seat: SeatPlayer(player_id=f"p{seat}", name=f"P{seat}") for seat in SEATS}


@pytest.fixture(scope="package")
def _dynamodb() -> Iterator[Any]:
    """One in-process DynamoDB with every table, for the whole package (tables are slow to make)."""
    import boto3
    from moto import mock_aws

    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("CANASTA_", "AWS_ENDPOINT_URL")):
                patch.delenv(name)
        patch.setenv("AWS_DEFAULT_REGION", REGION)
        with mock_aws():
            client = boto3.client("dynamodb", region_name=REGION)
            for spec in constants.TABLES:
                client.create_table(**constants.create_table_request(spec))
            yield client


@pytest.fixture
def db(_dynamodb: Any) -> Any:
    """The tables, emptied: each test starts from nothing."""
    for spec in constants.TABLES:
        keys = [spec.partition_key] + ([spec.sort_key] if spec.sort_key else [])
        names = {f"#k{i}": key for i, key in enumerate(keys)}
        kwargs: dict[str, Any] = {
            "TableName": spec.name,
            "ProjectionExpression": ", ".join(names),
            "ExpressionAttributeNames": names,
        }
        while True:
            page = _dynamodb.scan(**kwargs)
            for item in page.get("Items", []):
                _dynamodb.delete_item(TableName=spec.name, Key=item)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return _dynamodb


@pytest.fixture
def storage(db: Any) -> DynamoStorage:
    return DynamoStorage.default(db)


@pytest.fixture(params=["memory", "dynamodb"])
def either_storage(request: pytest.FixtureRequest) -> Storage:
    """Each storage in turn, for the cases both must answer alike (moto only when asked)."""
    if request.param == "memory":
        return MemoryStorage()
    return DynamoStorage.default(request.getfixturevalue("db"))


@pytest.fixture
def store(storage: DynamoStorage) -> GameStore:
    return GameStore(storage)


@pytest.fixture
def presence(storage: DynamoStorage) -> PresenceStore:
    return PresenceStore(storage)


@pytest.fixture
def pusher() -> RecordingPusher:
    return RecordingPusher()


@pytest.fixture
def views(pusher: RecordingPusher) -> ViewPusher:
    return ViewPusher(pusher)


@pytest.fixture
def timers() -> RecordingTimers:
    return RecordingTimers()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="package")
def issuer() -> Iterator[LocalIssuer]:
    """A token issuer whose keys are served on 127.0.0.1, as the local stack's are."""
    served = LocalIssuer().serve()
    yield served
    served.stop()


@pytest.fixture
def entropy() -> SeededEntropy:
    return SeededEntropy()


@pytest.fixture
def telemetry() -> RecordingTelemetry:
    return RecordingTelemetry()


@pytest.fixture
def publisher() -> RecordingPublisher:
    return RecordingPublisher()


def seat_everyone(presence: PresenceStore, table_id: str) -> None:
    for seat, player in PLAYERS.items():
        presence.seat_player(player.player_id, player.name, table_id, seat)


def put_table(
    store: GameStore,
    table_id: str,
    state: RoundState | None,
    *,
    connections: dict[int, str | None] | None = None,
    mode: MatchMode = MatchMode.ONE_ROUND,
    version: int = 1,
    round_number: int = 1,
    totals: tuple[int, int] = (0, 0),
    status: str = "playing",
    now: float = 1_800_000_000.0,
    tie_break: bool = False,
    seats: dict[int, SeatPlayer] | None = None,
) -> TableRecord:
    """Write a table item as the deal service would have left it."""
    table = TableRecord(
        table_id=table_id,
        mode=mode,
        variant="twos-meld",
        stake=0,
        seats=dict(PLAYERS) if seats is None else seats,
        version=version,
        status=status,  # type: ignore[arg-type]
        round=round_number,
        totals=totals,
        tie_break=tie_break,
        state=dumps(state) if state is not None else None,
        connections=connections if connections is not None else {s: f"c{s}" for s in SEATS},
        turn_started=version,
        turn_deadline=None if state is None or state.round_over else now + 60,
        updated_at=now,
    )
    store.create_table(table)
    return table


def dealt(seed: str = "unit-seed", **kwargs: Any) -> RoundState:
    return start_round(seed, **kwargs)


def item_keys(store: GameStore, table_id: str, prefix: str = "") -> list[str]:
    return [i["sk"]["S"] for i in store.history(table_id) if i["sk"]["S"].startswith(prefix)]


def outbox(item: dict[str, Any]) -> list[dict[str, Any]]:
    raw = item.get("outbox", {}).get("S")
    return json.loads(raw) if raw else []


@pytest.fixture
def deps(
    *,
    db: Any,
    store: GameStore,
    presence: PresenceStore,
    views: ViewPusher,
    timers: RecordingTimers,
    clock: FakeClock,
    entropy: SeededEntropy,
    telemetry: RecordingTelemetry,
    publisher: RecordingPublisher,
    issuer: LocalIssuer,
) -> dict[str, Any]:
    """Every dependency a service may ask for, by the name of its constructor parameter."""
    available: dict[str, Any] = {
        "store": store,
        "presence": presence,
        "views": views,
        "timers": timers,
        "clock": clock,
        "entropy": entropy,
        "telemetry": telemetry,
        "publisher": publisher,
        "turn_seconds": 60,
        "max_message_bytes": 8 * 1024,
        "verifier": TokenVerifier(Issuer(issuer.url, issuer.audience, issuer.jwks_url), clock.now),
        "connection_ttl": 3600,
    }
    available["ledger"] = Ledger(DynamoStorage.default(db))
    return available


def build(cls: type[T], deps: dict[str, Any], **overrides: Any) -> T:
    """An instance of a service wired from ``deps`` by parameter name (fakes and moto)."""
    available = {**deps, **overrides}
    kwargs: dict[str, Any] = {}
    for name, parameter in inspect.signature(cls).parameters.items():
        if name in available:
            kwargs[name] = available[name]
        elif parameter.default is inspect.Parameter.empty:
            raise TypeError(f"no test double for {cls.__name__}({name})")
    return cls(**kwargs)
