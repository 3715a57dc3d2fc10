"""Between two rounds of a match: the players read the round's result, then go on.

The score service leaves the table at the round's end with ``intermission_until``
set (and its timer armed) when another round follows and a person is connected.
The next round is dealt (``Dealer``) by whichever comes first: the last connected
player's ``continue``, a presence change that leaves nobody to wait for (the
seat of a player who left is never waited for, TABLE-2), or the timer. Until then
no turn runs and no turn timer: the result stays on every screen. A ``continue``
for another round, or sent twice, writes nothing and is answered with the view.
"""

from __future__ import annotations

from services.common.adapters import Clock
from services.common.afterwrite import AfterWrite
from services.common.dealing import Dealer
from services.common.protocol import ContinueMatch
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher, view_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Committed, VersionConflict
from shared_engine import unpack

RETRIES = 3


def waiting(table: TableRecord) -> bool:
    """Whether the table is between two rounds (the intermission not yet ended by a deal)."""
    return table.status == "playing" and table.intermission_until is not None


class Intermissions:
    def __init__(
        self,
        *,
        store: GameStore,
        dealer: Dealer,
        after_write: AfterWrite,
        views: ViewPusher,
        clock: Clock,
        telemetry: Telemetry,
    ) -> None:
        self._store = store
        self._dealer = dealer
        self._after_write = after_write
        self._views = views
        self._clock = clock
        self._telemetry = telemetry

    def continue_match(
        self, table: TableRecord, seat: int, connection_id: str, message: ContinueMatch
    ) -> None:
        """The seat's player has read the round's result: marked, and the next round dealt
        if nobody else is awaited. The sender always hears back: the view it answers."""
        for _ in range(RETRIES):
            if not waiting(table) or table.round != message.round or seat in table.continued:
                self._answer(table, seat, connection_id, message.cid)
                return
            new = table.evolve(
                continued=table.continued | {seat},
                version=table.version + 1,
                updated_at=self._clock.now(),
            )
            outcome = self._store.mark_continued(table, new)
            if isinstance(outcome, Committed):
                self._telemetry.count("rounds_continued")
                if not self.go_on(new):
                    self._after_write(new, reply=(seat, message.cid) if message.cid else None)
                return
            if not isinstance(outcome, VersionConflict):
                raise RuntimeError(f"continue was not written: {outcome}")
            fresh = self._store.get_table(table.table_id)
            if fresh is None:
                return
            table = fresh
        raise RuntimeError("continue: the table moved on during every attempt")

    def go_on(self, table: TableRecord) -> bool:
        """Deal the next round if the intermission is over; True if it was (by this call
        or another): then every seat has been shown the new round, or will be."""
        if not table.intermission_over(self._clock.now()):
            return False
        self._dealer.deal(table.table_id, table.round + 1)
        return True

    def expire(self, table: TableRecord, at: float | None, *, raced: bool = False) -> str:
        """The table's timer (due ``at``) fired: deal, or, early, hand it on to the rest
        (``TableTimers.fired_early``). What happened, as the counter counted."""
        until = table.intermission_until
        now = self._clock.now()
        outcome = "intermissions_expired"
        if until is not None and now < until:
            outcome = self._after_write.timers.fired_early(table, at, now, raced=raced)
        self._telemetry.count(outcome)
        if outcome == "intermissions_expired":
            self.go_on(table)
        return outcome

    def _answer(self, table: TableRecord, seat: int, connection_id: str, cid: str | None) -> None:
        if table.state is None:
            return
        view = view_message(table, unpack(table.state), seat, cid=cid)
        self._views.send(connection_id, view.model_dump(mode="json"))
