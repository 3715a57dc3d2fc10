"""The matchmaking service's composition root."""

from __future__ import annotations

from typing import Any

from services.common.adapters import ApiGatewayPusher, Clock, Pusher, SystemClock
from services.common.dynamo_storage import DynamoStorage
from services.common.flood import FloodControl, flood_control
from services.common.leaderboards import FRESH_SECONDS, Leaderboards
from services.common.ledger import Ledger
from services.common.profiles import ProfileStore
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Storage
from services.matchmaking.app import MatchmakingService
from services.matchmaking.forming import Tables
from services.matchmaking.lobbies import Lobbies
from services.matchmaking.queues import Queues
from services.matchmaking.rematch import Rematches
from services.matchmaking.replays import Replays
from services.matchmaking.replies import Replies
from services.matchmaking.store import LobbyStore, PlayerStore, QueueStore


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> MatchmakingService:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    return compose(
        storage=storage,
        ledger=Ledger(storage),
        pusher=ApiGatewayPusher(clients.connections),
        machine=clients.stepfunctions,
        state_machine_arn=settings.state_machine_arn,
        clock=SystemClock(),
        telemetry=telemetry,
        queue_seconds=settings.queue_seconds,
        arena_stakes=settings.arena_stakes,
        max_message_bytes=settings.max_message_bytes,
        join_limit=(settings.join_attempts, settings.join_window_seconds),
        flood=flood_control(settings),
    )


def compose(
    *,
    storage: Storage,
    ledger: Ledger,
    pusher: Pusher,
    machine: Any,
    state_machine_arn: str | None,
    clock: Clock,
    telemetry: Telemetry,
    queue_seconds: int,
    arena_stakes: tuple[int, ...],
    max_message_bytes: int,
    join_limit: tuple[int, int] | None = None,
    flood: FloodControl | None = None,
) -> MatchmakingService:
    """The use cases wired over their ports: the one graph the Lambda and the fast tests
    share, so a test exercises the pieces exactly as they are put together here."""
    players = PlayerStore(storage)
    profiles = ProfileStore(storage)
    lobby_store = LobbyStore(storage)
    tables = Tables(clock)
    replies = Replies(players=players, pusher=pusher, telemetry=telemetry)
    lobbies = Lobbies(
        store=lobby_store,
        players=players,
        tables=tables,
        replies=replies,
        clock=clock,
        telemetry=telemetry,
        **({"join_limit": join_limit} if join_limit is not None else {}),
    )
    return MatchmakingService(
        queues=Queues(
            store=QueueStore(storage),
            players=players,
            tables=tables,
            replies=replies,
            ledger=ledger,
            machine=machine,
            state_machine_arn=state_machine_arn,
            profiles=profiles,
            clock=clock,
            telemetry=telemetry,
            queue_seconds=queue_seconds,
            arena_stakes=arena_stakes,
        ),
        lobbies=lobbies,
        rematches=Rematches(
            games=GameStore(storage),
            store=lobby_store,
            lobbies=lobbies,
            replies=replies,
            clock=clock,
            telemetry=telemetry,
        ),
        players=players,
        replies=replies,
        ledger=ledger,
        profiles=profiles,
        boards=Leaderboards(storage, clock, FRESH_SECONDS),
        replays=Replays(GameStore(storage), replies),
        clock=clock,
        telemetry=telemetry,
        max_message_bytes=max_message_bytes,
        flood=flood,
    )
