"""The adapters every composition root assembles, built once from settings and clients."""

from __future__ import annotations

from services.common.adapters import (
    ApiGatewayPusher,
    DeadlineTurnTimers,
    DerivedEntropy,
    Entropy,
    SecureEntropy,
    TurnTimers,
)
from services.common.dynamo_storage import DynamoStorage
from services.common.frozen import Frozen
from services.common.presence import PresenceStore
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.unit_of_work import Storage


class Adapters(Frozen):
    storage: Storage
    store: GameStore
    presence: PresenceStore
    views: ViewPusher
    timers: TurnTimers | None


def adapters(settings: Settings, clients: Clients) -> Adapters:
    storage = DynamoStorage.of(clients.dynamodb, settings)
    timers = None
    if (
        settings.timer_queue_url
        and settings.timer_queue_arn
        and settings.scheduler_role_arn
        and settings.schedule_dead_letter_arn
    ):
        timers = DeadlineTurnTimers(
            clients.sqs,
            settings.timer_queue_url,
            scheduler=clients.scheduler,
            group=settings.schedule_group,
            queue_arn=settings.timer_queue_arn,
            role_arn=settings.scheduler_role_arn,
            dead_letter_arn=settings.schedule_dead_letter_arn,
        )
    return Adapters(
        storage=storage,
        store=GameStore(storage),
        presence=PresenceStore(storage),
        views=ViewPusher(ApiGatewayPusher(clients.connections)),
        timers=timers,
    )


def entropy(settings: Settings) -> Entropy:
    """DEAL-4: the operating system's secure source, unless a rehearsal environment sets
    the secret its seeds are derived from."""
    if settings.seed_secret is not None:
        return DerivedEntropy(settings.seed_secret.get_secret_value().encode())
    return SecureEntropy()
