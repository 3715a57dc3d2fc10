"""The AWS adapters against botocore's Stubber: 410s, batches, partial failures, conflicts.

They prove the adapters' requests and their reading of the answers, so they stand on
botocore, outside the use-case tier (whose fakes stand in for these adapters)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from services.common.adapters import (
    PUT_EVENTS_BYTES,
    ApiGatewayPusher,
    DeadlineTurnTimers,
    EventBridgePublisher,
    Unpublished,
)
from services.common.records import Outbound, outbox
from services.common.telemetry import RecordingTelemetry
from services.relay.app import RelayService, StreamRecord

pytestmark = pytest.mark.integration


def _client(service: str, **kwargs: Any) -> Any:
    return boto3.client(
        service,
        region_name="eu-west-1",
        aws_access_key_id="unit",
        aws_secret_access_key="unit",
        **kwargs,
    )


@pytest.fixture
def management() -> Iterator[tuple[Any, Stubber]]:
    client = _client("apigatewaymanagementapi", endpoint_url="https://abc.example.com/prod")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_a_push_posts_the_message_as_json(management: tuple[Any, Stubber]) -> None:
    client, stubber = management
    stubber.add_response(
        "post_to_connection", {}, {"ConnectionId": "c1", "Data": b'{"type":"view"}'}
    )
    assert ApiGatewayPusher(client).send("c1", {"type": "view"}) is True


def test_a_gone_connection_is_reported_not_raised(management: tuple[Any, Stubber]) -> None:
    client, stubber = management
    stubber.add_client_error(
        "post_to_connection", service_error_code="GoneException", http_status_code=410
    )
    assert ApiGatewayPusher(client).send("c1", {"type": "view"}) is False


def test_other_push_errors_are_raised(management: tuple[Any, Stubber]) -> None:
    client, stubber = management
    stubber.add_client_error(
        "post_to_connection", service_error_code="LimitExceededException", http_status_code=429
    )
    with pytest.raises(ClientError):
        ApiGatewayPusher(client).send("c1", {"type": "view"})


def _events(count: int, pad: int = 0, first: int = 0) -> list[Outbound]:
    return [
        Outbound("RoundEnded", {"n": n, "pad": "x" * pad}, "canasta.turn")
        for n in range(first, first + count)
    ]


def _entries(events: list[Outbound]) -> list[dict[str, str]]:
    return [
        {
            "EventBusName": "bus",
            "Source": e.source,
            "DetailType": e.detail_type,
            "Detail": json.dumps(e.detail, separators=(",", ":")),
        }
        for e in events
    ]


def _taken(count: int) -> dict[str, Any]:
    return {"FailedEntryCount": 0, "Entries": [{"EventId": f"e{i}"} for i in range(count)]}


@pytest.fixture
def bus() -> Iterator[tuple[Any, Stubber]]:
    client = _client("events")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_events_are_published_in_order_in_calls_of_ten(bus: tuple[Any, Stubber]) -> None:
    client, stubber = bus
    events = _events(23)
    for start, size in ((0, 10), (10, 10), (20, 3)):
        call = events[start : start + size]
        stubber.add_response("put_events", _taken(size), {"Entries": _entries(call)})
    EventBridgePublisher(client, "bus").publish(events)


def test_a_call_s_entries_stay_within_256_kb(bus: tuple[Any, Stubber]) -> None:
    """EventBridge counts an entry's Source, DetailType and Detail: four entries of exactly
    a quarter of the limit fill one call, a byte more starts the next call with the fourth,
    which the next entries then fill."""
    client, stubber = bus
    (probe,) = _entries(_events(1))
    overhead = sum(len(probe[k]) for k in ("Source", "DetailType", "Detail"))
    quarter = PUT_EVENTS_BYTES // 4 - overhead
    exact = _events(4, pad=quarter)
    stubber.add_response("put_events", _taken(4), {"Entries": _entries(exact)})
    over = [
        *_events(3, pad=quarter),
        *_events(1, pad=quarter + 1, first=3),
        *_events(2, pad=quarter, first=4),
    ]
    stubber.add_response("put_events", _taken(3), {"Entries": _entries(over[:3])})
    stubber.add_response("put_events", _taken(3), {"Entries": _entries(over[3:])})
    publisher = EventBridgePublisher(client, "bus")
    publisher.publish(exact)
    publisher.publish(over)


def test_an_entry_over_the_limit_goes_alone_and_its_refusal_is_raised(
    bus: tuple[Any, Stubber],
) -> None:
    client, stubber = bus
    events = [*_events(1), *_events(1, pad=PUT_EVENTS_BYTES, first=1)]
    stubber.add_response("put_events", _taken(1), {"Entries": _entries(events[:1])})
    stubber.add_client_error(
        "put_events",
        service_error_code="ValidationException",
        http_status_code=400,
        expected_params={"Entries": _entries(events[1:])},
    )
    with pytest.raises(Unpublished) as raised:
        EventBridgePublisher(client, "bus").publish(events)
    assert raised.value.published == 1


def test_a_refused_entry_names_how_many_events_the_bus_took(bus: tuple[Any, Stubber]) -> None:
    """Ten taken by the first call, then the second call's second entry refused: eleven."""
    client, stubber = bus
    events = _events(13)
    stubber.add_response("put_events", _taken(10), {"Entries": _entries(events[:10])})
    answers = [
        {"EventId": "e10"},
        {"ErrorCode": "InternalFailure", "ErrorMessage": "try again"},
        {"EventId": "e12"},
    ]
    stubber.add_response(
        "put_events",
        {"FailedEntryCount": 1, "Entries": answers},
        {"Entries": _entries(events[10:])},
    )
    with pytest.raises(Unpublished, match="InternalFailure") as raised:
        EventBridgePublisher(client, "bus").publish(events)
    assert raised.value.published == 11
    assert isinstance(raised.value, RuntimeError), "the callers that publish directly retry"


def test_a_failed_call_names_the_events_of_the_calls_before_it(
    bus: tuple[Any, Stubber],
) -> None:
    client, stubber = bus
    events = _events(12)
    stubber.add_response("put_events", _taken(10), {"Entries": _entries(events[:10])})
    stubber.add_client_error(
        "put_events", service_error_code="ThrottlingException", http_status_code=400
    )
    with pytest.raises(Unpublished) as raised:
        EventBridgePublisher(client, "bus").publish(events)
    assert raised.value.published == 10
    assert isinstance(raised.value.__cause__, ClientError)


def test_the_relay_retries_from_the_record_of_the_first_refused_entry(
    bus: tuple[Any, Stubber],
) -> None:
    """Twelve records of one event each, one PutEvents call for the first ten: the bus
    refuses the eighth entry, so records 8 to 12 are retried (12 never reached the bus),
    though the ninth and tenth entries were taken."""
    client, stubber = bus
    events = _events(12)
    records = [
        StreamRecord("INSERT", str(n), {"pk": "TABLE#t1", "sk": f"S#{n}", **outbox([e])})
        for n, e in enumerate(events, start=1)
    ]
    answers = [{"EventId": f"e{i}"} for i in range(10)]
    answers[7] = {"ErrorCode": "ThrottlingException", "ErrorMessage": "slow down"}
    stubber.add_response(
        "put_events",
        {"FailedEntryCount": 1, "Entries": answers},
        {"Entries": _entries(events[:10])},
    )
    relay = RelayService(EventBridgePublisher(client, "bus"), RecordingTelemetry())
    assert relay.relay(records) == ["8", "9", "10", "11", "12"]


class _At:
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


NOW = 1_800_000_000.0


def _body(at: float) -> str:
    """The timer's message: the table, its turn's key, and when it is due (``timer_at``)."""
    return json.dumps({"table_id": "t1", "turn_started": 7, "at": at})


def _timers(sqs: Any, scheduler: Any) -> DeadlineTurnTimers:
    return DeadlineTurnTimers(
        sqs,
        "https://q/1/timers",
        scheduler=scheduler,
        group="group",
        queue_arn="arn:queue",
        role_arn="arn:role",
        dead_letter_arn="arn:dead-letters",
        clock=_At(NOW),
    )


@pytest.mark.parametrize(("seconds", "delay"), [(60.0, 60), (44.2, 45), (900.0, 900), (-3.0, 0)])
def test_a_near_deadline_is_a_message_delayed_to_the_second(seconds: float, delay: int) -> None:
    """SQS delays to the second (at most 900 s): the timer never arrives before the deadline."""
    sqs, scheduler = _client("sqs"), _client("scheduler")
    with Stubber(sqs) as stubbed, Stubber(scheduler) as no_schedule:
        stubbed.add_response(
            "send_message",
            {"MessageId": "m"},
            {
                "QueueUrl": "https://q/1/timers",
                "MessageBody": _body(NOW + seconds),
                "DelaySeconds": delay,
            },
        )
        _timers(sqs, scheduler).schedule("t1", 7, NOW + seconds)
        stubbed.assert_no_pending_responses()
        no_schedule.assert_no_pending_responses()


def test_a_far_deadline_is_a_schedule_a_minute_early_to_the_timer_queue() -> None:
    """Scheduler fires within the minute of its time: set a minute early, it is always early."""
    sqs, scheduler = _client("sqs"), _client("scheduler")
    with Stubber(scheduler) as stubber:
        stubber.add_response(
            "create_schedule",
            {"ScheduleArn": "arn:aws:scheduler:eu-west-1:1:schedule/g/turn-t1-7"},
            {
                "Name": "turn-t1-7",
                "GroupName": "group",
                # NOW + 3600 s is 2027-01-15T09:00:00; a minute before.
                "ScheduleExpression": "at(2027-01-15T08:59:00)",
                "FlexibleTimeWindow": {"Mode": "OFF"},
                "ActionAfterCompletion": "DELETE",
                "Target": {
                    "Arn": "arn:queue",
                    "RoleArn": "arn:role",
                    "Input": _body(NOW + 3600),
                    # Undeliverable, it is kept there (and alarmed on), not dropped.
                    "DeadLetterConfig": {"Arn": "arn:dead-letters"},
                },
            },
        )
        _timers(sqs, scheduler).schedule("t1", 7, NOW + 3600)
        stubber.assert_no_pending_responses()


def test_scheduling_the_same_turn_twice_is_not_an_error() -> None:
    sqs, client = _client("sqs"), _client("scheduler")
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "create_schedule", service_error_code="ConflictException", http_status_code=409
        )
        _timers(sqs, client).schedule("t1", 7, NOW + 3600)
        stubber.add_client_error(
            "create_schedule", service_error_code="ValidationException", http_status_code=400
        )
        with pytest.raises(ClientError):
            _timers(sqs, client).schedule("t1", 7, NOW + 3600)
