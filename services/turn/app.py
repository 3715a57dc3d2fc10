"""Use cases of the turn service: play a move, resync a client, expire a turn.

Every move follows one path: read the table, decide on that record alone, write
the new state conditional on the version read (a move that ends its turn with the
turn's log item, which carries the events to publish, in one transaction:
``writes``), then follow the write through (``followthrough``): the mover is
answered at once; at a turn's end, seats whose player is absent are auto-played
(TABLE-2, ``autoplay``), the next connected seat's turn gets a durable timer and
each seat is pushed its own view, with the moves it has not been shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ConfigDict, TypeAdapter

from services.common.adapters import Clock, Entropy, TurnTimers
from services.common.afterwrite import AfterWrite, running
from services.common.dealing import Dealer
from services.common.events import PlayerConnected, PlayerDisconnected, RoundScored, RoundStarted
from services.common.flood import FloodControl, over_rate
from services.common.ledger import Ledger, Posting, joker_debit
from services.common.presence import PresenceStore
from services.common.protocol import (
    LOG_SHOWN,
    ContinueMatch,
    Hello,
    Ping,
    Play,
    PongMessage,
    SaidMessage,
    Say,
    Sync,
    TurnMessage,
    WelcomeMessage,
)
from services.common.records import TableRecord
from services.common.routing import Refusal, guarded, read_message
from services.common.store import GameStore
from services.common.tableviews import ViewPusher, round_result, view_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import AlreadyDone, Short, VersionConflict
from services.turn.answers import Answers
from services.turn.autoplay import AutoPlay
from services.turn.followthrough import FollowThrough
from services.turn.intermission import Intermissions, waiting
from services.turn.sequence import MoveSequence
from services.turn.writes import Applied, MoveWriter
from shared_engine import EngineError, RoundState, unpack
from shared_engine.actions import JokerButton
from shared_engine.state import with_account_jokers

TIMER_RACES = 3
"""How often a timer that lost its race to another write of the table reads it again."""


CLIENT_MESSAGE: TypeAdapter[Play | Sync | Say | ContinueMatch | Hello | Ping] = TypeAdapter(
    # Built by the first message: the events and timers paths never read one.
    TurnMessage,
    config=ConfigDict(defer_build=True),
)


class TurnService:
    """What the handlers call: a seat's messages, round and presence events, turn timers.

    The steps every use case shares (answers to a sender, the write of moves, the
    auto-play of seats nobody plays, what follows a write) are built here from its ports.
    """

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
        max_message_bytes: int,
        flood: FloodControl | None = None,
    ) -> None:
        self._flood = flood
        self._ledger = ledger
        self._max_bytes = max_message_bytes
        self._store = store
        self._presence = presence
        self._views = views
        self._clock = clock
        self._telemetry = telemetry
        self._answers = Answers(views, telemetry)
        self._after_write = AfterWrite(store, views, timers)
        self._writer = MoveWriter(store, clock, telemetry, turn_seconds, self._after_write.timers)
        self._autoplay = AutoPlay(self._writer, telemetry)
        self._after = FollowThrough(store, self._after_write, self._autoplay, views, telemetry)
        dealer = Dealer(
            store=store,
            after_write=self._after_write,
            clock=clock,
            entropy=entropy,
            telemetry=telemetry,
            ledger=ledger,
            turn_seconds=turn_seconds,
        )
        self._intermissions = Intermissions(
            store=store,
            dealer=dealer,
            after_write=self._after_write,
            views=views,
            clock=clock,
            telemetry=telemetry,
        )

    # --- client messages ----------------------------------------------------------

    def receive(self, player: tuple[str, str] | None, connection_id: str, body: str | None) -> None:
        """One WebSocket message: checked, parsed, dispatched; the client always hears back."""

        def refuse(refusal: Refusal) -> None:
            self._telemetry.count(f"refused_{refusal.code}")
            self._answers.refuse(connection_id, refusal.code, refusal.message, cid=refusal.cid)

        def handle() -> None:
            limited = over_rate(self._flood, connection_id, body)
            if limited is not None:
                refuse(limited)
                return
            incoming = read_message(CLIENT_MESSAGE, player, body, self._max_bytes)
            if isinstance(incoming, Refusal):
                refuse(incoming)
                return
            message = incoming.message
            if isinstance(message, Play):
                self.play(incoming.player_id, connection_id, message)
            elif isinstance(message, Sync):
                self.sync(incoming.player_id, connection_id, message.cid)
            elif isinstance(message, Say):
                self.say(incoming.player_id, connection_id, message)
            elif isinstance(message, ContinueMatch):
                self.continue_match(incoming.player_id, connection_id, message)
            elif isinstance(message, Hello):
                welcome = WelcomeMessage(
                    player_id=incoming.player_id, name=incoming.name, cid=message.cid
                )
                self._views.send(connection_id, welcome.model_dump(mode="json"))
            else:
                self._views.send(connection_id, PongMessage(cid=message.cid).model_dump())

        guarded(self._telemetry, refuse, handle, body)

    def _seated(
        self, player_id: str, connection_id: str, table_id: str, cid: str | None
    ) -> tuple[TableRecord, int] | None:
        """The table and the player's seat at it; else ``not_seated`` is answered."""
        table = self._store.get_table(table_id)
        seat = table.seat_of(player_id) if table else None
        if table is None or seat is None:
            self._answers.refuse(
                connection_id, "not_seated", "you have no seat at this table", cid=cid
            )
            return None
        return table, seat

    def say(self, player_id: str, connection_id: str, message: Say) -> None:
        """A quick message from the player's own seat to everyone at the table."""
        seated = self._seated(player_id, connection_id, message.table_id, message.cid)
        if seated is None:
            return
        table, seat = seated
        if table.connections.get(seat) not in (None, connection_id):
            self._answers.elsewhere(connection_id, message.cid)
            return
        said = SaidMessage(table_id=table.table_id, seat=seat, phrase=message.phrase)
        self._telemetry.count("quick_messages")
        own = said.model_copy(update={"cid": message.cid}).model_dump(mode="json")
        gone = self._views.push_all(table, said.model_dump(mode="json"), reply=(seat, own))
        self._after_write.free(table, gone)

    def continue_match(self, player_id: str, connection_id: str, message: ContinueMatch) -> None:
        """The player has read the round's result (``Intermissions.continue_match``)."""
        self._telemetry.annotate(table_id=message.table_id)
        seated = self._seated(player_id, connection_id, message.table_id, message.cid)
        if seated is None:
            return
        table, seat = seated
        if not self._current(table.connections.get(seat), player_id, connection_id):
            self._answers.elsewhere(connection_id, message.cid)
            return
        if table.state is None:
            self._answers.refuse(
                connection_id, "wrong_phase", "no round is being played", table, message.cid
            )
            return
        self._intermissions.continue_match(table, seat, connection_id, message)

    def play(self, player_id: str, connection_id: str, message: Play) -> None:
        """Apply the message's moves for the player's own seat (``move`` and ``then``, one
        turn's, in one write), or answer that connection with why not.

        Each attempt decides on one read of the table alone. An attempt that loses the
        race to another write is followed by one more, on the table that write left.
        """
        self._telemetry.annotate(table_id=message.table_id)
        moves = MoveSequence.of(message)
        # The balance is read before the table: a rival press that spent the joker moved the
        # table in the same write, so the table read after it shows this press stale.
        pressed = isinstance(moves.first, JokerButton)
        jokers = self._ledger.balance(player_id).jokers if pressed else 0
        sent = _Sent(player_id, connection_id, message, moves, jokers)
        for lost_race in (False, True):
            if not self._attempt(sent, self._store.get_table(message.table_id), lost_race):
                return

    def _attempt(self, sent: _Sent, table: TableRecord | None, lost_race: bool) -> bool:
        """Decide the moves on ``table`` as read and act on it; True if the write lost the
        race to another. After a lost race the answer is ``stale_version``, never a
        repair: the winner's invocation is following its own write through."""
        player_id, connection_id, moves = sent.player_id, sent.connection_id, sent.moves
        cid = sent.message.cid
        seat = table.seat_of(player_id) if table else None
        if table is None or seat is None:
            self._answers.refuse(
                connection_id, "not_seated", "you have no seat at this table", cid=cid
            )
            return False
        if lost_race:
            self._answers.stale(connection_id, table, _state_of(table), seat, cid)
            return False
        self._telemetry.annotate(round=table.round, seat=seat)
        if not self._current(table.connections.get(seat), player_id, connection_id):
            self._answers.elsewhere(connection_id, cid)
            return False
        if table.state is None or table.status != "playing":
            self._answers.refuse(
                connection_id, "wrong_phase", "no round is being played", table, cid
            )
            return False
        state = unpack(table.state)
        if sent.message.version != table.version:
            self._answers.stale(connection_id, table, state, seat, cid)
            wire = moves.wire()
            if wire is not None:
                self._after.repair(table, state, seat, wire)
            return False
        postings: list[Posting] = []
        if isinstance(moves.first, JokerButton):
            state = with_account_jokers(state, seat, sent.jokers)
            postings = [joker_debit(table.table_id, table.round, player_id)]
        played = moves.played(state, seat)
        if isinstance(played, EngineError):
            self._telemetry.count(f"refused_{played.code}")
            self._answers.refuse(
                connection_id, played.code, played.detail or played.code, table, cid
            )
            return False
        applied = self._writer.commit(table, state, played, False, postings)
        if isinstance(applied, VersionConflict):
            return True
        if isinstance(applied, (Short, AlreadyDone)) and postings:
            # JOKER-1: no spare joker left, or this round's was spent already.
            self._telemetry.count("refused_joker_button_unavailable")
            self._answers.refuse(
                connection_id, "joker_button_unavailable", "JOKER-1: no spare joker", table, cid
            )
            return False
        if not isinstance(applied, Applied):
            raise RuntimeError(f"the move was not written: {applied}")
        applied.reply = (seat, cid)
        self._after(applied)
        return False

    def _current(self, seated: str | None, player_id: str, connection_id: str) -> bool:
        """Whether this connection may act for the seat: the seat's own, or the player's newest.

        A seat with no connection (its newest tab closed) is not free for any
        connection of the player's: an older tab, already told
        ``opened_elsewhere``, is still refused; only the connection the player
        opened last may act (and a reconnect is always that one).
        """
        if seated is not None:
            return seated == connection_id
        player = self._presence.get_player(player_id)
        return player is not None and player.connection_id == connection_id

    def sync(self, player_id: str, connection_id: str, cid: str | None = None) -> None:
        """Send the player's current view (clients ask after every (re)connect)."""
        player = self._presence.get_player(player_id)
        if player is not None and player.connection_id != connection_id:
            self._answers.elsewhere(connection_id, cid)
            return
        table = self._store.get_table(player.table_id) if player and player.table_id else None
        seat = table.seat_of(player_id) if table else None
        if table is None or seat is None or table.state is None:
            self._answers.refuse(
                connection_id, "no_table", "you are not seated at a table", cid=cid
            )
            return
        state = unpack(table.state)
        if table.connections.get(seat) != connection_id:
            self._store.set_connection(table.table_id, seat, connection_id)
            table = table.evolve(connections={**table.connections, seat: connection_id})
        log = self._store.moves.of_round(table, LOG_SHOWN)
        message = view_message(table, state, seat, cid=cid, log=log).model_dump(mode="json")
        self._views.send(connection_id, message)
        scored = self._store.score(table.table_id, table.round) if waiting(table) else None
        if scored is not None:
            # A reload between two rounds shows the round's result again.
            result = round_result(table, state, RoundScored.model_validate(scored.result), cid)
            self._views.send(connection_id, result.model_dump(mode="json"))

    # --- events and timers ----------------------------------------------------------

    def expire_turn(self, table_id: str, at: float | None) -> None:
        """TABLE-2: the table's timer, due ``at``, fired: auto-play the current turn once its
        deadline passed, else hand the timer on to it (``TableTimers.fired_early``). A
        hand-on that lost its race to a move decides again on the table that move left:
        a draw landing as the timer fires must not leave its turn with no timer coming."""
        self._telemetry.annotate(table_id=table_id)
        for attempt in range(TIMER_RACES):
            if self._expire(table_id, at, raced=attempt > 0) != "timers_raced":
                return
        raise RuntimeError("the timer lost its race on every attempt: delivered again")

    def _expire(self, table_id: str, at: float | None, *, raced: bool) -> str:
        table = self._store.get_table(table_id)
        if table is not None and waiting(table):
            return self._intermissions.expire(table, at, raced=raced)
        state = _state_of(table)
        if table is None or state is None or not running(table, state):
            self._telemetry.count("timers_stale")
            return "timers_stale"
        now = self._clock.now()
        if table.turn_deadline is not None and now < table.turn_deadline:
            outcome = self._after_write.timers.fired_early(table, at, now, raced=raced)
            self._telemetry.count(outcome)
            return outcome
        self._telemetry.count("timers_expired")
        applied = self._autoplay.play_turns(table, state, stretch=False, expired=True)
        if applied is not None:
            self._after(applied)
        return "timers_expired"

    def on_event(self, event: RoundStarted | PlayerConnected | PlayerDisconnected) -> None:
        """A round started or a seat's presence changed: auto-play if needed, show everyone."""
        if event.table_id is not None:
            self._telemetry.annotate(table_id=event.table_id)
            self.refresh(event.table_id)

    def refresh(self, table_id: str) -> None:
        """A seat's presence changed or a round started: auto-play if needed, show everyone
        (mid-turn, with the turn's moves so far: its state is the table's)."""
        table = self._store.get_table(table_id)
        if table is None or table.state is None:
            return
        if waiting(table) and self._intermissions.go_on(table):
            return
        playing = [move.public for move in table.turn_moves if move.public]
        last = playing[-1] if playing else {}
        self._after(Applied(table, last, unpack(table.state), moves=playing))


@dataclass(frozen=True, slots=True)
class _Sent:
    """A play message as received: its sender and connection, its moves as the engine's
    actions (or why they are none) and, for the joker button, the account's spare jokers."""

    player_id: str
    connection_id: str
    message: Play
    moves: MoveSequence
    jokers: int


def _state_of(table: TableRecord | None) -> RoundState | None:
    return unpack(table.state) if table is not None and table.state is not None else None
