"""Tables as the score service leaves them: what a settlement is read from.

The ledger books a match's end from the games table's records (``services/ledger``),
so its tests need ended, aborted and live tables whose records say so exactly as the
score service writes them: each round's score item with its ``RoundScored``, in the
same commit as the table's new totals and status (``GameStore.record_score``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from services.common.events import RoundScored, SeatPlayer, TeamScore
from services.common.records import ScoreRecord, Status, TableRecord
from services.common.store import GameStore
from services.common.unit_of_work import Committed
from shared_engine import MatchMode


def _team(points: int) -> TeamScore:
    return TeamScore(melded=points, canastas=0, bonus_threes=0, going_out=0, hands=0, total=points)


def score_rounds(
    store: GameStore,
    table: TableRecord,
    totals_by_round: Sequence[tuple[int, int]],
    *,
    status: Status = "finished",
    at: float = 0.0,
) -> TableRecord:
    """Score a table's rounds, from its first, with these match totals after each; the
    last leaves it ``status`` (``playing``: the match goes on), written ``at``."""
    before = (0, 0)
    for number, totals in enumerate(totals_by_round, start=1):
        last = number == len(totals_by_round)
        scored = RoundScored(
            table_id=table.table_id,
            round=number,
            scores={"A": _team(totals[0] - before[0]), "B": _team(totals[1] - before[1])},
            totals={"A": totals[0], "B": totals[1]},
            next="end" if last and status != "playing" else "round",
            seed=f"seed-{number}",
            commitment=f"commitment-{number}",
        )
        old = table.evolve(round=number)
        table = old.evolve(
            totals=totals,
            status=status if last else "playing",
            version=old.version + 1,
            updated_at=at,
        )
        record = ScoreRecord(table.table_id, number, scored.model_dump(mode="json"))
        assert isinstance(store.record_score(old, table, record), Committed)
        before = totals
    return table


def scored_table(
    store: GameStore,
    table_id: str,
    mode: MatchMode,
    totals_by_round: Sequence[tuple[int, int]],
    seats: Mapping[int, SeatPlayer],
    *,
    stake: int = 0,
    status: Status = "finished",
    at: float = 0.0,
) -> TableRecord:
    """A new table, its rounds scored with these match totals (``score_rounds``)."""
    table = TableRecord(table_id, mode, "twos-meld", stake, dict(seats), version=1)
    assert isinstance(store.create_table(table), Committed)
    return score_rounds(store, table, totals_by_round, status=status, at=at)
