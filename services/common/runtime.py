"""Lambda plumbing shared by the handlers: event models, AWS clients, SQS batches.

Clients are created on first use, so a cold start pays only for the clients
its path needs (each boto3 client loads its service model when created).
"""

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.common.settings import Settings


class LazyClient:
    """Stands for a boto3 client and creates it on first use (each costs tens of ms)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            self._client = self._factory()
        return getattr(self._client, name)


class Clients:
    """Every AWS client a service may use, built from the settings on first use."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.dynamodb = self._lazy("dynamodb")
        self.events = self._lazy("events")
        self.scheduler = self._lazy("scheduler")
        self.sqs = self._lazy("sqs")
        self.stepfunctions = self._lazy("stepfunctions")
        self.connections = self._lazy("apigatewaymanagementapi", settings.websocket_endpoint)

    def _lazy(self, service: str, endpoint_url: str | None = None) -> Any:
        settings = self._settings

        def create() -> Any:
            import boto3  # noqa: PLC0415 - the heaviest import, paid only when a client is used

            return boto3.client(
                service,
                region_name=settings.region,
                endpoint_url=endpoint_url or settings.endpoint_url,
            )

        return LazyClient(create)


class RequestContext(BaseModel):
    model_config = ConfigDict(extra="ignore")

    connection_id: str = Field(alias="connectionId")
    route_key: str = Field(alias="routeKey")
    authorizer: dict[str, Any] | None = None


class WebSocketEvent(BaseModel):
    """The part of an API Gateway WebSocket event the services read."""

    model_config = ConfigDict(extra="ignore")

    request_context: RequestContext = Field(alias="requestContext")
    body: str | None = None
    query: dict[str, str] | None = Field(default=None, alias="queryStringParameters")

    @property
    def player(self) -> tuple[str, str] | None:
        """(player id, name) from the connect-time authorizer, never from the body."""
        auth = self.request_context.authorizer or {}
        player_id, name = auth.get("player_id"), auth.get("name")
        if isinstance(player_id, str) and isinstance(name, str) and player_id:
            return player_id, name
        return None


def process_batch(
    event: dict[str, Any],
    context: Any,
    handle: Callable[[dict[str, Any]], None],
    on_error: Callable[[Exception], None],
) -> dict[str, Any]:
    """Each SQS record's JSON body through ``handle``, with Powertools' ``BatchProcessor``.

    Only the failed records are reported (the event source mappings have
    ReportBatchItemFailures), so only they come back; a batch in which every
    record failed raises instead, so the invocation fails and the function's
    error alarm fires within minutes rather than when the dead-letter queue fills.
    """
    from aws_lambda_powertools.utilities.batch import (  # noqa: PLC0415 - queue consumers only
        BatchProcessor,
        EventType,
        process_partial_response,
    )

    def record_handler(record: Any) -> None:
        try:
            handle(json.loads(record.body))
        except Exception as exc:
            on_error(exc)
            raise

    response = process_partial_response(
        event=event,
        record_handler=record_handler,
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,
    )
    return dict(response)


class TimerMessage(BaseModel):
    """What a turn timer delivers to the timer queue when it fires."""

    model_config = ConfigDict(extra="forbid")

    table_id: str
    turn_started: int
