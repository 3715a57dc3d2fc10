"""Event envelopes, SQS batches and WebSocket events as the handlers parse them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from services.common.events import (
    EVENT_TYPES,
    EventEnvelope,
    PlayerDisconnected,
    RoundEnded,
    RoundStarted,
)
from services.common.runtime import (
    BATCH_RESPONSE_MARGIN_MS,
    RECORDS_DEFERRED,
    UNKNOWN_EVENTS,
    EventRoutes,
    TimerMessage,
    WebSocketEvent,
    process_batch,
)
from services.common.settings import Settings
from services.common.telemetry import RecordingTelemetry

pytestmark = pytest.mark.unit


class _Invocation:
    """A Lambda context whose time left is what the test sets."""

    def __init__(self, remaining_ms: int = 30_000) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def _delivered(detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
    """An EventBridge event as the local stack's bus puts it on an SQS target: no ``account``
    field."""
    return {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": detail_type,
        "source": "canasta.turn",
        "time": "2026-11-30T03:00:00Z",
        "region": "eu-west-1",
        "resources": [],
        "detail": detail,
    }


def test_an_envelope_without_account_is_accepted() -> None:
    body = _delivered("RoundEnded", {"table_id": "t1", "round": 2, "version": 40, "went_out": None})
    assert "account" not in body
    parsed = EventEnvelope.model_validate(body).parsed()
    assert parsed == RoundEnded(table_id="t1", round=2, version=40, went_out=None)


def test_an_envelope_with_every_platform_field_is_accepted() -> None:
    body = {
        **_delivered(
            "RoundStarted",
            {"table_id": "t1", "round": 1, "dealer": 4, "commitment": "c", "version": 1},
        ),
        "account": "123456789012",
        "something-new": {"added": "by the platform"},
    }
    parsed = EventEnvelope.model_validate(body).parsed()
    assert isinstance(parsed, RoundStarted)


def test_a_detail_with_an_unknown_field_is_refused() -> None:
    body = _delivered(
        "RoundEnded",
        {"table_id": "t1", "round": 2, "version": 40, "went_out": None, "extra": 1},
    )
    with pytest.raises(ValidationError):
        EventEnvelope.model_validate(body).parsed()


def test_presence_events_without_a_table_parse() -> None:
    body = _delivered("PlayerDisconnected", {"player_id": "p1", "connection_id": "c1"})
    parsed = EventEnvelope.model_validate(body).parsed()
    assert parsed == PlayerDisconnected(player_id="p1", connection_id="c1")


def test_every_event_type_is_named_after_its_model() -> None:
    assert all(model.__name__ == name for name, model in EVENT_TYPES.items())


def test_process_batch_reports_only_the_failed_records() -> None:
    handled: list[dict[str, Any]] = []
    errors: list[Exception] = []

    def handle(body: dict[str, Any]) -> None:
        if body.get("fail"):
            raise ValueError("boom")
        handled.append(body)

    event = {
        "Records": [
            {"messageId": "m1", "body": json.dumps({"n": 1})},
            {"messageId": "m2", "body": json.dumps({"n": 2, "fail": True})},
            {"messageId": "m3", "body": json.dumps({"n": 3})},
            {"messageId": "m4", "body": "not json"},
        ]
    }
    result = process_batch(event, _Invocation(), handle, errors.append, RecordingTelemetry())
    assert result == {"batchItemFailures": [{"itemIdentifier": "m2"}, {"itemIdentifier": "m4"}]}
    assert handled == [{"n": 1}, {"n": 3}]
    assert len(errors) == 2


def test_a_batch_whose_every_record_failed_fails_the_invocation() -> None:
    """So the function's error alarm sees it (a denied call on every message, say)."""
    from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

    def handle(body: dict[str, Any]) -> None:
        raise PermissionError(body["n"])

    errors: list[Exception] = []
    event = {
        "Records": [
            {"messageId": "m1", "body": json.dumps({"n": 1})},
            {"messageId": "m2", "body": json.dumps({"n": 2})},
        ]
    }
    with pytest.raises(BatchProcessingError):
        process_batch(event, _Invocation(), handle, errors.append, RecordingTelemetry())
    assert len(errors) == 2


def _batch(count: int) -> dict[str, Any]:
    return {"Records": [{"messageId": f"m{n}", "body": json.dumps({"n": n})} for n in range(count)]}


def _needed_ms() -> int:
    """What a batch must have left to start a record: the function's worst case for one,
    and the margin for the answer."""
    return int(Settings().record_seconds * 1000) + BATCH_RESPONSE_MARGIN_MS


@pytest.fixture
def budget(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("CANASTA_RECORD_SECONDS", "6")
    return _needed_ms()


def test_a_batch_with_too_little_time_left_starts_no_record_and_does_not_fail(
    budget: int,
) -> None:
    """Every record comes back unstarted after the visibility timeout; deferring is not an
    error, so a batch deferred whole does not raise as a batch failed whole does."""
    handled: list[dict[str, Any]] = []
    errors: list[Exception] = []
    telemetry = RecordingTelemetry()
    result = process_batch(
        _batch(3), _Invocation(budget - 1), handled.append, errors.append, telemetry
    )
    assert result == {"batchItemFailures": [{"itemIdentifier": f"m{n}"} for n in range(3)]}
    assert handled == [] and errors == []
    assert telemetry.metrics == {RECORDS_DEFERRED: 3}
    assert telemetry.lines == [
        (
            "warning",
            "records deferred",
            {"deferred": 3, "batch": 3, "remaining_ms": budget - 1, "needed_ms": budget},
        )
    ]


def test_a_batch_starts_records_while_one_more_fits_then_hands_the_rest_back(
    budget: int,
) -> None:
    """Ten records of the worst case in a 30 s invocation: four fit (24 s), the six others
    are reported unstarted, the failed one among the four as failed."""
    invocation = _Invocation(30_000)
    record_ms = budget - BATCH_RESPONSE_MARGIN_MS
    handled: list[int] = []
    errors: list[Exception] = []

    def handle(body: dict[str, Any]) -> None:
        invocation.remaining_ms -= record_ms
        if body["n"] == 1:
            raise ValueError("boom")
        handled.append(body["n"])

    telemetry = RecordingTelemetry()
    result = process_batch(_batch(10), invocation, handle, errors.append, telemetry)
    assert handled == [0, 2, 3]
    assert len(errors) == 1
    assert result == {
        "batchItemFailures": [{"itemIdentifier": f"m{n}"} for n in (1, 4, 5, 6, 7, 8, 9)]
    }
    assert telemetry.metrics == {RECORDS_DEFERRED: 6}
    assert invocation.remaining_ms >= BATCH_RESPONSE_MARGIN_MS


def test_a_record_starts_with_exactly_its_budget_left(budget: int) -> None:
    handled: list[dict[str, Any]] = []
    telemetry = RecordingTelemetry()
    result = process_batch(_batch(1), _Invocation(budget), handled.append, print, telemetry)
    assert result == {"batchItemFailures": []}
    assert handled == [{"n": 0}]
    assert telemetry.metrics == {}


def test_a_timer_message_is_strict() -> None:
    assert TimerMessage.model_validate({"table_id": "t", "turn_started": 3}).turn_started == 3
    with pytest.raises(ValidationError):
        TimerMessage.model_validate({"table_id": "t", "turn_started": 3, "x": 1})


def test_the_player_comes_from_the_authorizer_never_the_body() -> None:
    event = {
        "requestContext": {
            "connectionId": "c1",
            "routeKey": "play",
            "authorizer": {"player_id": "p1", "name": "Ann", "principalId": "p1"},
        },
        "body": json.dumps({"player_id": "p2", "name": "Mallory"}),
    }
    assert WebSocketEvent.model_validate(event).player == ("p1", "Ann")
    no_auth = {"requestContext": {"connectionId": "c1", "routeKey": "play"}, "body": "{}"}
    assert WebSocketEvent.model_validate(no_auth).player is None
    empty = {**no_auth, "requestContext": {**no_auth["requestContext"], "authorizer": {}}}
    assert WebSocketEvent.model_validate(empty).player is None


def test_settings_read_the_environment_as_the_stack_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``CANASTA_<FIELD>`` in any case, ``AWS_REGION``, a tuple or a mapping as JSON;
    arguments win."""
    from services.common.settings import Settings

    monkeypatch.setenv("AWS_REGION", "us-east-2")
    monkeypatch.setenv("CANASTA_REGION", "ignored: the region is AWS_REGION")
    monkeypatch.setenv("CANASTA_ARENA_STAKES", "[5,50]")
    monkeypatch.setenv("canasta_turn_seconds", "45")
    monkeypatch.setenv("CANASTA_SEED_SECRET", "k")
    monkeypatch.setenv(
        "CANASTA_LEDGER_CLIENTS", '{"rummy": {"points_per_booking": 5, "points_per_day": 50}}'
    )
    settings = Settings()
    assert settings.region == "us-east-2"
    assert settings.arena_stakes == (5, 50)
    assert settings.turn_seconds == 45
    assert settings.seed_secret is not None and settings.seed_secret.get_secret_value() == "k"
    rummy = settings.ledger_clients["rummy"]
    assert (rummy.points_per_booking, rummy.points_per_day) == (5, 50)
    assert settings.endpoint_url is None
    assert Settings(turn_seconds=30).turn_seconds == 30
    monkeypatch.delenv("canasta_turn_seconds")
    monkeypatch.setenv("CANASTA_TURN_SECONDS", "2")
    with pytest.raises(ValidationError):
        Settings()


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("rummy", True),
        ("r", True),
        ("rummy-2", True),
        ("a" * 32, True),
        ("a" * 33, False),
        ("", False),
        ("2rummy", False),
        ("-rummy", False),
        ("Rummy", False),
        ("rummy_2", False),
        ("rummy\n", False),
    ],
)
def test_a_ledger_client_is_named_as_a_lambda_alias(name: str, valid: bool) -> None:
    from services.common.settings import Settings

    clients = {name: {"points_per_booking": 5, "points_per_day": 50}}
    if valid:
        assert list(Settings(ledger_clients=clients).ledger_clients) == [name]
    else:
        with pytest.raises(ValidationError):
            Settings(ledger_clients=clients)


def test_the_protocols_bot_levels_are_the_engines() -> None:
    """A level the host may choose is one the turn service can play (level_policy)."""
    from typing import get_args

    from services.common.events import BotLevel
    from shared_engine.search import LEVELS

    assert get_args(BotLevel) == LEVELS


# --- the routing tables ----------------------------------------------------------------


def _routes(seen: list[Any], telemetry: RecordingTelemetry) -> EventRoutes:
    return EventRoutes(
        telemetry,
        {RoundEnded: seen.append, PlayerDisconnected: seen.append},
        tasks={"try_match": lambda body: seen.append(("task", body["ticket"]))},
    )


def _ended() -> dict[str, Any]:
    return _delivered("RoundEnded", {"table_id": "t1", "round": 2, "version": 40, "went_out": 3})


def test_a_routing_table_gives_each_event_its_use_case_parsed() -> None:
    seen: list[Any] = []
    telemetry = RecordingTelemetry()
    _routes(seen, telemetry)(_ended())
    assert seen == [RoundEnded(table_id="t1", round=2, version=40, went_out=3)]
    assert UNKNOWN_EVENTS not in telemetry.metrics


@pytest.mark.parametrize("detail_type", ["RoundStarted", "SomethingNew"])
def test_an_event_the_table_does_not_route_is_logged_counted_and_acknowledged(
    detail_type: str,
) -> None:
    """A known event this service does not take, or one no model knows: no use case runs,
    the batch does not fail (it would come back forever), and the event is seen."""
    seen: list[Any] = []
    telemetry = RecordingTelemetry()
    body = {**_ended(), "detail-type": detail_type}
    event = {"Records": [{"messageId": "m1", "body": json.dumps(body), "eventSource": "aws:sqs"}]}
    routes = _routes(seen, telemetry)
    assert process_batch(event, _Invocation(), routes, lambda _exc: None, telemetry) == {
        "batchItemFailures": []
    }
    assert seen == []
    assert telemetry.metrics[UNKNOWN_EVENTS] == 1
    assert telemetry.lines == [
        ("warning", "unknown event", {"detail_type": detail_type, "source": "canasta.turn"})
    ]


def test_a_routed_event_that_does_not_parse_fails_and_is_retried() -> None:
    seen: list[Any] = []
    body = _ended()
    body["detail"]["version"] = "forty"
    with pytest.raises(ValidationError):
        _routes(seen, RecordingTelemetry())(body)
    assert seen == []


def test_a_task_is_routed_by_its_kind() -> None:
    seen: list[Any] = []
    _routes(seen, RecordingTelemetry())({"kind": "try_match", "ticket": {"id": "x"}})
    assert seen == [("task", {"id": "x"})]


def test_a_routing_table_takes_only_the_bus_events() -> None:
    with pytest.raises(TypeError, match="TimerMessage"):
        EventRoutes(RecordingTelemetry(), {TimerMessage: print})
