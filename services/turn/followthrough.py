"""What follows a committed write of the turn service, now or after a lost answer.

A person's move is answered at once, to that seat alone. A move within a turn
ends there: the other seats are shown the turn when it ends. A turn's end (a
discard, a going out, the round's end; an expired or auto-played turn) goes on
the same way as a presence change: the turns that then fall to bots and absent
seats are played (TABLE-2), and ``AfterWrite`` sets the turn's timer and shows
every seat its view once, with every move it has not been shown. A write whose
invocation ended before that ran is followed through late, once, when its move
comes again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from services.common.afterwrite import AfterWrite
from services.common.records import LoggedTurn, TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
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
        views: ViewPusher,
        telemetry: Telemetry,
    ) -> None:
        self._store = store
        self._after_write = after_write
        self._autoplay = autoplay
        self._views = views
        self._telemetry = telemetry
        self._completed: OrderedDict[tuple[str, int], None] = OrderedDict()
        """(table, version) whose write this container followed through: nothing to repair."""

    def __call__(self, applied: Applied) -> None:
        """Follow ``applied`` through, and remember it: a replay of its move then finds
        nothing to repair."""
        if applied.reply is not None:
            self._answer(applied)
            if applied.table.turn_moves:
                # The turn goes on: its other seats see it when it ends, all of it at once.
                self._after_write.free(applied.table, applied.gone)
                self._remember(applied.table)
                return
        applied = self._autoplay.advance_absent(applied)
        self._after_write(
            applied.table,
            applied.state,
            last_action=applied.last_action or None,
            moves=applied.moves,
            shown=applied.shown,
            gone=applied.gone,
        )
        self._remember(applied.table)

    def _answer(self, applied: Applied) -> None:
        """The mover's view of its move, before anything else is done or shown: a move
        within a turn is answered to its seat alone."""
        assert applied.reply is not None
        seat, _ = applied.reply
        applied.gone += self._views.push_views(
            applied.table,
            applied.last_action,
            applied.state,
            applied.reply,
            applied.own_moves(),
            seats=(seat,),
        )
        applied.shown[seat] = len(applied.moves)

    def _remember(self, table: TableRecord) -> None:
        self._completed[(table.table_id, table.version)] = None
        while len(self._completed) > COMPLETED_KEPT:
            self._completed.popitem(last=False)

    def repair(
        self, table: TableRecord, state: RoundState, seat: int, moves: Sequence[dict[str, Any]]
    ) -> None:
        """Follow the table's last write through if it is ``moves`` by ``seat``, re-sent.

        A client re-sends a message it got no answer to. If the table's last
        logged turn ends with that message's very moves (a meld and a discard
        sent as one turn: all of them) by that seat, it had been written
        before the failure, and what follows a write (auto-play of absent seats,
        the turn's timer, everyone's views with the turn's moves) may never have
        run: it runs now, once per turn (the log item is marked). A move within a
        turn has nothing to follow it but its answer, which ``stale_version``
        carries. A container that followed the write through itself knows there
        is nothing to repair. So a client re-sending its last move in a loop hears
        ``stale_version`` alone: it cannot make the server push frames to the
        other seats.
        """
        if (table.table_id, table.version) in self._completed:
            return
        logged = self._lost_answer(table, state, seat, moves)
        if logged is None or not self._store.moves.claim_repair(
            table.table_id, table.round, state.ply
        ):
            return
        self._telemetry.count("answers_repaired")
        shown = [m.public for m in logged.moves if m.public]
        applied = Applied(table, shown[-1] if shown else {}, state, moves=shown)
        applied = self._autoplay.advance_absent(applied)
        self._after_write(
            applied.table,
            applied.state,
            last_action=applied.last_action or None,
            moves=applied.moves,
            gone=applied.gone,
            repair=True,
        )

    def _lost_answer(
        self, table: TableRecord, state: RoundState, seat: int, moves: Sequence[dict[str, Any]]
    ) -> LoggedTurn | None:
        """The table's last logged turn, if it ends with ``moves`` by ``seat`` and was not
        repaired before; None mid-turn (no turn is logged at the state's last move yet)."""
        logged = self._store.moves.turn(table.table_id, table.round, state.ply)
        if logged is None or logged.repaired or len(logged.moves) < len(moves):
            return None
        tail = logged.moves[len(logged.moves) - len(moves) :]
        same = all(m.seat == seat and m.action == move for m, move in zip(tail, moves, strict=True))
        return logged if same else None
