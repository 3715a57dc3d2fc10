"""Scoring a round and deciding the match: next round, tie-break, or the end.

The score item of a round is written create-only with the new match totals, so
a duplicated ``RoundEnded`` adds nothing twice. The write that ends a match also
frees its players: ``match_result`` is sent after it, and a player who queues the
moment it arrives must find the seat released, not wait for ``MatchEnded`` to
cross the relay and the bus.
"""

from __future__ import annotations

from services.common.adapters import Clock, TurnTimers
from services.common.afterwrite import AfterWrite
from services.common.events import (
    MatchEnded,
    RoundEnded,
    RoundScored,
    TableAborted,
    TeamScore,
    is_practice,
)
from services.common.presence import PresenceStore
from services.common.protocol import MatchResultMessage
from services.common.records import Outbound, ScoreRecord, TableRecord
from services.common.store import GameStore
from services.common.tableviews import ViewPusher, round_result
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Committed, LostRace, VersionConflict
from shared_engine import account_rewards, decide_after_round, score_round, unpack
from shared_engine.match import TEAM_NAMES, SeatPresence, winner_of

RETRIES = 3


def _presence(table: TableRecord) -> list[SeatPresence]:
    return [
        SeatPresence(bot=player.bot, connected=table.connections.get(seat) is not None)
        for seat, player in sorted(table.seats.items())
    ]


Scored = Committed | AlreadyDone | VersionConflict | LostRace


class ScoreService:
    def __init__(
        self,
        store: GameStore,
        presence: PresenceStore,
        views: ViewPusher,
        clock: Clock,
        telemetry: Telemetry,
        *,
        timers: TurnTimers | None = None,
        intermission_seconds: int = 0,
    ) -> None:
        self._store = store
        self._presence = presence
        self._views = views
        self._after_write = AfterWrite(store, views, timers)
        self._clock = clock
        self._telemetry = telemetry
        self._intermission_seconds = intermission_seconds

    def round_ended(self, event: RoundEnded) -> None:
        self._telemetry.annotate(table_id=event.table_id, round=event.round)
        for _ in range(RETRIES):
            table = self._store.get_table(event.table_id)
            if table is None or table.round != event.round or table.state is None:
                self._telemetry.info("score skipped", reason="not this round")
                return
            outcome = self._score(table)
            if isinstance(outcome, AlreadyDone):
                self._telemetry.info("score skipped", reason="already scored")
                self._announce_again(table)
                return
            if not isinstance(outcome, (VersionConflict, LostRace)):
                return
        raise RuntimeError(
            f"round {event.round}: the table or its players moved on during every attempt"
        )

    def _score(self, table: TableRecord) -> Scored | None:
        """Score the round at the table; None if it is still running."""
        assert table.state is not None
        state = unpack(table.state)
        if not state.round_over:
            self._telemetry.warning("score skipped", reason="round still running")
            return None
        scores = score_round(state)
        totals = (table.totals[0] + scores[0].total, table.totals[1] + scores[1].total)
        decision = decide_after_round(
            table.mode, totals, table.round, tie_break=table.tie_break, seats=_presence(table)
        )
        assert state.seed is not None and state.commitment is not None
        scored = RoundScored(
            table_id=table.table_id,
            round=table.round,
            scores={
                "A": TeamScore(**scores[0].as_dict(), total=scores[0].total),
                "B": TeamScore(**scores[1].as_dict(), total=scores[1].total),
            },
            totals={"A": totals[0], "B": totals[1]},
            next=decision.next,
            seed=state.seed,
            commitment=state.commitment,
        )
        outbox = [Outbound.of(scored)]
        ended: MatchEnded | None = None
        if decision.ended:
            assert decision.winner is not None
            ended = MatchEnded(
                table_id=table.table_id,
                mode=table.mode,
                stake=table.stake,
                winner=TEAM_NAMES[decision.winner],
                totals={"A": totals[0], "B": totals[1]},
                rounds_played=table.round,
                seats={str(seat): player for seat, player in table.seats.items()},  # type: ignore[misc]
            )
            outbox.append(Outbound.of(ended))
        if decision.abandoned:
            aborted = TableAborted(
                table_id=table.table_id,
                mode=table.mode,
                stake=table.stake,
                seats={str(seat): player for seat, player in table.seats.items()},  # type: ignore[misc]
                reason="every player left",
            )
            outbox.append(Outbound.of(aborted))
        now = self._clock.now()
        # A person at the table reads the result before the next round; bots and absent
        # seats never wait (a table with nobody else goes on when the deal service deals).
        goes_on = (
            not decision.ended
            and not decision.abandoned
            and self._intermission_seconds > 0
            and bool(table.awaited())
        )
        version = table.version + 1
        new = table.evolve(
            totals=totals,
            tie_break=decision.tie_break,
            status="finished" if decision.ended else "aborted" if decision.abandoned else "playing",
            version=version,
            turn_deadline=None,
            # The intermission's timer is keyed, as a turn's, by the version it began at.
            turn_started=version if goes_on else table.turn_started,
            intermission_until=now + self._intermission_seconds if goes_on else None,
            continued=frozenset(),
            updated_at=now,
        )
        new = self._after_write.timers.before_write(table, new, now)
        record = ScoreRecord(
            table.table_id, table.round, scored.model_dump(mode="json"), tuple(outbox)
        )
        leaving = self._seated_here(table) if decision.ended or decision.abandoned else []
        outcome = self._store.record_score(table, new, record, leaving)
        if not isinstance(outcome, (Committed, AlreadyDone, VersionConflict, LostRace)):
            raise RuntimeError(f"round {table.round} was not scored: {outcome}")
        if isinstance(outcome, Committed):
            self._telemetry.count("rounds_scored")
            if ended is not None:
                self._telemetry.count("matches_ended")
            self._announce(new, scored)
        return outcome

    def _seated_here(self, table: TableRecord) -> list[str]:
        """The table's players whose item still seats them at it: a redelivered score, or a
        player seated elsewhere since (a table formed from outside), frees nobody twice."""
        return [
            player.player_id
            for player in table.seats.values()
            if not player.bot
            and (found := self._presence.get_player(player.player_id)) is not None
            and found.table_id == table.table_id
        ]

    def _announce(self, table: TableRecord, scored: RoundScored) -> None:
        """Everyone's view (with the intermission's timer, when another round follows), the
        round's result and, at the end, the match's result."""
        self._after_write(table)
        assert table.state is not None
        result = round_result(table, unpack(table.state), scored)
        self._after_write.free(table, self._views.push_all(table, result.model_dump(mode="json")))
        if table.status != "finished":
            return
        winner = winner_of((scored.totals["A"], scored.totals["B"]))
        assert winner is not None, "a finished match has a winner"
        practice = is_practice(table.seats.values())
        rewards = account_rewards(table.mode, winner, table.round, table.stake)
        match_result = MatchResultMessage(
            table_id=table.table_id,
            winner=TEAM_NAMES[winner],
            totals=scored.totals,
            rounds_played=table.round,
            rewards={str(seat): 0 if practice else amount for seat, amount in rewards.items()},  # type: ignore[misc]
            practice=practice,
            rounds=[
                {
                    "A": record.result["scores"]["A"]["total"],
                    "B": record.result["scores"]["B"]["total"],
                }
                for record in self._store.scores(table.table_id)
            ],
        )
        self._after_write.free(
            table, self._views.push_all(table, match_result.model_dump(mode="json"))
        )

    def _announce_again(self, table: TableRecord) -> None:
        """A redelivery after the score was written: its announcements may have been lost
        with the failure that caused the redelivery, and sending them again is harmless."""
        record = self._store.score(table.table_id, table.round)
        if record is not None:
            self._announce(table, RoundScored.model_validate(record.result))
