"""The services' unit tier: the use cases with fakes, on the in-memory storage.

Each test starts from an empty ``MemoryStorage`` and reads what the use cases
wrote back through the stores' records, as a handler's test reads a fake
unit of work; the storage contract (``test_unit_of_work.py``, and against
DynamoDB in ``tests/integration/test_storage_contract.py``) holds the fake to
DynamoDB's semantics.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest

from local.issuer import LocalIssuer
from services.common.auth import Issuer, TokenVerifier
from services.common.events import SeatPlayer
from services.common.ledger import Ledger
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.records import SEATS, TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import RecordingTelemetry
from shared_engine import MatchMode, RoundState, pack, start_round
from tests.services.fakes import (
    FakeClock,
    RecordingPublisher,
    RecordingPusher,
    RecordingTimers,
    SeededEntropy,
)

T = TypeVar("T")
PLAYERS = {seat: SeatPlayer(player_id=f"p{seat}", name=f"P{seat}") for seat in SEATS}


@pytest.fixture
def storage() -> MemoryStorage:
    """Every table, empty: each test starts from nothing."""
    return MemoryStorage()


@pytest.fixture
def store(storage: MemoryStorage) -> GameStore:
    return GameStore(storage)


@pytest.fixture
def presence(storage: MemoryStorage) -> PresenceStore:
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
        state=pack(state) if state is not None else None,
        connections=connections if connections is not None else {s: f"c{s}" for s in SEATS},
        turn_started=version,
        turn_deadline=None if state is None or state.round_over else now + 60,
        updated_at=now,
    )
    store.create_table(table)
    return table


def dealt(seed: str = "unit-seed", **kwargs: Any) -> RoundState:
    return start_round(seed, **kwargs)


def snapshot(store: GameStore, table_id: str) -> tuple[object, ...]:
    """Everything the store reads back of a table, to compare before and after: its item
    and the events it carries, its rounds, log entries and scores, and which items exist."""
    return (
        store.get_table(table_id),
        store.history.table_outbox(table_id),
        store.history.records(table_id),
        store.history.keys(table_id),
    )


@pytest.fixture
def deps(
    *,
    storage: MemoryStorage,
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
    return {
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
        "ledger": Ledger(storage),
    }


def build(cls: type[T], deps: dict[str, Any], **overrides: Any) -> T:
    """An instance of a service wired from ``deps`` by parameter name (fakes and stores)."""
    available = {**deps, **overrides}
    kwargs: dict[str, Any] = {}
    for name, parameter in inspect.signature(cls).parameters.items():
        if name in available:
            kwargs[name] = available[name]
        elif parameter.default is inspect.Parameter.empty:
            raise TypeError(f"no test double for {cls.__name__}({name})")
    return cls(**kwargs)
