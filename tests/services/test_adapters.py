"""The AWS adapters against botocore's Stubber: 410s, batches, conflicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from services.common.adapters import ApiGatewayPusher, EventBridgePublisher, SchedulerTurnTimers
from services.common.store import Outbound

pytestmark = pytest.mark.unit


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
    events = [Outbound("ActionApplied", {"n": i}, "canasta.turn") for i in range(23)]
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


def test_a_turn_timer_is_a_one_time_schedule_to_the_timer_queue() -> None:
    client = _client("scheduler")
    with Stubber(client) as stubber:
        stubber.add_response(
            "create_schedule",
            {"ScheduleArn": "arn:aws:scheduler:eu-west-1:1:schedule/g/turn-t1-7"},
            {
                "Name": "turn-t1-7",
                "GroupName": "group",
                "ScheduleExpression": "at(2027-01-15T08:00:00)",
                "FlexibleTimeWindow": {"Mode": "OFF"},
                "ActionAfterCompletion": "DELETE",
                "Target": {
                    "Arn": "arn:queue",
                    "RoleArn": "arn:role",
                    "Input": json.dumps({"table_id": "t1", "turn_started": 7}),
                },
            },
        )
        SchedulerTurnTimers(client, "group", "arn:queue", "arn:role").schedule(
            "t1", 7, 1_800_000_000.0
        )
        stubber.assert_no_pending_responses()


def test_scheduling_the_same_turn_twice_is_not_an_error() -> None:
    client = _client("scheduler")
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "create_schedule", service_error_code="ConflictException", http_status_code=409
        )
        SchedulerTurnTimers(client, "group", "arn:queue", "arn:role").schedule("t1", 7, 0.0)
        stubber.add_client_error(
            "create_schedule", service_error_code="ValidationException", http_status_code=400
        )
        with pytest.raises(ClientError):
            SchedulerTurnTimers(client, "group", "arn:queue", "arn:role").schedule("t1", 7, 0.0)
