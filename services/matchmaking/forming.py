"""What the queues and the lobbies share when they seat four: the new table itself,
and how long they keep trying and keep their items."""

from __future__ import annotations

from services.common.adapters import Clock
from services.common.events import SeatPlayer, TableFormed
from services.common.records import Outbound, TableRecord
from shared_engine import MatchMode, Variant

FORM_ATTEMPTS = 5
"""Tries of a write another's may beat (a code or a seat taken first, four players moved
on): each lost race reads again, and gives up after that many."""
ENTRY_TTL = 24 * 3600
"""How long a queue entry outlives its ticket, and a lobby its opening, before DynamoDB's
TTL removes it."""


class Tables:
    """The tables matchmaking forms, each carrying the ``TableFormed`` its creation
    publishes: the deal service deals it from there."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def new(
        self,
        table_id: str,
        mode: MatchMode,
        variant: Variant,
        stake: int,
        seats: dict[int, SeatPlayer],
    ) -> tuple[TableRecord, Outbound]:
        table = TableRecord(
            table_id=table_id,
            mode=mode,
            variant=variant,
            stake=stake,
            seats=seats,
            updated_at=self._clock.now(),
        )
        formed = TableFormed(
            table_id=table_id,
            mode=mode,
            variant=table.variant,
            stake=stake,
            seats={str(seat): player for seat, player in seats.items()},  # type: ignore[misc]
        )
        return table, Outbound.of(formed)
