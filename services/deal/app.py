"""Dealing rounds: on ``TableFormed`` the first, on ``RoundScored`` the next unless its
players are given an intermission (``services.common.dealing``)."""

from __future__ import annotations

from services.common.adapters import Clock, Entropy, TurnTimers
from services.common.afterwrite import AfterWrite
from services.common.dealing import Dealer
from services.common.events import RoundScored, TableFormed
from services.common.ledger import Ledger
from services.common.presence import PresenceStore
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Committed


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
        self._store = store
        self._presence = presence
        self._clock = clock
        self._dealer = Dealer(
            store=store,
            after_write=AfterWrite(store, views, timers),
            clock=clock,
            entropy=entropy,
            telemetry=telemetry,
            ledger=ledger,
            turn_seconds=turn_seconds,
        )

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
        """The next round, unless the table waits for its players between the two: then the
        turn service deals it, on the last ``continue`` or when the intermission's timer
        fires. A table with nobody to wait for (bots and absent seats only) goes on now."""
        if event.next != "end":
            self.deal(event.table_id, event.round + 1)

    def deal(self, table_id: str, round_number: int) -> None:
        self._dealer.deal(table_id, round_number)
