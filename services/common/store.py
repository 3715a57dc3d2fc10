"""Tables, rounds, scores and logs: every read and conditional write the game loop makes.

Each write states the condition that makes it safe under retries and races and
what its failure means (``unit_of_work``); why each is safe is written down in
docs/data-model.md. The items themselves are ``records``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common import constants
from services.common.ledger import Ledger, Posting
from services.common.presence import PresenceStore
from services.common.records import (
    ClosedRecord,
    LoggedTurn,
    Outbound,
    RoundRecord,
    ScoreRecord,
    TableHistory,
    TableRecord,
    conn_attribute,
    outbox,
    outbox_events,
    table_key,
)
from services.common.unit_of_work import (
    Absent,
    AlreadyDone,
    Committed,
    Condition,
    ConditionFailed,
    Equals,
    Exists,
    Item,
    Lacks,
    Outcome,
    Put,
    Storage,
    Update,
    VersionConflict,
    Write,
    all_of,
    unless_contended,
)

SCORES = "SCORE#"
"""How the sort keys of a table's scored rounds start (``constants.score_sk``)."""


class GameStore:
    """Tables, rounds, scores and logs in the games table."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    # --- reads ------------------------------------------------------------------

    @property
    def moves(self) -> MoveLog:
        """The tables' logs: a ``LOG`` item per turn, its moves in the order played."""
        return MoveLog(self._storage)

    @property
    def history(self) -> TableArchive:
        """Everything a table's items hold, as records: what an operator and a test read."""
        return TableArchive(self._storage)

    def get_table(self, table_id: str) -> TableRecord | None:
        item = self._storage.get("games", table_key(table_id))
        return TableRecord.from_item(item) if item else None

    def score(self, table_id: str, round_number: int) -> ScoreRecord | None:
        item = self._storage.get("games", table_key(table_id, constants.score_sk(round_number)))
        return ScoreRecord.from_item(item) if item else None

    def scores(self, table_id: str) -> tuple[ScoreRecord, ...]:
        """Every scored round of a table, in round order: the totals the match reached after
        each, which is what its settlement is checked against (strongly consistent, as every
        read of the storage: a score the relay announced is always seen)."""
        items = self._storage.query("games", constants.table_pk(table_id), prefix=SCORES)
        return tuple(map(ScoreRecord.from_item, items))

    # --- writes -----------------------------------------------------------------

    @staticmethod
    def new_table(table: TableRecord, events: Sequence[Outbound] = ()) -> Put:
        """A create-only write of a new table, with the events it publishes."""
        return Put("games", {**table.to_item(), **outbox(events)}, when=Absent())

    def create_table(self, table: TableRecord) -> Outcome:
        """Create-only: forming the same table twice creates nothing (``AlreadyDone``)."""
        return self._storage.commit([self.new_table(table)])

    @staticmethod
    def _table_update(
        old: TableRecord, new: TableRecord, *also: Condition, drop: Sequence[str] = ()
    ) -> Update:
        """The versioned update of the ``TABLE`` item (``also``: further conditions);
        ``drop`` names attributes to remove."""
        removes = [
            *drop,
            *(() if new.turn_deadline is not None else ("turn_deadline",)),
            *(() if new.intermission_until is not None else ("intermission_until",)),
            *(() if new.continued else ("continued",)),
            *(() if new.turn_moves else ("turn_moves",)),
            *(() if new.timer_from is not None else ("timer_from",)),
        ]
        return Update(
            "games",
            old.key,
            set=new.changing(),
            remove=tuple(removes),
            when=all_of(Equals("version", old.version), *also),
            refusal=VersionConflict(),
        )

    def commit_actions(
        self,
        old: TableRecord,
        new: TableRecord,
        turns: Sequence[LoggedTurn] = (),
        postings: Sequence[Posting] = (),
    ) -> Outcome:
        """The new state, conditional on the version read, with the turns it ended logged
        (create-only, each with its events) and ``postings`` (the joker button's debit)
        booked with it. A move within a turn logs nothing yet (its move is kept in
        ``new.turn_moves``): without postings it is one conditional update, no transaction.

        ``VersionConflict`` if the table moved on; ``Short`` or ``AlreadyDone`` if a
        posting's debit is not covered or was booked before.
        """
        writes: list[Write] = [self._table_update(old, new)]
        writes += [
            Put("games", turn.to_item(old.table_id), when=Absent(), refusal=AlreadyDone())
            for turn in turns
        ]
        writes += Ledger.writes(postings, new.updated_at)
        return self._storage.commit(writes)

    def start_round(self, *, old: TableRecord, new: TableRecord, dealt: RoundRecord) -> Outcome:
        """Create round ``new.round`` once: ``AlreadyDone`` for a duplicate deal,
        ``VersionConflict`` if the table moved on.

        The ``TABLE`` item sheds the ``outbox`` it was created with (``[TableFormed]``,
        already relayed from the insert's stream record: this deal is its consumer). Every
        move rewrites the whole item, and those 0.4 KB took it past 2 KB: 2 more write
        units per move.
        """
        return self._storage.commit(
            [
                self._table_update(
                    old,
                    new,
                    Equals("round", new.round - 1),
                    Equals("status", "playing"),
                    drop=("outbox",),
                ),
                Put("games", dealt.to_item(), when=Absent(), refusal=AlreadyDone()),
            ]
        )

    def record_score(
        self,
        old: TableRecord,
        new: TableRecord,
        scored: ScoreRecord,
        leaving: Sequence[str] = (),
    ) -> Outcome:
        """Score round ``old.round`` once: ``AlreadyDone`` for a duplicate,
        ``VersionConflict`` if the table moved on.

        ``leaving``: the players a match's end frees, in the same write, so that the
        ``match_result`` sent after it never meets a seat still held (``LostRace`` if one
        of them is no longer seated here).
        """
        return self._storage.commit(
            [
                self._table_update(old, new),
                Put("games", scored.to_item(), when=Absent(), refusal=AlreadyDone()),
                *(PresenceStore.leave_table(player, old.table_id) for player in leaving),
            ]
        )

    def record_timer(self, old: TableRecord, at: float, fired: float | None) -> Outcome:
        """The table's pending timer is now the one due ``at``, set by the fire of the timer
        due ``fired``: conditional on the table as read (its version and its pending timer),
        so that of two fires that read it only one sets a timer (``VersionConflict``: the
        other did, or the table moved on). The version stays: players see nothing new."""
        pending = Lacks("timer_at") if old.timer_at is None else Equals("timer_at", old.timer_at)
        return self._storage.commit(
            [
                Update(
                    "games",
                    old.key,
                    set={"timer_at": at, **({"timer_from": fired} if fired is not None else {})},
                    remove=() if fired is not None else ("timer_from",),
                    when=all_of(Equals("version", old.version), pending),
                    refusal=VersionConflict(),
                )
            ]
        )

    def mark_continued(self, old: TableRecord, new: TableRecord) -> Outcome:
        """A seat's ``continue`` between two rounds, at the version read."""
        return self._storage.commit([self._table_update(old, new)])

    def close_table(
        self,
        old: TableRecord,
        new: TableRecord,
        closed: ClosedRecord,
        postings: Sequence[Posting] = (),
    ) -> Outcome:
        """End a table from outside its game (an operator's ``close``, or ``void`` with the
        reversal of its ``postings``), at the version read: ``AlreadyDone`` if it was closed
        or its postings booked before, ``VersionConflict`` if it moved on."""
        return self._storage.commit(
            [
                self._table_update(old, new),
                Put("games", closed.to_item(), when=Absent(), refusal=AlreadyDone()),
                *Ledger.writes(postings, closed.at),
            ]
        )

    def set_connection(
        self, table_id: str, seat: int, connection_id: str | None, replacing: str | None = None
    ) -> bool:
        """Mark a seat (dis)connected; with ``replacing``, only if that connection still holds it.

        Not versioned: presence does not change the game, and a turn write sets
        other attributes, so the two never overwrite each other. So a ``VersionConflict``
        is a collision on every try, not "seat taken": it raises (``unless_contended``).
        """
        attr = conn_attribute(seat)
        outcome = unless_contended(
            self._storage.commit(
                [
                    Update(
                        "games",
                        table_key(table_id),
                        set={attr: connection_id} if connection_id is not None else {},
                        remove=(attr,) if connection_id is None else (),
                        when=all_of(
                            Exists(), Equals(attr, replacing) if replacing is not None else None
                        ),
                        refusal=ConditionFailed("seat taken"),
                    )
                ]
            )
        )
        return isinstance(outcome, Committed)


class MoveLog:
    """The logged turns of the tables' rounds: read by a repair and a ``sync``, marked once
    by a repair (the writes that append them are the moves', ``GameStore.commit_actions``)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def turn(self, table_id: str, round_number: int, ply: int) -> LoggedTurn | None:
        """The logged turn whose last move is the round's ``ply``."""
        item = self._storage.get("games", table_key(table_id, constants.log_sk(round_number, ply)))
        return LoggedTurn.from_item(item) if item else None

    def of_round(self, table: TableRecord, last: int) -> list[dict[str, Any]]:
        """The public moves of the table's round so far, oldest first, the ``last`` ones at
        most (``LogEntry.public``, with the version each write made): the logged turns', then
        those of the turn being played (the moves of a turn logged since ``table`` was read
        are not repeated)."""
        items = self._storage.query(
            "games", constants.table_pk(table.table_id), prefix=constants.log_prefix(table.round)
        )
        logged = [move for item in items for move in LoggedTurn.from_item(item).moves]
        since = logged[-1].version if logged else 0
        playing = [move for move in table.turn_moves if move.version > since]
        moves = [move.public for move in [*logged, *playing] if move.public]
        return moves[-last:]

    def claim_repair(self, table_id: str, round_number: int, ply: int) -> bool:
        """Mark a logged turn repaired once: False if a replay of its last move repaired it
        before.

        A write only on the first replay of a move; every later one reads the mark with the
        log item it reads anyway (a MODIFY, which the outbox relay ignores). A collision on
        every try is not "repaired before": it raises (``unless_contended``).
        """
        outcome = unless_contended(
            self._storage.commit(
                [
                    Update(
                        "games",
                        table_key(table_id, constants.log_sk(round_number, ply)),
                        set={"repaired": True},
                        when=all_of(Exists(), Lacks("repaired")),
                        refusal=AlreadyDone(),
                    )
                ]
            )
        )
        return isinstance(outcome, Committed)


class TableArchive:
    """A table's items read whole, never on the game loop's path: which exist, what a new
    table carries and every record a replay needs (``python -m ops``, the tests)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def keys(self, table_id: str, prefix: str = "") -> list[str]:
        """The sort keys of the table's items that start with ``prefix``, in key order: which
        rounds, scores and log entries exist, and that nothing else does."""
        items = self._storage.query("games", constants.table_pk(table_id), prefix=prefix or None)
        return [str(item["sk"]) for item in items]

    def table_outbox(self, table_id: str) -> tuple[Outbound, ...]:
        """The events the ``TABLE`` item was created with (``TableFormed``), until the first
        deal sheds them; a round's, score's or log entry's are its record's ``outbox``."""
        item = self._storage.get("games", table_key(table_id))
        return tuple(outbox_events(item)) if item else ()

    def records(self, table_id: str) -> TableHistory:
        """Every round, logged turn and score of a table, as records, and the moves of the
        turn being played (``python -m ops``: a replay meets the live state mid-turn too)."""
        items = self._storage.query("games", constants.table_pk(table_id))

        def of(prefix: str) -> list[Item]:
            return [i for i in items if str(i["sk"]).startswith(prefix)]

        live = [i for i in items if i["sk"] == constants.TABLE_SK]
        return TableHistory(
            rounds=tuple(map(RoundRecord.from_item, of("ROUND#"))),
            turns=tuple(map(LoggedTurn.from_item, of("LOG#"))),
            scores=tuple(map(ScoreRecord.from_item, of(SCORES))),
            playing=TableRecord.from_item(live[0]).turn_moves if live else (),
        )
