"""Lambda entry points of matchmaking: its WebSocket routes, and its queue (events, tasks)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from services.common.events import MatchEnded, PlayerDisconnected, TableAborted
from services.common.observability import Observability
from services.common.runtime import Clients, EventRoutes, WebSocketEvent, process_batch
from services.common.settings import Settings
from services.matchmaking.app import MatchmakingService
from services.matchmaking.root import build

obs = Observability("matchmaking")


@cache
def service() -> MatchmakingService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


class TryMatchTask(BaseModel):
    """What the state machine sends: a ticket's one task, answered with its token when the
    ticket ends."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: str
    ticket: dict[str, Any]
    task_token: str


@obs.handler
def websocket(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = WebSocketEvent.model_validate(event)
    service().receive(request.player, request.request_context.connection_id, request.body)
    return {"statusCode": 200}


class AbandonTask(BaseModel):
    """What the state machine sends when it gives up on a ticket: the error that ended its
    task (``States.Timeout``: the queue time was up)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: str
    ticket: dict[str, Any]
    error: str = "States.Timeout"
    """An execution started with the previous definition (it polled) sends none: it gives
    up after its passes went unanswered, and its player must still leave the queue."""


def _try_match(body: dict[str, Any]) -> None:
    task = TryMatchTask.model_validate(body)
    service().queues.try_match(task.ticket, task.task_token)


def _abandon(body: dict[str, Any]) -> None:
    task = AbandonTask.model_validate(body)
    service().queues.abandon(task.ticket, task.error)


EVENTS = EventRoutes(
    obs.telemetry,
    {
        MatchEnded: lambda ended: service().match_over(ended),
        TableAborted: lambda aborted: service().match_over(aborted),
        PlayerDisconnected: lambda gone: service().player_disconnected(gone),
    },
    tasks={
        "try_match": _try_match,
        "abandon": _abandon,
    },
)
"""Its queue carries the bus's events and the state machine's tasks (``kind``)."""


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)
