"""Lambda entry points of matchmaking: its WebSocket routes, and its queue (events, tasks)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from services.common.events import EventEnvelope, MatchEnded, PlayerDisconnected, TableAborted
from services.common.observability import Observability
from services.common.runtime import Clients, WebSocketEvent, process_batch
from services.common.settings import Settings
from services.matchmaking.app import MatchmakingService
from services.matchmaking.root import build

obs = Observability("matchmaking")


@cache
def service() -> MatchmakingService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


class TryMatchTask(BaseModel):
    """What the state machine sends: one pass of a ticket, answered with its task token."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    ticket: dict[str, Any]
    task_token: str


@obs.handler
def websocket(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = WebSocketEvent.model_validate(event)
    service().receive(request.player, request.request_context.connection_id, request.body)
    return {"statusCode": 200}


class AbandonTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    ticket: dict[str, Any]


def _on_message(body: dict[str, Any]) -> None:
    if body.get("kind") == "try_match":
        task = TryMatchTask.model_validate(body)
        service().answer_task(task.ticket, task.task_token)
        return
    if body.get("kind") == "abandon":
        service().abandon(AbandonTask.model_validate(body).ticket)
        return
    detail = EventEnvelope.model_validate(body).parsed()
    if isinstance(detail, (MatchEnded, TableAborted)):
        service().match_over(detail)
    elif isinstance(detail, PlayerDisconnected):
        service().player_disconnected(detail)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, _on_message, obs.logger.exception)
