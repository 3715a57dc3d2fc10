"""The ledger service's composition root."""

from __future__ import annotations

from services.common.adapters import EventBridgePublisher, SystemClock
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.telemetry import Telemetry
from services.ledger.app import LedgerService
from services.ledger.book import Ledger


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> LedgerService:
    return LedgerService(
        Ledger(clients.dynamodb, settings.ledger_table),
        EventBridgePublisher(clients.events, settings.event_bus),
        SystemClock(),
        telemetry,
        settings.ledger_clients,
    )
