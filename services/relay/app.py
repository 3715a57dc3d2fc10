"""The transactional outbox: events leave only once the write that made them committed.

Services write events into the items their transactions create (a log
entry, a round, a score). The games table's stream delivers those items here,
and the relay publishes their events to EventBridge. A crash anywhere before
the commit publishes nothing; a crash after it is retried from the stream, and
consumers are idempotent, so every event arrives at least once and acts once.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.common.adapters import Publisher, Unpublished
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
        """Publish the batch's events in stream order; returns the sequence numbers to retry.

        The events of every record go out together, so the publisher packs them into as
        few PutEvents calls as its limits allow, not one call a record. At the first
        event the bus did not take, its record and every record after it are returned
        as failed: the stream retries the batch from there, keeping one table's events
        in order. The events that record had already got through (and any later entry of
        the same call the bus took) are then published again; every consumer is
        idempotent, so the second copy changes nothing.
        """
        carried = [(i, event) for i, record in enumerate(records) for event in outbox_of(record)]
        if not carried:
            return []
        try:
            self._publisher.publish([event for _, event in carried])
        except Exception as exc:
            published = exc.published if isinstance(exc, Unpublished) else 0
            first = carried[published][0]
            self._telemetry.warning(
                "publish failed",
                records_left=len(records) - first,
                events_published=published,
                error=str(exc),
            )
            self._telemetry.count("events_published", published)
            return [r.sequence for r in records[first:]]
        self._telemetry.count("events_published", len(carried))
        return []
