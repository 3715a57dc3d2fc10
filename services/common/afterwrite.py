"""What follows every committed write of a table, whoever made it.

A move, an auto-played or bot turn, a deal, a scored round and the repair of
a move whose answer was lost all end the same way: the turn's timer if a turn
began (or the intermission's, if one began: the timer that deals the next round),
every connected seat's own view, and the seats found gone freed. One
step, so that the three can never again follow a write with different
conditions; the pushes themselves write nothing (``ViewPusher``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.common.adapters import TurnTimers
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.tableviews import Gone, ViewPusher
from shared_engine import RoundState, unpack
from shared_engine.turn_clock import TurnClock, timer_due


def running(table: TableRecord, state: RoundState | None) -> bool:
    """Whether a round is being played at the table (``state``: its parsed state)."""
    return table.status == "playing" and state is not None and not state.round_over


class AfterWrite:
    def __init__(self, store: GameStore, views: ViewPusher, timers: TurnTimers | None) -> None:
        self._store = store
        self._views = views
        self._timers = timers

    def __call__(
        self,
        table: TableRecord,
        state: RoundState | None = None,
        *,
        last_action: dict[str, Any] | None = None,
        reply: tuple[int, str | None] | None = None,
        moves: Sequence[dict[str, Any]] = (),
        shown: Mapping[int, int] | None = None,
        gone: Sequence[tuple[int, str]] = (),
        repair: bool = False,
    ) -> None:
        """Follow ``table``'s write through. ``repair``: the write may never have been
        followed through, so its turn's timer is set even if the turn began earlier (a
        schedule that exists answers "already exists"); otherwise a turn's timer is set
        when the turn begins (its first write: ``turn_started == version``), and later
        moves of the same turn keep it. ``moves``: the moves the seats are still to be
        shown, of which each seat in ``shown`` has seen the first so many
        (``ViewPusher.push_views``). ``gone``: seats found gone on the way."""
        if state is None and table.state is not None:
            state = unpack(table.state)
        deadline = table.turn_deadline if running(table, state) else table.intermission_until
        if (
            self._timers is not None
            and deadline is not None
            and table.status == "playing"
            and (repair or timer_due(TurnClock(table.turn_started, deadline), table.version))
        ):
            self._timers.schedule(table.table_id, table.turn_started, deadline)
        pushed = self._views.push_views(table, last_action, state, reply, moves, shown=shown)
        self.free(table, [*gone, *pushed])

    def free(self, table: TableRecord, gone: Gone) -> None:
        """The seats whose connection was gone are absent now, unless a new one took them."""
        for seat, connection in gone:
            self._store.set_connection(table.table_id, seat, None, replacing=connection)
