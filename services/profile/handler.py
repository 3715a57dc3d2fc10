"""Lambda entry point of the profile service: finished matches from its queue."""

from __future__ import annotations

from functools import cache
from typing import Any

from services.common.events import MatchEnded
from services.common.observability import Observability
from services.common.runtime import Clients, EventRoutes, process_batch
from services.common.settings import Settings
from services.profile.app import ProfileService
from services.profile.root import build

obs = Observability("profile")


@cache
def service() -> ProfileService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


EVENTS = EventRoutes(
    obs.telemetry,
    {MatchEnded: lambda ended: service().match_ended(ended.table_id)},
)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)
