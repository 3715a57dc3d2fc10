"""ConnectService: tokens, connection items, seats (re)connected, presence events."""

from __future__ import annotations

from typing import Any

import pytest

from local.issuer import LocalIssuer, SigningKey
from services.common.auth import ExpiredToken, Identity, InvalidToken
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.store import GameStore
from services.connect.app import ConnectService
from shared_engine import start_round
from tests.services.conftest import build, put_table, seat_everyone
from tests.services.fakes import FakeClock, RecordingPublisher

pytestmark = pytest.mark.unit


@pytest.fixture
def connect(deps: dict[str, Any]) -> ConnectService:
    return build(ConnectService, deps)


def _connection_ids(storage: MemoryStorage) -> set[str]:
    """Every connection the table holds (what a scan of it finds)."""
    return {str(item["connection_id"]) for item in storage.tables["connections"].values()}


def test_authorize_accepts_a_fresh_token_and_refuses_an_old_one(
    connect: ConnectService, clock: FakeClock, issuer: LocalIssuer
) -> None:
    token = issuer.issue(Identity("p1", "Ann"), now=clock.now(), ttl=60)
    assert connect.authorize(token) == Identity("p1", "Ann")
    clock.advance(61 + 30)
    with pytest.raises(ExpiredToken):
        connect.authorize(token)
    impostor = SigningKey()
    impostor.kid = issuer.keys[0].kid
    claims = {"iss": issuer.url, "aud": issuer.audience, "sub": "p1", "exp": clock.now() + 60}
    with pytest.raises(InvalidToken):
        connect.authorize(impostor.sign(claims))


def test_a_connect_service_without_an_issuer_refuses_to_check_tokens(
    deps: dict[str, Any], issuer: LocalIssuer, clock: FakeClock
) -> None:
    """Only the authorizer is configured with the issuer: a check elsewhere is a wiring bug."""
    service = build(ConnectService, deps, verifier=None)
    with pytest.raises(RuntimeError, match="CANASTA_OIDC_ISSUER"):
        service.authorize(issuer.issue(Identity("p1", "Ann"), now=clock.now()))


def test_connecting_without_a_table_records_the_connection(
    connect: ConnectService,
    storage: MemoryStorage,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    connect.connect("c1", Identity("p1", "Ann"))
    assert _connection_ids(storage) == {"c1"}
    assert presence.player_of("c1") == "p1"
    player = presence.get_player("p1")
    assert player is not None and (player.connection_id, player.name) == ("c1", "Ann")
    assert publisher.of_type("PlayerConnected") == [
        {"player_id": "p1", "connection_id": "c1", "table_id": None, "seat": None}
    ]


def test_a_seated_player_reconnecting_takes_the_seat_back(
    connect: ConnectService,
    store: GameStore,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    put_table(store, "t1", start_round("s"), connections={1: "c1", 2: None, 3: "c3", 4: "c4"})
    seat_everyone(presence, "t1")
    connect.connect("c2-new", Identity("p2", "P2"))
    table = store.get_table("t1")
    assert table is not None and table.connections[2] == "c2-new"
    assert table.version == 1, "presence never changes the game's version"
    assert publisher.of_type("PlayerConnected") == [
        {"player_id": "p2", "connection_id": "c2-new", "table_id": "t1", "seat": 2}
    ]


def test_a_finished_table_is_not_reconnected(
    connect: ConnectService,
    store: GameStore,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    put_table(
        store, "t1", start_round("s"), status="finished", connections=dict.fromkeys(range(1, 5))
    )
    seat_everyone(presence, "t1")
    connect.connect("c2", Identity("p2", "P2"))
    table = store.get_table("t1")
    assert table is not None and table.connections[2] is None
    assert publisher.of_type("PlayerConnected")[0]["table_id"] is None


def test_disconnecting_a_seated_player_frees_the_seat(
    connect: ConnectService,
    storage: MemoryStorage,
    store: GameStore,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    put_table(store, "t1", start_round("s"), connections=dict.fromkeys(range(1, 5)))
    seat_everyone(presence, "t1")
    connect.connect("c3", Identity("p3", "P3"))
    connect.disconnect("c3")
    assert _connection_ids(storage) == set()
    table = store.get_table("t1")
    assert table is not None and table.connections[3] is None
    assert publisher.of_type("PlayerDisconnected") == [
        {"player_id": "p3", "connection_id": "c3", "table_id": "t1", "seat": 3}
    ]
    player = presence.get_player("p3")
    assert player is not None and player.connection_id is None


def test_an_old_connection_closing_after_a_reconnect_changes_nothing(
    connect: ConnectService,
    storage: MemoryStorage,
    store: GameStore,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    put_table(store, "t1", start_round("s"), connections=dict.fromkeys(range(1, 5)))
    seat_everyone(presence, "t1")
    connect.connect("c3-old", Identity("p3", "P3"))
    connect.connect("c3-new", Identity("p3", "P3"))
    connect.disconnect("c3-old")
    table = store.get_table("t1")
    assert table is not None and table.connections[3] == "c3-new"
    player = presence.get_player("p3")
    assert player is not None and player.connection_id == "c3-new"
    assert publisher.of_type("PlayerDisconnected") == []
    assert _connection_ids(storage) == {"c3-new"}


def test_disconnecting_twice_or_an_unknown_connection_does_nothing(
    connect: ConnectService,
    store: GameStore,
    presence: PresenceStore,
    publisher: RecordingPublisher,
) -> None:
    put_table(store, "t1", start_round("s"), connections=dict.fromkeys(range(1, 5)))
    seat_everyone(presence, "t1")
    connect.connect("c1", Identity("p1", "P1"))
    connect.disconnect("c1")
    connect.disconnect("c1")
    connect.disconnect("never-seen")
    assert len(publisher.of_type("PlayerDisconnected")) == 1
