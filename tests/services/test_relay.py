"""The outbox relay: committed inserts carry events, in order, retried from the first failure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.common.dynamo_storage import to_item
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
    events = [_event("RoundStarted", 1), _event("RoundEnded", 2)]
    assert [e.detail_type for e in outbox_of(_record("1", "INSERT", events))] == [
        "RoundStarted",
        "RoundEnded",
    ]
    assert outbox_of(_record("2", "MODIFY", events)) == []
    assert outbox_of(_record("3", "REMOVE", events)) == []
    assert outbox_of(_record("4", "INSERT", None, sk="TABLE")) == []
    assert outbox_of(_record("5", "INSERT", [])) == []
    assert outbox_of(StreamRecord("REMOVE", "6")) == []


def test_events_are_published_in_stream_order() -> None:
    publisher = RecordingPublisher()
    relay = RelayService(publisher, RecordingTelemetry())
    records = [
        _record("1", events=[_event("RoundStarted", 1)]),
        _record("2", "MODIFY", events=[_event("RoundStarted", 99)]),
        _record("3", sk="TABLE"),
        _record("4", events=[_event("RoundStarted", 2), _event("RoundEnded", 3)]),
        _record("5", events=[_event("RoundScored", 4)]),
    ]
    assert relay.relay(records) == []
    assert [(e.detail_type, e.detail["n"]) for e in publisher.published] == [
        ("RoundStarted", 1),
        ("RoundStarted", 2),
        ("RoundEnded", 3),
        ("RoundScored", 4),
    ]
    assert all(e.source == "canasta.turn" for e in publisher.published)


def test_a_failure_stops_the_batch_and_reports_the_rest_from_that_record() -> None:
    # Call 0 publishes record 1, call 1 (record 3) fails.
    publisher = RecordingPublisher(fail_calls=[1])
    telemetry = RecordingTelemetry()
    relay = RelayService(publisher, telemetry)
    records = [
        _record("1", events=[_event("RoundStarted", 1)]),
        _record("2", "MODIFY"),
        _record("3", events=[_event("RoundStarted", 2)]),
        _record("4", events=[_event("RoundStarted", 3)]),
    ]
    assert relay.relay(records) == ["3", "4"]
    assert [e.detail["n"] for e in publisher.published] == [1]
    assert any(level == "warning" for level, _, _ in telemetry.lines)


def test_the_handler_reports_only_the_first_failed_sequence_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lambda retries a stream batch from the lowest reported sequence number."""
    publisher = RecordingPublisher(fail_calls=[0])
    monkeypatch.setattr(
        relay_handler, "service", lambda: RelayService(publisher, RecordingTelemetry())
    )
    records = [
        _record("10", "MODIFY"),
        _record("11", events=[_event("RoundStarted", 1)]),
        _record("12", events=[_event("RoundStarted", 2)]),
    ]
    result = relay_handler.stream({"Records": list(map(_streamed, records))}, _Context())
    assert result == {"batchItemFailures": [{"itemIdentifier": "11"}]}
    ok = relay_handler.stream({"Records": [_streamed(_record("13", "MODIFY"))]}, _Context())
    assert ok == {"batchItemFailures": []}


def test_the_handler_reads_each_record_s_new_image_into_an_item() -> None:
    events = [_event("RoundEnded", 1)]
    records = [_record("1", events=events), StreamRecord("REMOVE", "2")]
    event = relay_handler.StreamEvent.model_validate({"Records": list(map(_streamed, records))})
    assert event.changes() == records


class _Context:
    function_name = "relay"
    memory_limit_in_mb = 256
    aws_request_id = "req-1"
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:relay"
