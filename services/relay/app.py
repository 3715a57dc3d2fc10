"""The transactional outbox: events leave only once the write that made them committed.

Services write events into the items their transactions create (a log
entry, a round, a score). The games table's stream delivers those items here,
and the relay publishes their events to EventBridge. A crash anywhere before
the commit publishes nothing; a crash after it is retried from the stream, and
consumers are idempotent, so every event arrives at least once and acts once.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.common.adapters import Publisher
from services.common.frozen import Frozen
from services.common.records import Outbound, outbox_events
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Item


class StreamRecord(Frozen):
    """One change to an item of the games table, as its stream tells it (the handler reads
    the stream's attribute maps into items)."""

    event: str
    """``INSERT``, ``MODIFY`` or ``REMOVE``."""
    sequence: str
    """Where in the stream: what Lambda retries a batch from."""
    item: Item | None = None
    """The item as the change left it (none once removed)."""


def outbox_of(record: StreamRecord) -> list[Outbound]:
    """The events carried by one stream record (only newly inserted items carry any)."""
    if record.event != "INSERT" or record.item is None:
        return []
    return outbox_events(record.item)


class RelayService:
    def __init__(self, publisher: Publisher, telemetry: Telemetry) -> None:
        self._publisher = publisher
        self._telemetry = telemetry

    def relay(self, records: Sequence[StreamRecord]) -> list[str]:
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
                return [r.sequence for r in records[index:]]
            self._telemetry.count("events_published", len(events))
        return []
