"""The turn service's one write: moves committed at the version they were decided on.

A move by its seat and a stretch of auto-played turns are written alike: the new
table conditional on the version read, a log entry per move, the turn's clock after
the moves and the postings that pay for them, in one transaction (``commit_actions``).
The log entry that ends a round carries ``RoundEnded`` for the score service; no other
move publishes anything, since nothing on the bus reads single moves: the audit, the
replay, the console and a ``sync``'s move log read the log entries themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common.adapters import Clock
from services.common.events import RoundEnded
from services.common.ledger import Posting
from services.common.records import LogEntry, Outbound, TableRecord
from services.common.store import GameStore
from services.common.tableviews import public_move
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Committed, Outcome
from shared_engine import Action, RoundState, action_to_wire, pack
from shared_engine.turn_clock import TurnClock, after_moves

Moves = list[tuple[int, Action, RoundState]]
"""Moves in the order played: each seat, its action and the state after it."""


class Applied:
    """The outcome of one committed write: the table after it and what it did.

    ``state`` is ``table.state`` parsed, so that one invocation parses a state once
    (None: no round); ``reply`` the seat whose message made this write and its ``cid``
    (its next view answers it); ``moves`` every move of the write as every seat may
    learn it (``public_move``), for the log; ``gone`` the seats found gone by the pushes
    on the way here (``AfterWrite`` frees them).
    """

    __slots__ = ("gone", "last_action", "moves", "reply", "state", "table")

    def __init__(
        self,
        table: TableRecord,
        last_action: dict[str, Any],
        state: RoundState | None,
        *,
        moves: list[dict[str, Any]] | None = None,
    ) -> None:
        self.table = table
        self.last_action = last_action
        self.state = state
        self.reply: tuple[int, str] | None = None
        self.moves = moves if moves is not None else []
        self.gone: list[tuple[int, str]] = []


class MoveWriter:
    def __init__(
        self,
        store: GameStore,
        clock: Clock,
        telemetry: Telemetry,
        turn_seconds: int,
    ) -> None:
        self._store = store
        self._clock = clock
        self._telemetry = telemetry
        self._turn_seconds = turn_seconds

    def commit(
        self,
        table: TableRecord,
        before: RoundState,
        moves: Moves,
        auto: bool,
        postings: Sequence[Posting] = (),
    ) -> Applied | Outcome:
        """One conditional write for one or more moves, with their log entries and events
        (and the postings that pay for them): what it applied, or why it did not."""
        now = self._clock.now()
        after = moves[-1][2]
        version = table.version + 1
        states = [before, *(state for _, _, state in moves)]
        public = [
            public_move(seat, action, states[i], state, auto)
            for i, (seat, action, state) in enumerate(moves)
        ]
        entries: list[LogEntry] = []
        for (seat, action, state), shown in zip(moves, public, strict=True):
            wire = action_to_wire(action)
            events = _events(table, version, state)
            logged = {**shown, "version": version}
            entries.append(
                LogEntry(table.round, state.ply, seat, wire, auto, now, events, public=logged)
            )
        clock = after_moves(
            TurnClock(table.turn_started, table.turn_deadline),
            before,
            *(state for _, _, state in moves),
            version=version,
            now=now,
            turn_seconds=self._turn_seconds,
        )
        new = table.evolve(
            state=pack(after),
            version=version,
            updated_at=now,
            turn_started=clock.started,
            turn_deadline=clock.deadline,
        )
        outcome = self._store.commit_actions(table, new, entries, postings)
        if not isinstance(outcome, Committed):
            return outcome
        self._telemetry.count("actions_applied", len(moves))
        if after.round_over:
            self._telemetry.count("rounds_ended")
        return Applied(new, public[-1], after, moves=public)


def _events(table: TableRecord, version: int, state: RoundState) -> tuple[Outbound, ...]:
    """What a logged move publishes: the round's end, if the move ended it."""
    if not state.round_over:
        return ()
    ended = RoundEnded(
        table_id=table.table_id,
        round=table.round,
        version=version,
        went_out=state.went_out,
    )
    return (Outbound.of(ended),)
