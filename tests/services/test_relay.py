"""The outbox relay: committed inserts carry events, a batch's together and in order,
retried from the record of the first event the bus did not take."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import pytest

from services.common.dynamo_storage import to_item
from services.common.records import Outbound
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Item
from services.relay import handler as relay_handler
from services.relay.app import RelayService, StreamRecord, outbox_of
from tests.services.fakes import RecordingPublisher

pytestmark = pytest.mark.unit


def _record(
    seq: str, name: str = "INSERT", events: list[dict[str, Any]] | None = None, sk: str = "LOG"
) -> StreamRecord:
    item: Item = {"pk": "TABLE#t1", "sk": sk}
    if events is not None:
        item["outbox"] = json.dumps(events)
    return StreamRecord(name, seq, item)


def _streamed(record: StreamRecord) -> dict[str, Any]:
    """The record as the games table's stream delivers it to the handler."""
    change: dict[str, Any] = {"SequenceNumber": record.sequence}
    if record.item is not None:
        change["NewImage"] = to_item(record.item)
    return {"eventName": record.event, "eventSource": "aws:dynamodb", "dynamodb": change}


def _event(detail_type: str, n: int) -> dict[str, Any]:
    return {"detail-type": detail_type, "source": "canasta.turn", "detail": {"n": n}}


def test_only_inserted_items_with_an_outbox_carry_events() -> None:
    events = [_event("RoundEnded", 1), _event("RoundScored", 2)]
    assert [e.detail_type for e in outbox_of(_record("1", "INSERT", events))] == [
        "RoundEnded",
        "RoundScored",
    ]
    assert outbox_of(_record("2", "MODIFY", events)) == []
    assert outbox_of(_record("3", "REMOVE", events)) == []
    assert outbox_of(_record("4", "INSERT", None, sk="TABLE")) == []
    assert outbox_of(_record("5", "INSERT", [])) == []
    assert outbox_of(StreamRecord("REMOVE", "6")) == []


def test_a_batch_s_events_leave_together_in_stream_order() -> None:
    """Not a PutEvents call a record: the publisher gets the batch's events at once and
    packs them into as few calls as PutEvents takes."""
    publisher = RecordingPublisher()
    telemetry = RecordingTelemetry()
    relay = RelayService(publisher, telemetry)
    records = [
        _record("1", events=[_event("RoundStarted", 1)]),
        _record("2", "MODIFY", events=[_event("RoundStarted", 99)]),
        _record("3", sk="TABLE"),
        _record("4", events=[_event("RoundStarted", 2), _event("RoundEnded", 3)]),
        _record("5", events=[_event("RoundScored", 4)]),
    ]
    assert relay.relay(records) == []
    assert publisher.calls == [4]
    assert [(e.detail_type, e.detail["n"]) for e in publisher.published] == [
        ("RoundStarted", 1),
        ("RoundStarted", 2),
        ("RoundEnded", 3),
        ("RoundScored", 4),
    ]
    assert all(e.source == "canasta.turn" for e in publisher.published)
    assert telemetry.metrics["events_published"] == 4


def test_a_batch_without_events_publishes_nothing() -> None:
    publisher = RecordingPublisher()
    records = [_record("1", "MODIFY"), _record("2", sk="TABLE"), StreamRecord("REMOVE", "3")]
    assert RelayService(publisher, RecordingTelemetry()).relay(records) == []
    assert publisher.calls == []


FAILING = [
    _record("1", events=[_event("RoundStarted", 1)]),
    _record("2", "MODIFY"),
    _record("3", events=[_event("RoundEnded", 2), _event("RoundScored", 3)]),
    _record("4", sk="TABLE"),
    _record("5", events=[_event("RoundScored", 4)]),
]


@pytest.mark.parametrize(
    ("takes", "failed"),
    [
        (0, ["1", "2", "3", "4", "5"]),
        (1, ["3", "4", "5"]),
        (2, ["3", "4", "5"]),
        (3, ["5"]),
    ],
    ids=["the first refused", "a record's first", "a record's second", "the last"],
)
def test_a_refused_event_fails_its_record_and_every_record_after_it(
    takes: int, failed: list[str]
) -> None:
    """The stream retries from the first failed record: that record's events again (its
    earlier ones too: consumers are idempotent) and every later record's, in order."""
    publisher = RecordingPublisher(takes=takes)
    telemetry = RecordingTelemetry()
    assert RelayService(publisher, telemetry).relay(FAILING) == failed
    assert [e.detail["n"] for e in publisher.published] == list(range(1, takes + 1))
    (warning,) = [fields for level, _, fields in telemetry.lines if level == "warning"]
    assert warning["records_left"] == len(failed)
    assert warning["events_published"] == takes


def test_a_publisher_that_fails_unsaid_fails_the_batch_from_its_first_event() -> None:
    """Any other error says nothing of what got through: retry every record with events."""

    class Broken(RecordingPublisher):
        def publish(self, events: Sequence[Outbound]) -> None:
            raise ConnectionError("no route to the bus")

    records = [_record("1", "MODIFY"), *FAILING]
    assert RelayService(Broken(), RecordingTelemetry()).relay(records) == ["1", "2", "3", "4", "5"]


def test_the_handler_reports_only_the_first_failed_sequence_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lambda retries a stream batch from the lowest reported sequence number."""
    publisher = RecordingPublisher(takes=1)
    monkeypatch.setattr(
        relay_handler, "service", lambda: RelayService(publisher, RecordingTelemetry())
    )
    records = [
        _record("10", "MODIFY"),
        _record("11", events=[_event("RoundStarted", 1)]),
        _record("12", events=[_event("RoundStarted", 2)]),
    ]
    result = relay_handler.stream({"Records": list(map(_streamed, records))}, _Context())
    assert result == {"batchItemFailures": [{"itemIdentifier": "12"}]}
    ok = relay_handler.stream({"Records": [_streamed(_record("13", "MODIFY"))]}, _Context())
    assert ok == {"batchItemFailures": []}


def test_the_handler_reads_each_record_s_new_image_into_an_item() -> None:
    events = [_event("RoundEnded", 1)]
    records = [_record("1", events=events), StreamRecord("REMOVE", "2")]
    event = relay_handler.StreamEvent.model_validate({"Records": list(map(_streamed, records))})
    assert event.changes() == records


def test_a_binary_attribute_arrives_in_base64_and_is_read_as_its_bytes() -> None:
    """Every change of a TABLE item reaches the handler, its packed state a binary value
    that the stream's JSON carries in base64: it reads as an item like any other."""
    raw = bytes(range(256))
    image = {
        **to_item({"pk": "TABLE#t1", "sk": "TABLE"}),
        "state": {"B": base64.b64encode(raw).decode()},
    }
    change = {"SequenceNumber": "1", "NewImage": image}
    event = relay_handler.StreamEvent.model_validate(
        {"Records": [{"eventName": "MODIFY", "eventSource": "aws:dynamodb", "dynamodb": change}]}
    )
    assert event.changes() == [
        StreamRecord("MODIFY", "1", {"pk": "TABLE#t1", "sk": "TABLE", "state": raw})
    ]


class _Context:
    function_name = "relay"
    memory_limit_in_mb = 256
    aws_request_id = "req-1"
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:relay"
