"""The ledger service's composition root."""

from __future__ import annotations

from services.common.adapters import EventBridgePublisher, SystemClock
from services.common.dynamo_storage import DynamoStorage
from services.common.ledger import Ledger
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.ledger.app import LedgerService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> LedgerService:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    return LedgerService(
        Ledger(storage),
        GameStore(storage),
        EventBridgePublisher(clients.events, settings.event_bus),
        SystemClock(),
        telemetry,
        clients=settings.ledger_clients,
    )
