"""What follows a committed write of the turn service, now or after a lost answer.

Every move, expired turn and presence change ends the same way: the turns that
then fall to bots and absent seats are played (TABLE-2), and ``AfterWrite``
sets the turn's timer and shows every seat its view. A write whose invocation
ended before that ran is followed through late, once, when its move comes again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from services.common.afterwrite import AfterWrite
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.turn.autoplay import AutoPlay
from services.turn.writes import Applied
from shared_engine import RoundState

COMPLETED_KEPT = 4096
"""Table versions a warm container remembers having followed through (a few hundred KB)."""


class FollowThrough:
    def __init__(
        self,
        store: GameStore,
        after_write: AfterWrite,
        autoplay: AutoPlay,
        telemetry: Telemetry,
    ) -> None:
        self._store = store
        self._after_write = after_write
        self._autoplay = autoplay
        self._telemetry = telemetry
        self._completed: OrderedDict[tuple[str, int], None] = OrderedDict()
        """(table, version) whose write this container followed through: nothing to repair."""

    def __call__(self, applied: Applied) -> None:
        """Follow ``applied`` through, and remember it: a replay of its move then finds
        nothing to repair."""
        applied = self._autoplay.advance_absent(applied)
        table = applied.table
        self._after_write(
            table,
            applied.state,
            last_action=applied.last_action or None,
            reply=applied.reply,
            moves=applied.moves,
            gone=applied.gone,
        )
        self._completed[(table.table_id, table.version)] = None
        while len(self._completed) > COMPLETED_KEPT:
            self._completed.popitem(last=False)

    def repair(
        self, table: TableRecord, state: RoundState, seat: int, move: dict[str, Any]
    ) -> None:
        """Follow the table's last write through if it is ``move`` by ``seat``, re-sent.

        A client re-sends a move it got no answer to. If the table's last
        logged action is that very move by that seat, it had been written
        before the failure, and what follows a write (auto-play of absent seats,
        the turn's timer, everyone's views) may never have run: it runs now,
        once per move (the log item is marked). A container that followed the
        write through itself knows there is nothing to repair. So a client
        re-sending its last move in a loop hears ``stale_version`` alone: it
        cannot make the server push frames to the other seats.
        """
        if (table.table_id, table.version) in self._completed or not self._lost_answer(
            table, state, seat, move
        ):
            return
        if not self._store.moves.claim_repair(table.table_id, table.round, state.ply):
            return
        self._telemetry.count("answers_repaired")
        applied = self._autoplay.advance_absent(Applied(table, {}, state))
        self._after_write(
            applied.table,
            applied.state,
            last_action=applied.last_action or None,
            gone=applied.gone,
            repair=True,
        )

    def _lost_answer(
        self, table: TableRecord, state: RoundState, seat: int, move: dict[str, Any]
    ) -> bool:
        logged = self._store.moves.entry(table.table_id, table.round, state.ply)
        return (
            logged is not None
            and not logged.repaired
            and logged.seat == seat
            and logged.action == move
        )
