"""The relay's composition root."""

from __future__ import annotations

from services.common.adapters import EventBridgePublisher
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.telemetry import Telemetry
from services.relay.app import RelayService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> RelayService:
    return RelayService(EventBridgePublisher(clients.events, settings.event_bus), telemetry)
