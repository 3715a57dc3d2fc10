"""Lambda entry point of the deal service: ``TableFormed`` and ``RoundScored`` from its queue."""

from __future__ import annotations

from functools import cache
from typing import Any

from services.common.events import RoundScored, TableFormed
from services.common.observability import Observability
from services.common.runtime import Clients, EventRoutes, process_batch
from services.common.settings import Settings
from services.deal.app import DealService
from services.deal.root import build

obs = Observability("deal")


@cache
def service() -> DealService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


EVENTS = EventRoutes(
    obs.telemetry,
    {
        TableFormed: lambda formed: service().table_formed(formed),
        RoundScored: lambda scored: service().round_scored(scored),
    },
)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)
