"""The profile service's composition root."""

from __future__ import annotations

from services.common.dynamo_storage import DynamoStorage
from services.common.profiles import ProfileStore
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.profile.app import ProfileService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> ProfileService:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    return ProfileService(GameStore(storage), ProfileStore(storage), telemetry)
