"""The transactional outbox: events leave only once the write that made them committed.

Services write events into the items their transactions create (a log
entry, a round, a score). The games table's stream delivers those items here,
and the relay publishes their events to EventBridge. A crash anywhere before
the commit publishes nothing; a crash after it is retried from the stream, and
consumers are idempotent, so every event arrives at least once and acts once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common.adapters import Publisher
from services.common.records import Outbound, outbox_events
from services.common.telemetry import Telemetry
from services.common.unit_of_work import from_item


def outbox_of(record: dict[str, Any]) -> list[Outbound]:
    """The events carried by one stream record (only newly inserted items carry any)."""
    if record.get("eventName") != "INSERT":
        return []
    return outbox_events(from_item(record.get("dynamodb", {}).get("NewImage", {})))


class RelayService:
    def __init__(self, publisher: Publisher, telemetry: Telemetry) -> None:
        self._publisher = publisher
        self._telemetry = telemetry

    def relay(self, records: Sequence[dict[str, Any]]) -> list[str]:
        """Publish each record's events in order; returns the sequence numbers that failed.

        Stops at the first failure so that later records are retried after it,
        keeping one table's events in order.
        """
        for index, record in enumerate(records):
            events = outbox_of(record)
            if not events:
                continue
            try:
                self._publisher.publish(events)
            except Exception:
                self._telemetry.warning("publish failed", records_left=len(records) - index)
                return [r.get("dynamodb", {}).get("SequenceNumber", "") for r in records[index:]]
            self._telemetry.count("events_published", len(events))
        return []
