"""The score service's composition root."""

from __future__ import annotations

from services.common.adapters import SystemClock
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.telemetry import Telemetry
from services.common.wiring import adapters
from services.score.app import ScoreService


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> ScoreService:
    wired = adapters(settings, clients)
    return ScoreService(
        store=wired.store,
        presence=wired.presence,
        views=wired.views,
        clock=SystemClock(),
        telemetry=telemetry,
        timers=wired.timers,
        intermission_seconds=settings.intermission_seconds,
    )
