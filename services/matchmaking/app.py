"""Matchmaking's entry points: each lobby message routed to its use case, and the events
that move players on.

The use cases live beside it: the queues and their state machine's tasks
(``queues.py``), friends tables behind invite codes (``lobbies.py``) and the
same four again (``rematch.py``). This router checks what every message needs
first (its size, its rate, that it comes from the player's current connection)
and answers ``leave`` wherever the player waits.
"""

from __future__ import annotations

from pydantic import ConfigDict, TypeAdapter

from services.common.adapters import Clock
from services.common.events import MatchEnded, PlayerDisconnected, TableAborted
from services.common.flood import FloodControl, over_rate
from services.common.leaderboards import ALL_TIME, Leaderboards, Standing, period_of
from services.common.ledger import Ledger
from services.common.profiles import ProfileStore
from services.common.protocol import (
    Balance,
    BalanceMessage,
    CreateTable,
    FillBots,
    JoinTable,
    Leaderboard,
    LeaderboardMessage,
    Leave,
    LobbyAction,
    LobbyMessage,
    Profile,
    ProfileMessage,
    Queue,
    Rematch,
    Replay,
)
from services.common.records import QueueTicket
from services.common.routing import Refusal, guarded, read_message
from services.common.telemetry import Telemetry
from services.matchmaking.lobbies import Lobbies
from services.matchmaking.queues import Queues
from services.matchmaking.rematch import Rematches
from services.matchmaking.replays import Replays
from services.matchmaking.replies import Replies
from services.matchmaking.store import PlayerStore

LOBBY_MESSAGE: TypeAdapter[LobbyAction] = (
    # Built by the first lobby message: the events path never reads one.
    TypeAdapter(LobbyMessage, config=ConfigDict(defer_build=True))
)


Reading = Balance | Profile | Leaderboard | Replay
"""What only reads the player's own records: answered on any of their connections."""
PROFILE_MATCHES = 20
"""The last matches a ``profile`` answer lists: one query, a bounded answer."""


class MatchmakingService:
    def __init__(
        self,
        *,
        queues: Queues,
        lobbies: Lobbies,
        rematches: Rematches,
        players: PlayerStore,
        replies: Replies,
        ledger: Ledger,
        profiles: ProfileStore,
        boards: Leaderboards,
        replays: Replays,
        clock: Clock,
        telemetry: Telemetry,
        max_message_bytes: int,
        flood: FloodControl | None = None,
    ) -> None:
        self.queues = queues
        """The queues' use cases; the state machine's tasks go to them directly."""
        self.lobbies = lobbies
        self._rematches = rematches
        self._players = players
        self._replies = replies
        self._ledger = ledger
        self._profiles = profiles
        self._boards = boards
        self._replays = replays
        self._clock = clock
        self._telemetry = telemetry
        self._max_bytes = max_message_bytes
        self._flood = flood

    def receive(self, player: tuple[str, str] | None, connection_id: str, body: str | None) -> None:
        """One WebSocket message: checked, parsed, dispatched; the client always hears back."""

        def refuse(refusal: Refusal) -> None:
            self._replies.refuse(connection_id, refusal.code, refusal.message, refusal.cid)

        def handle() -> None:
            limited = over_rate(self._flood, connection_id, body)
            if limited is not None:
                refuse(limited)
                return
            incoming = read_message(LOBBY_MESSAGE, player, body, self._max_bytes)
            if isinstance(incoming, Refusal):
                refuse(incoming)
            else:
                self._dispatch(incoming.player_id, incoming.name, connection_id, incoming.message)

        guarded(self._telemetry, refuse, handle, body)

    def _dispatch(
        self,
        player_id: str,
        name: str,
        connection_id: str,
        message: LobbyAction,
    ) -> None:
        self._telemetry.annotate(player_id=player_id, action=message.action)
        cid = message.cid
        if not isinstance(message, Reading) and self._replaced(player_id, connection_id):
            self._telemetry.count("refused_opened_elsewhere")
            self._replies.refuse(
                connection_id,
                "opened_elsewhere",
                "you opened the game in another tab or device; use that one, or reload here",
                cid,
            )
            return
        if isinstance(message, Queue):
            self.queues.queue(player_id, name, connection_id, message)
        elif isinstance(message, Leave):
            self.leave(player_id, connection_id, cid=cid)
        elif isinstance(message, CreateTable):
            self.lobbies.create_table(player_id, name, connection_id, message)
        elif isinstance(message, JoinTable):
            self.lobbies.join_table(player_id, name, connection_id, message.code.upper(), cid)
        elif isinstance(message, FillBots):
            self.lobbies.fill_bots(player_id, connection_id, cid, message.level)
        elif isinstance(message, Rematch):
            self._rematches.rematch(player_id, name, connection_id, message.table_id, cid)
        elif isinstance(message, Profile):
            self.profile(player_id, connection_id, cid)
        elif isinstance(message, Leaderboard):
            self.leaderboard(player_id, name, connection_id, message)
        elif isinstance(message, Replay):
            self._replays.replay(player_id, connection_id, message)
        else:
            self.balance(player_id, connection_id, cid)

    def _replaced(self, player_id: str, connection_id: str) -> bool:
        """Whether the player has opened a newer connection: the queue's and the lobby's
        pushes go to that one, so this one may no longer queue, leave or join for them."""
        current = self._players.player(player_id).connection_id
        return current is not None and current != connection_id

    def leave(
        self,
        player_id: str,
        connection_id: str | None,
        reason: str = "left",
        cid: str | None = None,
    ) -> None:
        player = self._players.player(player_id)
        ticket = QueueTicket.held_by(player)
        if ticket is not None:
            left = self.queues.leave(ticket, connection_id, reason, cid)
        else:
            left = player.lobby is not None and self.lobbies.leave(
                player.lobby, player_id, connection_id, reason, cid
            )
        # Not waiting, or a table took the player first: every ``leave`` hears back.
        if not left and connection_id:
            self._replies.refuse(
                connection_id, "not_queued", "you are not waiting for a table", cid
            )

    def balance(self, player_id: str, connection_id: str, cid: str | None = None) -> None:
        balance = self._ledger.balance(player_id)
        answer = BalanceMessage(points=balance.points, jokers=balance.jokers, cid=cid)
        self._replies.send(connection_id, answer.model_dump())

    def profile(self, player_id: str, connection_id: str, cid: str | None = None) -> None:
        """The player's own profile: two reads, the profile and the last matches."""
        history = self._profiles.history(player_id, last=PROFILE_MATCHES)
        answer = ProfileMessage.of(self._profiles.profile(player_id), history, cid)
        self._replies.send(connection_id, answer.model_dump(mode="json"))

    def leaderboard(
        self, player_id: str, name: str, connection_id: str, message: Leaderboard
    ) -> None:
        """A board's top 100 and the player's own standing: a query per shard, and when
        the player is not in the top, their rank counted from the shards' buckets."""
        mode = message.mode.value
        period = ALL_TIME if message.period == "all" else period_of(self._clock.now())
        top = self._boards.top(mode, period)
        profile = self._profiles.profile(player_id)
        rating = profile.ratings.get(mode) if profile else None
        own = None
        if profile and rating and period in (ALL_TIME, profile.months.get(mode)):
            own = next((s for s in top if s.player_id == player_id), None) or Standing(
                rank=self._boards.rank(mode, period, player_id, rating.shown),
                player_id=player_id,
                name=name,
                shown=rating.shown,
            )
        answer = LeaderboardMessage.of(
            message.mode, period, top, own, player_id=player_id, cid=message.cid
        )
        self._replies.send(connection_id, answer.model_dump(mode="json"))

    def match_over(self, event: MatchEnded | TableAborted) -> None:
        """Free every seated player to queue again."""
        for player in event.seats.values():
            if not player.bot:
                self._players.release(player.player_id, event.table_id)

    def player_disconnected(self, event: PlayerDisconnected) -> None:
        """A queued or waiting player whose connection closed leaves the queue or lobby.

        Not when the player has opened another connection since (a reload, another
        tab): the place is that connection's now, and the event may arrive after it
        queued again.
        """
        if event.table_id is None and not self._replaced(event.player_id, event.connection_id):
            self.leave(event.player_id, None, reason="disconnected")
