"""The WebSocket protocol: every message a client sends and every one it receives.

API Gateway routes a client message on its ``action`` field
(``$request.body.action``); each route parses its message with the model
here. The AsyncAPI document (docs/asyncapi.json) and docs/protocol.md are
generated from these models, so code and documentation cannot drift.

Client messages are strict (an unknown field is refused); server messages
are open (the server may add fields, and clients ignore what they do not
know): that asymmetry is the versioning rule of docs/protocol.md.
"""

from enum import IntEnum
from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_validator

from services.common.events import BotLevel, SeatPlayer
from services.common.identities import MAX_SUBJECT
from services.common.leaderboards import Standing
from services.common.names import DisplayName
from services.common.profiles import MatchEntry, Rating
from services.common.profiles import Profile as ProfileRecord
from services.common.settings import Settings
from shared_engine import Variant
from shared_engine.actions import ActionModel, MeldSpecModel, TileName
from shared_engine.errors import ErrorCode
from shared_engine.match import MatchMode
from shared_engine.state import TEAMS, team_of
from shared_engine.view import MeldView, PlayerView, ScoreView

PROTOCOL_VERSION = 1
REPLAY_FRAMES: Final = 40
"""Frames of a replay page: a view without its legal moves is about 1.5 KB, so a page
stays far under API Gateway's 128 KB."""
MAX_ROUNDS: Final = 99
MAX_PLIES: Final = 9999
LOG_SHOWN: Final = 400
"""The most moves a ``sync`` answer restores to the move log: a long round's are the last
ones, and the frame stays far under API Gateway's 128 KB."""
ARENA_STAKES: Final[tuple[int, ...]] = Settings.model_fields["arena_stakes"].default
IDLE_SECONDS: Final = 600
"""API Gateway closes a connection that carried no message for this long."""
MAX_THEN: Final = 6
"""The most further moves one ``play`` carries: a turn's melds (one meld move lays any
number of them) and its discard, bounded so that no message makes the server decide more."""
OPENING_MOVES: Final = frozenset({"draw", "take_pile", "joker_button"})
"""Moves that begin a turn's play: each needs the server's answer (the tile drawn, the
pile), so none can follow another move in one message."""


class CloseCode(IntEnum):
    """The WebSocket close codes (RFC 6455) a client may see, each with what it asks of the
    client in ``CLOSE_MEANINGS``. The services never close a connection to refuse a message
    (a refusal is an ``error`` message on the open connection), so none is an application
    code (4000-4999)."""

    NORMAL = 1000
    GOING_AWAY = 1001
    ABNORMAL = 1006
    POLICY_VIOLATION = 1008
    TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012


CLOSE_MEANINGS: Final[dict[CloseCode, str]] = {
    CloseCode.NORMAL: "Closed on purpose: an operator ended the connection (`@connections` "
    "DELETE, `python -m ops kick`). Reconnect only when the person asks to.",
    CloseCode.GOING_AWAY: "API Gateway ended a connection idle for 10 minutes or open for 2 "
    "hours, or the local stack is stopping. Reconnect and send `sync`.",
    CloseCode.ABNORMAL: "No close frame at all (seen by the client only): the network or the "
    "server went away. Reconnect with a growing delay, then send `sync`.",
    CloseCode.POLICY_VIOLATION: "API Gateway refused a client sending too many messages (the "
    "stage's throttle). Wait a few seconds, reconnect, and send more slowly.",
    CloseCode.TOO_BIG: "A message over API Gateway's 128 KB (the local stack answers one of "
    "128 to 512 KB with `message_too_large` and closes on a larger one). Reconnect; the "
    "services refuse any message over their own limit with `message_too_large` anyway.",
    CloseCode.INTERNAL_ERROR: "API Gateway failed inside. Reconnect with a growing delay, then "
    "send `sync`.",
    CloseCode.SERVICE_RESTART: "API Gateway is restarting. Reconnect with a growing delay, then "
    "send `sync`.",
}
"""What each close code means for a client: the contract's ``x-close-codes``."""

TableId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
PlayerId = Annotated[str, Field(min_length=1, max_length=64)]
Seat = Annotated[int, Field(ge=1, le=4)]
SeatKey = Literal["1", "2", "3", "4"]
Team = Literal["A", "B"]
SEAT_TEAMS: Final[dict[SeatKey, Team]] = {
    "1": TEAMS[team_of(1)],
    "2": TEAMS[team_of(2)],
    "3": TEAMS[team_of(3)],
    "4": TEAMS[team_of(4)],
}
CorrelationId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9._:-]+$",
        title="CorrelationId",
    ),
]


def _require_sent(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """The server sends every field of its messages (``type`` first, a default or a null
    included) except those left out when empty: the schema requires exactly those."""
    schema["required"] = [
        name for name, field in model.model_fields.items() if field.exclude_if is None
    ]


def _absent(value: object) -> bool:
    """An optional field left out of the frame rather than sent as null."""
    return value is None


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ClientMessageBase(_Message):
    """What every client message may carry beside its ``action``.

    Strict types, as the protocol states them: ``"version": "5"``, ``true`` for 1 or
    ``"500"`` as a stake are ``malformed``, never coerced."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    cid: CorrelationId | None = None
    """A correlation id of the client's choosing, echoed in every reply and error this
    message causes (1–64 letters, digits or ``._:-``)."""


class ServerMessageBase(BaseModel):
    """Every server message: its fields all required in the schema but those left out
    when empty, and the ``cid`` of the message it answers."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=_require_sent, defer_build=True
    )

    cid: CorrelationId | None = Field(default=None, exclude_if=_absent)
    """The ``cid`` of the client message this answers; absent on pushes."""


# --- client to server -------------------------------------------------------------


class Play(ClientMessageBase):
    """Apply a move at the table, and the further moves of the same turn in ``then``, in
    order, all or none: a turn's melds and its discard cost one message. ``version`` is the
    version of the view they were chosen on."""

    action: Literal["play"]
    table_id: TableId
    version: int = Field(ge=0)
    move: ActionModel
    then: list[ActionModel] = Field(default_factory=list, max_length=MAX_THEN)

    @model_validator(mode="after")
    def _one_turn(self) -> Self:
        """Refuse early what cannot be one turn: a move after the turn's discard, or one
        that only begins a turn; the engine judges the rest, move by move."""
        for place, move in enumerate(self.then):
            if move.type in OPENING_MOVES:
                raise ValueError(f"then.{place}: a {move.type} begins a turn; send it as move")
        for place, move in enumerate([self.move, *self.then][:-1]):
            if move.type == "discard":
                where = "move" if place == 0 else f"then.{place - 1}"
                raise ValueError(f"{where}: a discard ends the turn; nothing may follow it")
        return self


class Sync(ClientMessageBase):
    """Ask for the current view of the player's table (sent after every (re)connect). The
    answer restores the round's move log (``ViewMessage.log``); between two rounds it is
    followed by the round's ``round_result`` again, so the result is shown after a reload."""

    action: Literal["sync"]


class Hello(ClientMessageBase):
    """Ask who this connection is: the answer names the player the token identified."""

    action: Literal["hello"]


QuickPhrase = Annotated[
    Literal["good_game", "well_played", "good_luck", "thanks", "hurry_up", "oops"],
    Field(title="QuickPhrase"),
]
"""The fixed set of quick messages: no free text, so nothing to moderate; each client
shows them in its player's language."""


class Say(ClientMessageBase):
    """A quick message to the player's table, shown by the seat to everyone at it."""

    action: Literal["say"]
    table_id: TableId
    phrase: QuickPhrase


class Ping(ClientMessageBase):
    """Keep the connection alive: API Gateway closes a connection idle for 10 minutes."""

    action: Literal["ping"]


class Queue(ClientMessageBase):
    """Join a quick-start queue (``mode`` one_round, three_rounds, to_10000) or the arena
    (``mode`` arena, with a ``stake`` from the configured list)."""

    action: Literal["queue"]
    # An enum member from Python, its string value from JSON (``mode: 5`` is still refused).
    mode: Annotated[MatchMode, Field(strict=False)]
    variant: Variant = "twos-meld"
    stake: int = Field(default=0, ge=0, json_schema_extra={"enum": [0, *ARENA_STAKES]})


class Leave(ClientMessageBase):
    """Leave the queue or the friends table being formed."""

    action: Literal["leave"]


class CreateTable(ClientMessageBase):
    """Open a friends table; the answer carries the invite code to share."""

    action: Literal["create_table"]
    mode: Annotated[Literal["one_round", "three_rounds", "to_10000"], Field(title="FriendsMode")]
    variant: Variant = "twos-meld"


class JoinTable(ClientMessageBase):
    """Take a free seat at a friends table by its invite code; the fourth player starts the
    match. Answered with a ``lobby`` (``started`` when this join filled the table)."""

    action: Literal["join_table"]
    code: str = Field(min_length=4, max_length=12)


class FillBots(ClientMessageBase):
    """The host fills the empty seats of their friends table with bots, which starts it.
    Answered with a ``lobby`` whose ``status`` is ``started``."""

    action: Literal["fill_bots"]
    level: BotLevel = "normal"
    """How hard the bots play: ``easy`` (the heuristic player), ``normal`` or ``hard``
    (they search ahead in the worlds their seat could be in)."""


class Rematch(ClientMessageBase):
    """Play again with the same four in the same seats, once a friends table's match is
    over. The first to ask opens the new table (and is its host), the bots seated again
    at their level; the others are offered it (a ``lobby`` naming ``rematch_of`` and
    holding their seats in ``awaiting``) and each takes their seat with their own
    ``rematch``. The fourth to take theirs starts the match; the host may instead give
    the seats still awaited to bots (``fill_bots``)."""

    action: Literal["rematch"]
    table_id: TableId
    """The table whose match is over."""


class ContinueMatch(ClientMessageBase):
    """Done reading a round's result: the next round of the match is dealt once every
    connected player at the table has sent this, or when the intermission's time is up
    (``ViewMessage.intermission``). Answered with the sender's view. A ``continue`` for a
    round the table has left, or sent twice, changes nothing and is answered the same."""

    action: Literal["continue"]
    table_id: TableId
    round: int = Field(ge=1)
    """The round whose result was read."""


class Balance(ClientMessageBase):
    """Ask for the account's points and spare jokers."""

    action: Literal["balance"]


class Profile(ClientMessageBase):
    """Ask for one's own rating, stats per mode and last matches (``ProfileMessage``)."""

    action: Literal["profile"]


class Replay(ClientMessageBase):
    """Ask for a page of the replay of a finished match one sat at (``ReplayMessage``):
    what their seat saw at the deal of ``round`` (``start`` 0) and after each move."""

    action: Literal["replay"]
    table_id: TableId
    round: int = Field(default=1, ge=1, le=MAX_ROUNDS)
    start: int = Field(default=0, ge=0, le=MAX_PLIES)
    """The first frame: 0 is the deal, n the view after the round's n-th move."""


class Leaderboard(ClientMessageBase):
    """Ask for a mode's top 100 and one's own rank on it (``LeaderboardMessage``): of all
    time, or of the current month (UTC)."""

    action: Literal["leaderboard"]
    mode: Annotated[MatchMode, Field(strict=False)]
    period: Literal["all", "month"] = "all"


TurnAction = Play | Sync | Say | ContinueMatch | Hello | Ping
LobbyAction = (
    Queue
    | Leave
    | CreateTable
    | JoinTable
    | FillBots
    | Rematch
    | Balance
    | Profile
    | Leaderboard
    | Replay
)
TurnMessage = Annotated[TurnAction, Field(discriminator="action")]
"""Routed to the turn service (``play``, ``sync``, ``say``, ``continue``; ``hello`` and
``ping`` reach it through ``$default``)."""
LobbyMessage = Annotated[LobbyAction, Field(discriminator="action")]
"""Routed to the matchmaking service."""
ClientMessage = Annotated[TurnAction | LobbyAction, Field(discriminator="action")]


# --- server to client -------------------------------------------------------------

ServiceErrorCode = Literal[
    "stale_version",
    "not_seated",
    "opened_elsewhere",
    "no_table",
    "message_too_large",
    "unknown_action",
    "already_playing",
    "not_queued",
    "unknown_code",
    "table_full",
    "not_host",
    "not_over",
    "invalid_stake",
    "insufficient_balance",
    "rate_limited",
    "internal",
]
"""Refusals of the services, beside the engine's codes (SCENARIOS.md)."""

ERROR_CODE_NAMES: Final[tuple[str, ...]] = (*get_args(ErrorCode), *get_args(ServiceErrorCode))
AnyErrorCode = Annotated[
    ErrorCode | ServiceErrorCode,
    WithJsonSchema({"title": "ErrorCode", "type": "string", "enum": list(ERROR_CODE_NAMES)}),
]
"""One named enum of every refusal, engine and service, for clients to translate."""


class SeatInfo(_Message):
    """A seat's player and whether they are connected (else their turns are auto-played)."""

    player: SeatPlayer
    connected: bool


class MatchInfo(_Message):
    """The match around the round: its length, stake, round number and team totals."""

    mode: MatchMode
    variant: Variant
    stake: int = Field(ge=0)
    round: int = Field(ge=1)
    totals: dict[Team, int]
    status: Annotated[Literal["playing", "finished", "aborted"], Field(title="MatchStatus")]
    practice: bool = False
    """A seat is played by a bot from the start: the match settles no account points and
    no stake (MATCH-3). A player's seat auto-played after leaving does not make it one."""
    rematch: bool = False
    """A friends table: once the match is over, its four may play again together in the
    same seats (``rematch``). A queue's table has none: its players queue again."""


class Meld(MeldView):
    """A team's meld on the table, as every seat sees it."""

    tiles: list[TileName]
    canasta: Annotated[Literal["clean", "dirty"], Field(title="CanastaKind")] | None
    stripe: Annotated[Literal["yellow", "red"], Field(title="Stripe")] | None


class TableView(PlayerView):
    """The round as one seat may see it: its own tiles, only counts of the others'."""

    # The engine's view with the wire's narrower types: the same JSON, a stricter schema
    # (dict values are invariant for mypy, hence the ignores on the narrowed maps).

    seat: Seat
    turn: Seat
    hand: list[TileName]
    hand_sizes: dict[SeatKey, int]  # type: ignore[assignment]
    teams: dict[SeatKey, Team]  # type: ignore[assignment]
    melds: dict[Team, list[Meld]]  # type: ignore[assignment]
    bonus_threes: dict[Team, list[TileName]]
    discard: list[TileName]
    went_out: Seat | None
    legal_actions: list[ActionModel]  # type: ignore[assignment]


class LastAction(_Message):
    """The move that produced this view's version, in ``move`` form plus who made it."""

    seat: Seat
    """The seat that moved."""
    auto: bool
    """True when the server played it: auto-play of an absent or timed-out seat (TABLE-2),
    or a bot's seat."""
    type: Annotated[
        Literal["draw", "take_pile", "joker_button", "meld", "discard"], Field(title="MoveType")
    ]
    """The move made, as in ``move``."""
    tile: TileName | None = Field(default=None, exclude_if=_absent)
    """``discard`` only: the tile discarded."""
    melds: list[MeldSpecModel] | None = Field(default=None, exclude_if=_absent)
    """``meld`` and ``take_pile`` only: the melds laid or extended."""
    pile_size: int | None = Field(default=None, ge=1, exclude_if=_absent)
    """``take_pile`` only: how many tiles the pile held (PILE-4)."""
    bonus_threes: list[TileName] | None = Field(default=None, exclude_if=_absent)
    """The bonus threes this move exposed (THREE-1, TURN-2), if any: public once exposed.
    A draw never names the tile drawn."""
    went_out: bool | None = Field(default=None, exclude_if=_absent)
    """True when this discard took the seat out (OUT-1)."""


class LoggedMove(LastAction):
    """A move of the round as the move log shows it: ``LastAction`` and the table version
    its write made (one write may make several moves: a bot's whole turn)."""

    version: int = Field(ge=1)


class Intermission(_Message):
    """Between two rounds of a match: the round's result stays on the table, no turn and no
    timer runs, and the next round is dealt when every connected player has sent
    ``continue`` or at ``until``, whichever comes first. Bots' seats and disconnected
    players' seats are never waited for (TABLE-2)."""

    until: float
    """Epoch seconds when the next round is dealt at the latest."""
    continued: list[Seat]
    """The seats whose player sent ``continue`` for this round."""
    awaited: list[Seat]
    """The connected players' seats the next round still waits for."""


class ViewMessage(ServerMessageBase):
    """The seat's whole view. Sent after every change; a client replaces its state with it."""

    type: Literal["view"] = "view"
    protocol: int = PROTOCOL_VERSION
    table_id: str
    version: int = Field(ge=0)
    seat: Seat
    seats: dict[SeatKey, SeatInfo]
    match: MatchInfo
    turn_deadline: float | None
    """Epoch seconds when auto-play takes the current turn (TABLE-2), if timed."""
    view: TableView
    last_action: LastAction | None = None
    """The move that produced this version, for animation; null after a sync or a deal."""
    moves: list[LoggedMove] = Field(default_factory=list)
    """The moves this seat had not been shown, in order, each with the version its write
    made, the last being ``last_action``; public facts only, for a move log. The mover's
    own view answers each of its moves with that move; the other seats see a turn when it
    ends, all its moves at once (the draw, melds and discard), and the turns of bots and
    absent seats that follow without a person acting in one view with them. A move may
    come again in a later view (after a ``sync`` or a seat's reconnect mid-turn, its
    version and place the same): keep it once. Empty after a sync or a deal."""
    intermission: Intermission | None = Field(default=None, exclude_if=_absent)
    """Present while the table waits between two rounds (the round over, the next to be
    dealt): what it waits for and until when."""
    log: list[LoggedMove] | None = Field(default=None, exclude_if=_absent)
    """The answer to ``sync`` only: the round's public moves so far, oldest first (the last
    ``LOG_SHOWN`` at most), so that a client that reconnects shows the same move log."""


class ErrorMessage(ServerMessageBase):
    """A refusal. Nothing changed. ``view`` comes with ``stale_version``."""

    type: Literal["error"] = "error"
    code: AnyErrorCode
    message: str
    table_id: str | None = Field(default=None, exclude_if=_absent)
    view: ViewMessage | None = Field(default=None, exclude_if=_absent)


class RoundResultMessage(ServerMessageBase):
    """A round was scored (SCORE-1) and what comes next; reveals the round's seed."""

    type: Literal["round_result"] = "round_result"
    table_id: str
    round: int = Field(ge=1)
    scores: dict[Team, ScoreView]
    totals: dict[Team, int]
    next: Annotated[Literal["round", "tie_break", "end"], Field(title="NextRound")]
    seed: str
    """Revealed now: recompute the shuffle and check it against ``commitment`` (DEAL-4)."""
    commitment: str
    went_out: Seat | None = None
    """The seat that went out (OUT-1), or null when the stock ran out (STOCK-2)."""
    hands: dict[SeatKey, list[TileName]] = Field(default_factory=dict)
    """Every seat's tiles left in hand, which count against its team (SCORE-1)."""
    intermission_until: float | None = None
    """With another round to come: epoch seconds when it is dealt at the latest (sooner
    once every connected player sent ``continue``); null at the match's end."""


class MatchResultMessage(ServerMessageBase):
    """The match is over: the winning team, the totals and each seat's account change.
    Its players are free when it arrives (the match's end freed the seats before it was
    sent): ``queue``, ``create_table`` or ``rematch`` may follow at once."""

    type: Literal["match_result"] = "match_result"
    table_id: str
    winner: Team
    totals: dict[Team, int]
    rounds_played: int = Field(ge=1)
    rewards: dict[SeatKey, int]
    """Account points each seat gains or loses (MATCH-3, MATCH-4)."""
    practice: bool = False
    """A practice match (a bot played from the start): every reward is 0 (MATCH-3)."""
    rounds: list[dict[Team, int]] = Field(default_factory=list)
    """Each round's score of each team, in the order played: the match's score sheet."""


class QueuedMessage(ServerMessageBase):
    """The player waits in a queue until four make a table or ``expires_at`` passes."""

    type: Literal["queued"] = "queued"
    mode: MatchMode
    variant: Variant
    stake: int = Field(ge=0, json_schema_extra={"enum": [0, *ARENA_STAKES]})
    expires_at: float


class QueueLeftMessage(ServerMessageBase):
    """The player is no longer waiting: they left, their ticket timed out, they
    disconnected, or the host closed the friends table they had joined."""

    type: Literal["queue_left"] = "queue_left"
    reason: Annotated[
        Literal["left", "timeout", "disconnected", "closed"], Field(title="QueueLeftReason")
    ]
    """``left``: the player's own ``leave``; ``timeout``: no table formed before the ticket
    expired; ``disconnected``: the connection closed while waiting (sent to no one: a client
    that reconnects starts again); ``closed``: the host left the friends table."""


class LobbyView(ServerMessageBase):
    """A friends table being formed: who sits where, and the code to invite others.

    Every seated player receives it when a seat changes. When the fourth seat is
    taken (a ``join_table`` or the host's ``fill_bots``), ``status`` is ``started``
    and ``table_id`` names the table; the first ``view`` of that table follows."""

    type: Literal["lobby"] = "lobby"
    code: str
    host: PlayerId
    you: PlayerId
    """The receiving player's id: ``you == host`` may send ``fill_bots``."""
    mode: MatchMode
    variant: Variant
    seats: dict[SeatKey, SeatPlayer | None]
    status: Annotated[Literal["forming", "started"], Field(title="LobbyStatus")] = "forming"
    table_id: str | None = None
    """With ``started``: the table the match is played at."""
    practice: bool = False
    """A seat is a bot: the match is practice and settles no account points (MATCH-3).
    ``fill_bots`` makes it so; clients say so to the host before they press it."""
    teams: dict[SeatKey, Team] = Field(default_factory=lambda: dict(SEAT_TEAMS))
    """Each seat's team (TABLE-1: partners sit opposite)."""
    rematch_of: TableId | None = None
    """This table plays the match at ``rematch_of`` again: only its four hold seats."""
    awaiting: dict[SeatKey, SeatPlayer] = Field(default_factory=dict)
    """Seats held for players of that match who have not taken them yet (``rematch``);
    a lobby sent to one of them is the offer to play again."""


class BalanceMessage(ServerMessageBase):
    """The account, shared with the platform's other rummy modes (MATCH-3, JOKER-1)."""

    type: Literal["balance"] = "balance"
    points: int
    jokers: int = Field(ge=0)


class RatingView(_Message):
    """A skill rating: ``shown`` (``mu`` - 3 ``sigma``) is what ranks a player, so a new,
    uncertain one is not ranked on a lucky first match."""

    shown: float
    mu: float
    sigma: float = Field(gt=0)

    @classmethod
    def of(cls, rating: Rating | None) -> Self | None:
        return None if rating is None else cls.from_rating(rating)

    @classmethod
    def from_rating(cls, rating: Rating) -> Self:
        return cls(shown=round(rating.shown, 2), mu=rating.mu, sigma=rating.sigma)


class ModeStatsView(_Message):
    """A player's rating and rated matches in one mode (practice ones count in none)."""

    rating: RatingView
    matches: int = Field(ge=0)
    wins: int = Field(ge=0)
    win_rate: float = Field(ge=0, le=1)
    average_round: float
    """Their team's mean round score."""
    canasta_points: int
    """Their team's canasta bonuses (SCORE-1), summed over every round."""
    canastas: dict[Literal["clean", "dirty", "twos"], int]
    """Their team's canastas of each kind (CAN-1..3), over every round."""
    rounds_out_first: int = Field(ge=0)


class PlayedMatch(_Message):
    """One finished match in a player's history, as they saw it."""

    table_id: TableId
    ended_at: float
    mode: MatchMode
    stake: int = Field(ge=0)
    practice: bool
    seat: int = Field(ge=1, le=4)
    partner: str
    opponents: list[str]
    rounds: list[list[int]]
    """Each round's score: their team's, then the other's."""
    result: Literal["won", "lost"]
    points: int
    """What the match changed on their balance (0 for practice)."""
    rating_before: RatingView | None = None
    rating_after: RatingView | None = None


class ProfileMessage(ServerMessageBase):
    """The player's own rating and stats in each mode they played rated, and their last
    matches, newest first, practice ones too."""

    type: Literal["profile"] = "profile"
    rated_matches: int = Field(ge=0)
    stats: dict[MatchMode, ModeStatsView]
    matches: list[PlayedMatch]

    @classmethod
    def of(
        cls, profile: ProfileRecord | None, history: list[MatchEntry], cid: str | None = None
    ) -> Self:
        stats = profile.stats if profile else {}
        ratings = profile.ratings if profile else {}
        return cls(
            cid=cid,
            rated_matches=profile.rated if profile else 0,
            stats={
                MatchMode(mode): ModeStatsView(
                    rating=RatingView.from_rating(ratings[mode]),
                    matches=s.matches,
                    wins=s.wins,
                    win_rate=round(s.win_rate, 3),
                    average_round=round(s.average_round, 1),
                    canasta_points=s.canasta_points,
                    canastas={"clean": s.clean, "dirty": s.dirty, "twos": s.twos},
                    rounds_out_first=s.out_first,
                )
                for mode, s in sorted(stats.items())
            },
            matches=[
                PlayedMatch(
                    table_id=m.table_id,
                    ended_at=m.ended_at,
                    mode=MatchMode(m.mode),
                    stake=m.stake,
                    practice=m.practice,
                    seat=m.seat,
                    partner=m.partner,
                    opponents=list(m.opponents),
                    rounds=[list(r) for r in m.rounds],
                    result=m.result,
                    points=m.points,
                    rating_before=RatingView.of(m.rating_before),
                    rating_after=RatingView.of(m.rating_after),
                )
                for m in history
            ],
        )


class StandingView(_Message):
    """A place on a leaderboard: players are named as they sit at tables, never by id."""

    rank: int = Field(ge=1)
    name: str
    shown: float
    you: bool = False
    """The standing is the asking player's own."""


class LeaderboardMessage(ServerMessageBase):
    """A mode's top 100 for a period, best first, and the asking player's own standing
    (None when they played no rated match of the mode in it)."""

    type: Literal["leaderboard"] = "leaderboard"
    mode: MatchMode
    period: str = Field(pattern=r"^(all|\d{4}-\d{2})$")
    """``all``, or the month (``YYYY-MM``, UTC) the board counts."""
    top: list[StandingView] = Field(max_length=100)
    own: StandingView | None

    @classmethod
    def of(
        cls,
        mode: MatchMode,
        period: str,
        top: list[Standing],
        own: Standing | None,
        *,
        player_id: str,
        cid: str | None = None,
    ) -> Self:
        def view(standing: Standing) -> StandingView:
            you = standing.player_id == player_id
            return StandingView(
                rank=standing.rank, name=standing.name, shown=round(standing.shown, 2), you=you
            )

        return cls(
            cid=cid,
            mode=mode,
            period=period,
            top=[view(s) for s in top],
            own=None if own is None else view(own),
        )


class ReplayFrame(_Message):
    """What the seat saw at one point of the round: the move that led there (null at the
    deal), public as the move log showed it, and the seat's view after it (its own tiles,
    every seat's public ones; the hands revealed after the last move)."""

    move: LoggedMove | None
    view: TableView


class ReplayMessage(ServerMessageBase):
    """A page of a finished match's replay from the asking player's seat: ``frames`` from
    ``start``; ask again from ``start`` + their number while ``more``."""

    type: Literal["replay"] = "replay"
    table_id: TableId
    seat: Seat
    round: int = Field(ge=1)
    rounds: int = Field(ge=1)
    """How many rounds the match had."""
    moves: int = Field(ge=0)
    """How many moves the round had: its frames are 0 (the deal) to ``moves``."""
    start: int = Field(ge=0)
    frames: list[ReplayFrame] = Field(max_length=REPLAY_FRAMES)
    more: bool


class WelcomeMessage(ServerMessageBase):
    """Who this connection is: the player the token named, and the protocol spoken."""

    type: Literal["welcome"] = "welcome"
    player_id: PlayerId
    """The player's account id: the id in ``seats`` and in a lobby's ``host``."""
    name: str = Field(min_length=1, max_length=32)
    protocol: int = PROTOCOL_VERSION
    idle_seconds: int = IDLE_SECONDS
    """Send any message (``ping`` if nothing else) more often than this, or the
    connection is closed."""


class PongMessage(ServerMessageBase):
    """The answer to ``ping``: the connection is alive."""

    type: Literal["pong"] = "pong"


class OpenedElsewhereMessage(ServerMessageBase):
    """The player opened the game on another connection (a second tab or device),
    which now holds their seat or queue place. This connection's moves and ``sync``
    are refused with ``opened_elsewhere``; a client should stop reconnecting on its
    own and leave it to the person to come back here."""

    type: Literal["opened_elsewhere"] = "opened_elsewhere"


class SaidMessage(ServerMessageBase):
    """A seat's quick message (``say``), pushed to every connected seat of the table; the
    sender's copy carries its ``cid``."""

    type: Literal["said"] = "said"
    table_id: str
    seat: Seat
    phrase: QuickPhrase


ServerMessage = Annotated[
    ViewMessage
    | ErrorMessage
    | RoundResultMessage
    | MatchResultMessage
    | QueuedMessage
    | QueueLeftMessage
    | LobbyView
    | BalanceMessage
    | ProfileMessage
    | LeaderboardMessage
    | ReplayMessage
    | WelcomeMessage
    | PongMessage
    | OpenedElsewhereMessage
    | SaidMessage,
    Field(discriminator="type"),
]


class TokenClaims(BaseModel):
    """What a player token says that the game reads (the JWT's claims, readable by the client)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    sub: str = Field(min_length=1, max_length=MAX_SUBJECT)
    """Who the identity provider says the player is. The player id is ``sub`` itself, or a
    hash of it when ``sub`` is not 1-64 letters, digits and ``._@+-``: ``welcome`` names it."""
    name: str = Field(min_length=1, max_length=32)
    """The name the local issuer signed in (a display name). The authorizer shows the
    first of ``preferred_username``, ``name``, ``cognito:username``, ``username`` that is a
    display name once cut to 24 characters, else ``Player``."""
    exp: int
    """Epoch seconds after which the token is refused: sign in again before."""


SignInErrorCode = Annotated[
    Literal["malformed", "invalid_name", "name_taken"], Field(title="SignInErrorCode")
]
"""Why the local sign-in refused: the body is not a ``SignInRequest`` (400), the name breaks
the rule of display names (400), or it is, or looks like, another account's (409)."""


class SignInRequest(BaseModel):
    """Local sign-in (``POST /api/signin``): the name is the account, and so is every name
    that looks like it (the same letters from another script or in fullwidth, another
    case, a doubled space, a trailing dot)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    name: DisplayName
    secret: str | None = Field(default=None, max_length=64)
    """The secret the account's first sign-in answered: needed to sign in again under
    its name or one that looks like it."""


class SignInResponse(BaseModel):
    """A fresh token for the account, the player id it carries, the account's name as its
    first sign-in chose it (the one shown at the table) and its secret."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    token: str = Field(max_length=2048)
    player_id: PlayerId
    name: DisplayName
    secret: str = Field(min_length=1, max_length=64)
    """Keep it and send it with every later sign-in under this name."""


class SignInError(BaseModel):
    """A refused sign-in: no token, and no account made or changed."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    code: SignInErrorCode
    error: str
    """What was wrong, in English, for a person to read."""
