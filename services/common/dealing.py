"""Dealing a round onto a table: the deal service's first and next rounds, and the turn
service's next round when an intermission ends (every connected player continued, or its
timer fired).

A round is created once: the round item is written create-only in the same
transaction that puts the dealt state on the table, conditional on the table
being at the previous round. A duplicate or late call therefore deals nothing.
"""

from __future__ import annotations

from services.common.adapters import Clock, Entropy
from services.common.afterwrite import AfterWrite
from services.common.events import RoundStarted
from services.common.ledger import Ledger
from services.common.records import Outbound, RoundRecord, TableRecord
from services.common.store import GameStore
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Committed, Outcome, VersionConflict
from shared_engine import dealer_of_round, pack, start_round, unpack
from shared_engine.turn_clock import first_turn

RETRIES = 3


class Dealer:
    def __init__(
        self,
        *,
        store: GameStore,
        after_write: AfterWrite,
        clock: Clock,
        entropy: Entropy,
        telemetry: Telemetry,
        ledger: Ledger,
        turn_seconds: int,
    ) -> None:
        self._store = store
        self._after_write = after_write
        self._clock = clock
        self._entropy = entropy
        self._telemetry = telemetry
        self._ledger = ledger
        self._turn_seconds = turn_seconds

    def deal(self, table_id: str, round_number: int) -> TableRecord | None:
        """Deal ``round_number`` if the table is ready for it: the table dealt, or None.

        Ready means at the previous round, that round over, and its intermission over
        (``TableRecord.intermission_over``). A lost race re-reads the table: if another
        call dealt the round, the table has moved on and this one stops; a concurrent
        presence write just means trying again.
        """
        self._telemetry.annotate(table_id=table_id, round=round_number)
        for _ in range(RETRIES):
            table = self._store.get_table(table_id)
            if table is None or table.status != "playing" or table.round != round_number - 1:
                self._telemetry.info("deal skipped", reason="not due")
                return None
            if table.state is not None and not unpack(table.state).round_over:
                self._telemetry.warning("deal skipped", reason="previous round still running")
                return None
            if not table.intermission_over(self._clock.now()):
                self._telemetry.info("deal skipped", reason="intermission")
                return None
            new, outcome = self._deal(table, round_number)
            if isinstance(outcome, AlreadyDone):
                self._telemetry.info("deal skipped", reason="already dealt")
                return None
            if isinstance(outcome, VersionConflict):
                continue
            if not isinstance(outcome, Committed):
                raise RuntimeError(f"round {round_number} was not dealt: {outcome}")
            self._telemetry.count("rounds_dealt")
            self._after_write(new)
            return new
        raise RuntimeError(f"round {round_number}: the table moved on during every attempt")

    def _deal(self, table: TableRecord, round_number: int) -> tuple[TableRecord, Outcome]:
        seed = self._entropy.new_seed(table.table_id, round_number)
        dealer = dealer_of_round(round_number)
        jokers = tuple(
            0 if player.bot else self._ledger.balance(player.player_id).jokers
            for _, player in sorted(table.seats.items())
        )
        state = start_round(
            seed,
            variant=table.variant,
            dealer=dealer,
            match_scores=table.totals,
            account_jokers=jokers,
        )
        assert state.commitment is not None
        now = self._clock.now()
        version = table.version + 1
        clock = first_turn(version, now, self._turn_seconds)
        new = table.evolve(
            state=pack(state),
            round=round_number,
            version=version,
            turn_started=clock.started,
            turn_deadline=clock.deadline,
            intermission_until=None,
            continued=frozenset(),
            updated_at=now,
        )
        new = self._after_write.timers.before_write(table, new, now)
        started = RoundStarted(
            table_id=table.table_id,
            round=round_number,
            dealer=dealer,
            commitment=state.commitment,
            version=version,
        )
        dealt = RoundRecord(
            table_id=table.table_id,
            round=round_number,
            seed=seed,
            commitment=state.commitment,
            dealer=dealer,
            at=now,
            outbox=(Outbound.of(started),),
        )
        return new, self._store.start_round(old=table, new=new, dealt=dealt)
