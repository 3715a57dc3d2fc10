"""The turn service's one write: moves committed at the version they were decided on.

A move by its seat and a stretch of auto-played turns are written alike: the new
table conditional on the version read, the turn's clock after the moves (and the
table's pending timer, armed first if the new turn needs one) and the postings that
pay for them. A move within a turn (a draw, the pile taken, the joker
button, a meld) is kept on the table item (``turn_moves``): one conditional update.
The move that ends the turn logs the whole turn in one create-only ``LOG`` item, in one
transaction with the table (``commit_actions``). The turn that ends a round carries
``RoundEnded`` for the score service; no other turn publishes anything, since nothing on
the bus reads single moves: the audit, the replay, the console and a ``sync``'s move log
read the log items themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common.adapters import Clock
from services.common.events import RoundEnded
from services.common.ledger import Posting
from services.common.records import LogEntry, LoggedTurn, Outbound, TableRecord
from services.common.store import GameStore
from services.common.tableviews import public_move
from services.common.telemetry import Telemetry
from services.common.timers import TableTimers
from services.common.unit_of_work import Committed, Outcome
from shared_engine import Action, RoundState, action_to_wire, pack
from shared_engine.turn_clock import TurnClock, after_moves

Moves = list[tuple[int, Action, RoundState]]
"""Moves in the order played: each seat, its action and the state after it."""


class Applied:
    """The outcome of one committed write (or of a table read a follow-through starts from):
    the table after it and what its seats are still to be shown.

    ``state`` is ``table.state`` parsed, so that one invocation parses a state once
    (None: no round); ``reply`` the seat whose message made this write and that message's
    ``cid`` (its view answers it, at once and alone); ``moves`` every public move
    (``public_move``, with the version its write made) not yet shown to every seat, in
    order: the turn's moves written before, the write's own (at ``table.version``), then
    those of the turns played after it in the same invocation; ``shown`` how many of them
    a seat has been shown already (the mover, answered); ``gone`` the seats found gone by
    the pushes on the way here (``AfterWrite`` frees them).
    """

    __slots__ = ("gone", "last_action", "moves", "reply", "shown", "state", "table")

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
        self.reply: tuple[int, str | None] | None = None
        self.moves = moves if moves is not None else []
        self.shown: dict[int, int] = {}
        self.gone: list[tuple[int, str]] = []

    def own_moves(self) -> list[dict[str, Any]]:
        """The moves this write made (the mover's answer carries them)."""
        return [move for move in self.moves if move["version"] == self.table.version]

    def then(self, nxt: Applied) -> Applied:
        """``nxt``, a write made after this one, carrying what this one's seats were still
        to be shown: its moves come after this one's (the turn's moves written before it,
        which both hold, once)."""
        nxt.moves = [
            *self.moves,
            *(move for move in nxt.moves if move["version"] > self.table.version),
        ]
        nxt.shown = self.shown
        nxt.gone = [*self.gone, *nxt.gone]
        return nxt


class MoveWriter:
    def __init__(
        self,
        store: GameStore,
        clock: Clock,
        telemetry: Telemetry,
        turn_seconds: int,
        timers: TableTimers,
    ) -> None:
        self._store = store
        self._clock = clock
        self._telemetry = telemetry
        self._turn_seconds = turn_seconds
        self._timers = timers

    def commit(
        self,
        table: TableRecord,
        before: RoundState,
        moves: Moves,
        auto: bool,
        postings: Sequence[Posting] = (),
    ) -> Applied | Outcome:
        """One conditional write for one or more moves, with the turns they end logged with
        their events (and the postings that pay for them): what it applied, or why it did
        not."""
        now = self._clock.now()
        after = moves[-1][2]
        version = table.version + 1
        states = [before, *(state for _, _, state in moves)]
        entries = [
            LogEntry(
                table.round,
                state.ply,
                seat,
                action_to_wire(action),
                auto,
                now,
                public={**public_move(seat, action, states[i], state, auto), "version": version},
            )
            for i, (seat, action, state) in enumerate(moves)
        ]
        turns, playing = _turns(table, moves, entries)
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
            turn_moves=playing,
        )
        new = self._timers.before_write(table, new, now)
        outcome = self._store.commit_actions(table, new, turns, postings)
        if not isinstance(outcome, Committed):
            return outcome
        self._telemetry.count("actions_applied", len(moves))
        if after.round_over:
            self._telemetry.count("rounds_ended")
        shown = [move.public for move in (*table.turn_moves, *entries) if move.public]
        return Applied(new, shown[-1], after, moves=shown)


def _turns(
    table: TableRecord, moves: Moves, entries: Sequence[LogEntry]
) -> tuple[list[LoggedTurn], tuple[LogEntry, ...]]:
    """The turns the moves end, each logged whole (the table's moves of the turn before
    them included), and the moves of the turn still being played."""
    turns: list[LoggedTurn] = []
    playing = list(table.turn_moves)
    for (seat, _, state), entry in zip(moves, entries, strict=True):
        playing.append(entry)
        if state.round_over or state.turn != seat:
            turns.append(LoggedTurn(table.round, tuple(playing), _events(table, playing, state)))
            playing = []
    return turns, tuple(playing)


def _events(
    table: TableRecord, moves: Sequence[LogEntry], ended: RoundState
) -> tuple[Outbound, ...]:
    """What a logged turn publishes: the round's end, if its last move ended the round."""
    if not ended.round_over:
        return ()
    ended_at = RoundEnded(
        table_id=table.table_id,
        round=table.round,
        version=_written_at(moves[-1]),
        went_out=ended.went_out,
    )
    return (Outbound.of(ended_at),)


def _written_at(move: LogEntry) -> int:
    """The table version the move's write made (its public form says it)."""
    assert move.public is not None, "the turn service logs every move with its public form"
    return int(move.public["version"])
