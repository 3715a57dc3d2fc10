"""The connect service's composition root."""

from __future__ import annotations

from services.common.adapters import ApiGatewayPusher, EventBridgePublisher, SystemClock
from services.common.presence import PresenceStore
from services.common.runtime import Clients, token_secret
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry
from services.connect.app import ConnectService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> ConnectService:
    store = GameStore(clients.dynamodb, settings.games_table)
    return ConnectService(
        store=store,
        presence=PresenceStore(
            clients.dynamodb, settings.connections_table, settings.players_table
        ),
        publisher=EventBridgePublisher(clients.events, settings.event_bus),
        views=ViewPusher(ApiGatewayPusher(clients.connections), store),
        clock=SystemClock(),
        telemetry=telemetry,
        token_secret=token_secret(settings, clients),
        connection_ttl=settings.connection_ttl_seconds,
    )
