"""Lambda plumbing shared by the handlers: event models, AWS clients, SQS batches.

Clients are created on first use, so a cold start pays only for the clients
its path needs (each boto3 client loads its service model when created).
"""

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.common.events import EVENT_TYPES, EventEnvelope
from services.common.settings import Settings
from services.common.telemetry import Telemetry


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
    model_config = ConfigDict(extra="ignore", defer_build=True)

    connection_id: str = Field(alias="connectionId")
    route_key: str = Field(alias="routeKey")
    authorizer: dict[str, Any] | None = None


class WebSocketEvent(BaseModel):
    """The part of an API Gateway WebSocket event the services read."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

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


BATCH_RESPONSE_MARGIN_MS = 1000
"""What a batch keeps of its invocation after its last record: the answer and the metrics."""
RECORDS_DEFERRED = "records_deferred"
"""The metric of records a batch handed back unstarted, for want of time."""


class _Deferred(Exception):
    """A record not started: too little of the invocation is left for one more."""


def process_batch(
    event: dict[str, Any],
    context: Any,
    handle: Callable[[dict[str, Any]], None],
    on_error: Callable[[Exception], None],
    telemetry: Telemetry,
) -> dict[str, Any]:
    """Each SQS record's JSON body through ``handle``, with Powertools' ``BatchProcessor``.

    Only the failed records are reported (the event source mappings have
    ReportBatchItemFailures), so only they come back; a batch in which every
    record failed raises instead, so the invocation fails and the function's
    error alarm fires within minutes rather than when the dead-letter queue fills.

    A batch of slow records (ten whole rounds auto-played) can take longer than
    the function's timeout, and a timeout brings the whole batch back, done
    records too, until it ends in the dead-letter queue. So no record starts
    unless the function's worst case for one (``Settings.record_seconds``) and
    the answer's margin are left: it and every later one are reported as failed,
    unstarted, and come back after the visibility timeout. Deferring is not an
    error: it is counted (``records_deferred``), and a batch deferred whole
    does not raise. The budget is read at each batch (about 50 µs), so there is
    no cached copy to go stale.
    """
    from aws_lambda_powertools.utilities.batch import (  # noqa: PLC0415 - queue consumers only
        BatchProcessor,
        EventType,
        process_partial_response,
    )
    from aws_lambda_powertools.utilities.batch.exceptions import (  # noqa: PLC0415
        BatchProcessingError,
    )

    needed_ms = int(Settings().record_seconds * 1000) + BATCH_RESPONSE_MARGIN_MS
    deferred_at: list[int] = []
    """The milliseconds left at each record deferred: once one is, every later one is."""

    def record_handler(record: Any) -> None:
        remaining = int(context.get_remaining_time_in_millis())
        if remaining < needed_ms:
            deferred_at.append(remaining)
            raise _Deferred
        try:
            handle(json.loads(record.body))
        except Exception as exc:
            on_error(exc)
            raise

    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    if deferred_at:
        telemetry.count(RECORDS_DEFERRED, len(deferred_at))
        telemetry.warning(
            "records deferred",
            deferred=len(deferred_at),
            batch=len(processor.records),
            remaining_ms=deferred_at[0],
            needed_ms=needed_ms,
        )
    errors = [info for info in processor.exceptions if not isinstance(info[1], _Deferred)]
    if errors and len(errors) == len(processor.records):
        raise BatchProcessingError(
            msg=f"All {len(errors)} records failed processing.", child_exceptions=errors
        )
    return dict(response)


class TimerMessage(BaseModel):
    """What a turn timer delivers to the timer queue when it fires."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    table_id: str
    turn_started: int
    """The version that began the turn that armed it: its schedule's name."""
    at: float | None = None
    """When it was due; None in a message sent before timers said so."""


UNKNOWN_EVENTS = "unknown_events"
"""The metric of messages a consumer's routing table has no use case for."""


class EventRoutes:
    """One service's routing table: each detail-type its queue receives → its use case.

    The table is the service's whole contract with the bus (the manifest's
    ``consumes`` for its function must name the same detail-types; a test holds
    them together). A message the table does not route (a detail-type added to
    the rule but not here, or one that no model knows) is acknowledged, logged
    with its detail-type and source, and counted (``unknown_events``): it is
    neither retried forever nor dropped unseen. ``tasks`` routes messages that
    are not events, by their ``kind`` (the matchmaking state machine's tasks).
    A message that routes but does not parse still fails, and is retried.
    """

    def __init__(
        self,
        telemetry: Telemetry,
        events: Mapping[type[BaseModel], Callable[[Any], None]],
        tasks: Mapping[str, Callable[[dict[str, Any]], None]] | None = None,
    ) -> None:
        for model in events:
            if EVENT_TYPES.get(model.__name__) is not model:
                raise TypeError(f"{model.__name__} is not an event of services.common.events")
        self._telemetry = telemetry
        self._events = {model.__name__: use_case for model, use_case in events.items()}
        self._tasks = dict(tasks or {})

    @property
    def detail_types(self) -> frozenset[str]:
        return frozenset(self._events)

    def __call__(self, body: dict[str, Any]) -> None:
        kind = body.get("kind")
        if isinstance(kind, str) and kind in self._tasks:
            self._tasks[kind](body)
            return
        envelope = EventEnvelope.model_validate(body)
        use_case = self._events.get(envelope.detail_type)
        if use_case is None:
            self._telemetry.count(UNKNOWN_EVENTS)
            self._telemetry.warning(
                "unknown event", detail_type=envelope.detail_type, source=envelope.source
            )
            return
        use_case(envelope.parsed())
