"""Lambda entry point of the deal service: ``TableFormed`` and ``RoundScored`` from its queue."""

from __future__ import annotations

from functools import cache
from typing import Any

from services.common.events import EventEnvelope, RoundScored, TableFormed
from services.common.observability import Observability
from services.common.runtime import Clients, process_batch
from services.common.settings import Settings
from services.deal.app import DealService
from services.deal.root import build

obs = Observability("deal")


@cache
def service() -> DealService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


def _on_event(body: dict[str, Any]) -> None:
    detail = EventEnvelope.model_validate(body).parsed()
    if isinstance(detail, TableFormed):
        service().table_formed(detail)
    elif isinstance(detail, RoundScored):
        service().round_scored(detail)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, _on_event, obs.logger.exception)
