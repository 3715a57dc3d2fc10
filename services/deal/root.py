"""The deal service's composition root."""

from __future__ import annotations

from services.common.adapters import SystemClock
from services.common.ledger import Ledger
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.telemetry import Telemetry
from services.common.wiring import adapters, entropy
from services.deal.app import DealService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> DealService:
    wired = adapters(settings, clients)
    return DealService(
        store=wired.store,
        presence=wired.presence,
        views=wired.views,
        timers=wired.timers,
        clock=SystemClock(),
        entropy=entropy(settings),
        telemetry=telemetry,
        ledger=Ledger(wired.storage),
        turn_seconds=settings.turn_seconds,
    )
