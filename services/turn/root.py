"""The turn service's composition root: settings in, a wired ``TurnService`` out."""

from __future__ import annotations

from services.common.adapters import SystemClock
from services.common.flood import flood_control
from services.common.ledger import Ledger
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.telemetry import Telemetry
from services.common.wiring import adapters, entropy
from services.turn.app import TurnService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> TurnService:
    wired = adapters(settings, clients)
    return TurnService(
        store=wired.store,
        presence=wired.presence,
        views=wired.views,
        timers=wired.timers,
        clock=SystemClock(),
        entropy=entropy(settings),
        telemetry=telemetry,
        ledger=Ledger(wired.storage),
        turn_seconds=settings.turn_seconds,
        max_message_bytes=settings.max_message_bytes,
        flood=flood_control(settings),
    )
