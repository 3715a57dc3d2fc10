"""The AWS adapters against botocore's Stubber: 410s, batches, conflicts.

They prove the adapters' requests and their reading of the answers, so they stand on
botocore, outside the use-case tier (whose fakes stand in for these adapters)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from services.common.adapters import ApiGatewayPusher, DeadlineTurnTimers, EventBridgePublisher
from services.common.records import Outbound

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


def test_events_are_published_in_batches_of_ten() -> None:
    client = _client("events")
    events = [Outbound("RoundEnded", {"n": i}, "canasta.turn") for i in range(23)]
    with Stubber(client) as stubber:
        for size in (10, 10, 3):
            stubber.add_response(
                "put_events", {"FailedEntryCount": 0, "Entries": [{}] * size}, {"Entries": ANY}
            )
        EventBridgePublisher(client, "bus").publish(events)
        stubber.assert_no_pending_responses()


def test_a_refused_entry_raises_so_that_the_caller_retries() -> None:
    client = _client("events")
    with Stubber(client) as stubber:
        stubber.add_response(
            "put_events",
            {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure"}]},
            {
                "Entries": [
                    {
                        "EventBusName": "bus",
                        "Source": "canasta.turn",
                        "DetailType": "RoundEnded",
                        "Detail": json.dumps({"n": 1}, separators=(",", ":")),
                    }
                ]
            },
        )
        with pytest.raises(RuntimeError):
            EventBridgePublisher(client, "bus").publish(
                [Outbound("RoundEnded", {"n": 1}, "canasta.turn")]
            )


class _At:
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


NOW = 1_800_000_000.0
BODY = json.dumps({"table_id": "t1", "turn_started": 7})


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
            {"QueueUrl": "https://q/1/timers", "MessageBody": BODY, "DelaySeconds": delay},
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
                    "Input": BODY,
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
