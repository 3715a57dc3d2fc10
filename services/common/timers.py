"""TABLE-2: one pending timer per table, handed on from turn to turn.

A person's turn mostly ends long before its deadline. Arming a timer per turn left
one delayed message per turn in the queue, each fired later, received, billed and
ignored. So the table records when its pending timer is due (``timer_at``) and a
turn (or intermission) arms a timer only if none is coming by its deadline
(``timer_covers``); a timer that fires before the current deadline arms one for it
and records it: the chain is handed on until a deadline passes.

Why a running turn always has a timer coming (the one outcome that must never
happen is a turn nobody plays):

* A write that begins a turn arms before it records (``before_write``): the timer is
  sent, then the write that names it is made. A crash between them leaves an extra
  timer (it fires, hands on or is ignored), never a recorded timer that was not sent.
  A write that loses its race after arming leaves the same harmless extra.
* A fire hands on with a conditional update of ``timer_at`` first (so of two fires
  that raced, one arms), then sends. One that loses its race reads the table again
  and decides again: the write that came first may be a move within the turn (the
  deadline unchanged, no timer armed) or a turn begun that relied on this very
  timer. A crash between the update and the send leaves the fire's message in the
  queue (it is deleted only once handled), and the record names it
  (``timer_from``): delivered again, it arms once more rather than trust the timer it
  recorded.
* A turn's write relies on a recorded timer only while it is still to come; a later
  versioned write may set ``timer_at`` back to the value it read, which can only
  make a turn arm a timer it did not need.
* ``repair`` (an answer lost, so the write may never have been followed through)
  arms for the current deadline whatever is recorded: a duplicate at worst.

A deadline farther than SQS delays is a Scheduler schedule set a minute early
(``DeadlineTurnTimers``): it fires before the deadline and hands on like any other.
"""

from __future__ import annotations

from services.common.adapters import TurnTimers
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.unit_of_work import Committed, VersionConflict
from shared_engine.turn_clock import TurnClock, timer_covers, timer_due


class TableTimers:
    def __init__(self, store: GameStore, timers: TurnTimers | None) -> None:
        self._store = store
        self._timers = timers

    def before_write(self, old: TableRecord, new: TableRecord, now: float) -> TableRecord:
        """``new``, about to be written over ``old``, with its pending timer: if ``new``
        begins a turn or an intermission that no pending timer reaches in time, one is
        armed now, before the write records it."""
        deadline = new.deadline()
        if (
            self._timers is None
            or deadline is None
            or new.status != "playing"
            or not timer_due(TurnClock(new.turn_started, deadline), new.version)
            or timer_covers(old.timer_at, deadline, now)
        ):
            return new
        self._timers.schedule(new.table_id, new.turn_started, deadline)
        return new.evolve(timer_at=deadline, timer_from=None)

    def fired_early(
        self, table: TableRecord, fired: float | None, now: float, *, raced: bool = False
    ) -> str:
        """A timer due ``fired`` (None: a message older than ``timer_at``) arrived before the
        table's current deadline: hand on, unless another timer is coming in time. What
        happened, as the counter to count: ``timers_raced`` if another write of the table
        came first, when the caller decides again on the table as it is then (``raced``:
        a record naming this fire is then another delivery's, which sends it)."""
        deadline = table.deadline()
        assert deadline is not None and now < deadline, "only a timer that is early hands on"
        mine = not raced and fired is not None and fired in (table.timer_at, table.timer_from)
        if self._timers is None or (not mine and timer_covers(table.timer_at, deadline, now)):
            return "timers_stale"
        outcome = self._store.record_timer(table, deadline, fired)
        if isinstance(outcome, VersionConflict):
            return "timers_raced"
        if not isinstance(outcome, Committed):
            raise RuntimeError(f"the timer was not recorded: {outcome}")
        self._timers.schedule(table.table_id, table.turn_started, deadline)
        return "timers_handed_on"

    def repair(self, table: TableRecord) -> None:
        """Arm for the current deadline whatever is recorded: the write may never have
        been followed through."""
        deadline = table.deadline()
        if self._timers is not None and deadline is not None and table.status == "playing":
            self._timers.schedule(table.table_id, table.turn_started, deadline)
