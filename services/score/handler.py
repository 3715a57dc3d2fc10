"""Lambda entry point of the score service: ``RoundEnded`` from its queue."""

from __future__ import annotations

from functools import cache
from typing import Any

from services.common.events import RoundEnded
from services.common.observability import Observability
from services.common.runtime import Clients, EventRoutes, process_batch
from services.common.settings import Settings
from services.score.app import ScoreService
from services.score.root import build

obs = Observability("score")


@cache
def service() -> ScoreService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


EVENTS = EventRoutes(obs.telemetry, {RoundEnded: lambda ended: service().round_ended(ended)})


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)
