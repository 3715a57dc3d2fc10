"""The connect service's composition root."""

from __future__ import annotations

from services.common.adapters import ApiGatewayPusher, Clock, EventBridgePublisher, SystemClock
from services.common.auth import Issuer, TokenVerifier
from services.common.dynamo_storage import DynamoStorage
from services.common.presence import PresenceStore
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry
from services.connect.app import ConnectService


def verifier(settings: Settings, clock: Clock) -> TokenVerifier | None:
    """The token check, when this function is configured with an issuer (the authorizer)."""
    if settings.oidc_issuer is None or settings.oidc_audience is None:
        return None
    issuer = settings.oidc_issuer.rstrip("/")
    return TokenVerifier(
        Issuer(
            url=issuer,
            audience=settings.oidc_audience,
            jwks_url=settings.oidc_jwks_url or f"{issuer}/.well-known/jwks.json",
        ),
        clock.now,
    )


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> ConnectService:
    clock = SystemClock()
    storage = DynamoStorage.of(clients.dynamodb, settings)
    return ConnectService(
        store=GameStore(storage),
        presence=PresenceStore(storage),
        publisher=EventBridgePublisher(clients.events, settings.event_bus),
        views=ViewPusher(ApiGatewayPusher(clients.connections)),
        clock=clock,
        telemetry=telemetry,
        verifier=verifier(settings, clock),
        connection_ttl=settings.connection_ttl_seconds,
    )
