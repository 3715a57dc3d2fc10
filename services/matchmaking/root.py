"""The matchmaking service's composition root."""

from __future__ import annotations

from services.common.adapters import ApiGatewayPusher, SystemClock
from services.common.dynamo_storage import DynamoStorage
from services.common.flood import flood_control
from services.common.ledger import Ledger
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.matchmaking.app import MatchmakingService
from services.matchmaking.forming import Tables
from services.matchmaking.lobbies import Lobbies
from services.matchmaking.queues import Queues
from services.matchmaking.rematch import Rematches
from services.matchmaking.replies import Replies
from services.matchmaking.store import LobbyStore, PlayerStore, QueueStore


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> MatchmakingService:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    clock = SystemClock()
    players = PlayerStore(storage)
    lobby_store = LobbyStore(storage)
    ledger = Ledger(storage)
    tables = Tables(clock)
    replies = Replies(
        players=players, pusher=ApiGatewayPusher(clients.connections), telemetry=telemetry
    )
    lobbies = Lobbies(
        store=lobby_store,
        players=players,
        tables=tables,
        replies=replies,
        clock=clock,
        telemetry=telemetry,
        join_limit=(settings.join_attempts, settings.join_window_seconds),
    )
    return MatchmakingService(
        queues=Queues(
            store=QueueStore(storage),
            players=players,
            tables=tables,
            replies=replies,
            ledger=ledger,
            machine=clients.stepfunctions,
            state_machine_arn=settings.state_machine_arn,
            clock=clock,
            telemetry=telemetry,
            queue_seconds=settings.queue_seconds,
            poll_seconds=settings.poll_seconds,
            arena_stakes=settings.arena_stakes,
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
        telemetry=telemetry,
        max_message_bytes=settings.max_message_bytes,
        flood=flood_control(settings),
    )
