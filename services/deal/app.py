"""Dealing rounds: on ``TableFormed`` the first, on ``RoundScored`` the next.

A round is created once: the round item is written create-only in the same
transaction that puts the dealt state on the table, conditional on the table
being at the previous round. A duplicate or late event therefore deals nothing.
"""

from __future__ import annotations

from services.common.adapters import Clock, Entropy, TurnTimers
from services.common.afterwrite import AfterWrite
from services.common.events import RoundScored, RoundStarted, TableFormed
from services.common.ledger import Ledger
from services.common.presence import PresenceStore
from services.common.records import Outbound, RoundRecord, TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Committed, Outcome, VersionConflict
from shared_engine import dealer_of_round, dumps, loads, start_round
from shared_engine.turn_clock import first_turn

RETRIES = 3


class DealService:
    def __init__(
        self,
        *,
        store: GameStore,
        presence: PresenceStore,
        views: ViewPusher,
        timers: TurnTimers | None,
        clock: Clock,
        entropy: Entropy,
        telemetry: Telemetry,
        ledger: Ledger,
        turn_seconds: int,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._presence = presence
        self._after_write = AfterWrite(store, views, timers)
        self._clock = clock
        self._entropy = entropy
        self._telemetry = telemetry
        self._turn_seconds = turn_seconds

    def table_formed(self, event: TableFormed) -> None:
        """Make sure the table exists, point its seats at the players' connections, deal round 1.

        Matchmaking usually wrote the table and seated the players in the same
        transaction; a table this call creates seats its players here. A late or
        repeated ``TableFormed`` moves nobody: only players who sit at this table
        get their connection attached to their seat.
        """
        table = TableRecord(
            table_id=event.table_id,
            mode=event.mode,
            variant=event.variant,
            stake=event.stake,
            seats={int(seat): player for seat, player in event.seats.items()},
            updated_at=self._clock.now(),
        )
        created = isinstance(self._store.create_table(table), Committed)
        stored = table if created else self._store.get_table(table.table_id)
        # A table not yet dealt is still being formed (by this delivery or a retried one);
        # a table already playing or over keeps its players where they are now.
        forming = stored is not None and stored.round == 0 and stored.status == "playing"
        for seat, player in table.seats.items():
            if player.bot:
                continue
            found = self._presence.get_player(player.player_id)
            here = found is not None and found.table_id == table.table_id
            if forming and (found is None or found.table_id is None or here):
                seated = self._presence.seat_player(
                    player.player_id, player.name, table.table_id, seat
                )
            elif here and found is not None:
                seated = found
            else:
                continue
            if seated.connection_id is not None:
                self._store.set_connection(table.table_id, seat, seated.connection_id)
        self.deal(event.table_id, 1)

    def round_scored(self, event: RoundScored) -> None:
        if event.next != "end":
            self.deal(event.table_id, event.round + 1)

    def deal(self, table_id: str, round_number: int) -> None:
        """Deal ``round_number`` if the table is ready for it; otherwise do nothing.

        A lost race re-reads the table: if another delivery dealt the round,
        the table has moved on and this one stops; a concurrent presence write
        just means trying again.
        """
        self._telemetry.annotate(table_id=table_id, round=round_number)
        for _ in range(RETRIES):
            table = self._store.get_table(table_id)
            if table is None or table.status != "playing" or table.round != round_number - 1:
                self._telemetry.info("deal skipped", reason="not due")
                return
            if table.state is not None and not loads(table.state).round_over:
                self._telemetry.warning("deal skipped", reason="previous round still running")
                return
            new, outcome = self._deal(table, round_number)
            if isinstance(outcome, AlreadyDone):
                self._telemetry.info("deal skipped", reason="already dealt")
                return
            if isinstance(outcome, VersionConflict):
                continue
            if not isinstance(outcome, Committed):
                raise RuntimeError(f"round {round_number} was not dealt: {outcome}")
            self._telemetry.count("rounds_dealt")
            self._after_write(new)
            return
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
            state=dumps(state),
            round=round_number,
            version=version,
            turn_started=clock.started,
            turn_deadline=clock.deadline,
            updated_at=now,
        )
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
