"""Lambda entry points of the turn service: the ``play``/``sync`` routes, events, timers."""

from __future__ import annotations

from functools import cache
from typing import Any

from services.common.events import PlayerConnected, PlayerDisconnected, RoundStarted
from services.common.observability import Observability
from services.common.runtime import (
    Clients,
    EventRoutes,
    TimerMessage,
    WebSocketEvent,
    process_batch,
)
from services.common.settings import Settings
from services.turn.app import TurnService
from services.turn.root import build

obs = Observability("turn")


@cache
def service() -> TurnService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


@obs.handler
def websocket(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = WebSocketEvent.model_validate(event)
    service().receive(request.player, request.request_context.connection_id, request.body)
    return {"statusCode": 200}


EVENTS = EventRoutes(
    obs.telemetry,
    {
        RoundStarted: lambda started: service().on_event(started),
        PlayerConnected: lambda connected: service().on_event(connected),
        PlayerDisconnected: lambda disconnected: service().on_event(disconnected),
    },
)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)


def _on_timer(body: dict[str, Any]) -> None:
    timer = TimerMessage.model_validate(body)
    service().expire_turn(timer.table_id, timer.at)


@obs.handler
def timers(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, _on_timer, obs.logger.exception, obs.telemetry)
