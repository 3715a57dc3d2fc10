"""What follows every committed write of a table, whoever made it.

A move, an auto-played or bot turn, a deal, a scored round and the repair of
a move whose answer was lost all end the same way: every connected seat's own
view, and the seats found gone freed; after a repair, the turn's timer (or the
intermission's: the timer that deals the next round). A write that begins a turn
armed its timer, if it needed one, before it was made (``TableTimers``). One
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
from services.common.timers import TableTimers
from shared_engine import RoundState, unpack


def running(table: TableRecord, state: RoundState | None) -> bool:
    """Whether a round is being played at the table (``state``: its parsed state)."""
    return table.status == "playing" and state is not None and not state.round_over


class AfterWrite:
    def __init__(self, store: GameStore, views: ViewPusher, timers: TurnTimers | None) -> None:
        self._store = store
        self._views = views
        self.timers = TableTimers(store, timers)
        """The table's pending timer, for the writes that begin a turn."""

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
        followed through, so the current deadline's timer is set whatever the table
        records (a schedule that exists answers "already exists"). ``moves``: the moves
        the seats are still to be shown, of which each seat in ``shown`` has seen the
        first so many (``ViewPusher.push_views``). ``gone``: seats found gone on the way."""
        if state is None and table.state is not None:
            state = unpack(table.state)
        if repair:
            self.timers.repair(table)
        pushed = self._views.push_views(table, last_action, state, reply, moves, shown=shown)
        self.free(table, [*gone, *pushed])

    def free(self, table: TableRecord, gone: Gone) -> None:
        """The seats whose connection was gone are absent now, unless a new one took them."""
        for seat, connection in gone:
            self._store.set_connection(table.table_id, seat, None, replacing=connection)
