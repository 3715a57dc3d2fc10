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
from services.matchmaking.store import MatchmakingStore


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> MatchmakingService:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    return MatchmakingService(
        store=MatchmakingStore(storage),
        games=GameStore(storage),
        ledger=Ledger(storage),
        pusher=ApiGatewayPusher(clients.connections),
        machine=clients.stepfunctions,
        state_machine_arn=settings.state_machine_arn,
        clock=SystemClock(),
        telemetry=telemetry,
        queue_seconds=settings.queue_seconds,
        poll_seconds=settings.poll_seconds,
        arena_stakes=settings.arena_stakes,
        max_message_bytes=settings.max_message_bytes,
        flood=flood_control(settings),
        join_limit=(settings.join_attempts, settings.join_window_seconds),
    )
