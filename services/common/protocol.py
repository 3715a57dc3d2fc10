"""The WebSocket protocol: every message a client sends and every one it receives.

API Gateway routes a client message on its ``action`` field
(``$request.body.action``); each route parses its message with the model
here. The AsyncAPI document (docs/asyncapi.json) and docs/protocol.md are
generated from these models, so code and documentation cannot drift.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.common.events import SeatPlayer, TeamScore
from shared_engine.actions import ActionModel
from shared_engine.errors import ErrorCode
from shared_engine.match import MatchMode
from shared_engine.view import PlayerView

PROTOCOL_VERSION = 1
TableId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- client to server -------------------------------------------------------------


class Play(_Message):
    """Apply one action at the table. ``version`` is the version of the view it was chosen on."""

    action: Literal["play"]
    table_id: TableId
    version: int = Field(ge=0)
    move: ActionModel


class Sync(_Message):
    """Ask for the current view of the player's table (sent after every (re)connect)."""

    action: Literal["sync"]


class Queue(_Message):
    """Join a quick-start queue (``mode`` one_round, three_rounds, to_10000) or the arena
    (``mode`` arena, with a ``stake`` from the configured list)."""

    action: Literal["queue"]
    mode: MatchMode
    variant: Literal["twos-meld", "classic"] = "twos-meld"
    stake: int = Field(default=0, ge=0)


class Leave(_Message):
    """Leave the queue or the friends table being formed."""

    action: Literal["leave"]


class CreateTable(_Message):
    """Open a friends table; the answer carries the invite code to share."""

    action: Literal["create_table"]
    mode: Literal["one_round", "three_rounds", "to_10000"]
    variant: Literal["twos-meld", "classic"] = "twos-meld"


class JoinTable(_Message):
    """Take a free seat at a friends table by its invite code."""

    action: Literal["join_table"]
    code: str = Field(min_length=4, max_length=12)


class FillBots(_Message):
    """The host fills the empty seats of their friends table with bots, which starts it."""

    action: Literal["fill_bots"]


class Balance(_Message):
    """Ask for the account's points and spare jokers."""

    action: Literal["balance"]


TurnMessage = Annotated[Play | Sync, Field(discriminator="action")]
"""Routed to the turn service (``play``, ``sync``; ``$default`` too)."""
LobbyMessage = Annotated[
    Queue | Leave | CreateTable | JoinTable | FillBots | Balance, Field(discriminator="action")
]
"""Routed to the matchmaking service."""
ClientMessage = Annotated[
    Play | Sync | Queue | Leave | CreateTable | JoinTable | FillBots | Balance,
    Field(discriminator="action"),
]


# --- server to client -------------------------------------------------------------

ServiceErrorCode = Literal[
    "stale_version",
    "not_seated",
    "no_table",
    "message_too_large",
    "unknown_action",
    "already_playing",
    "not_queued",
    "unknown_code",
    "table_full",
    "not_host",
    "invalid_stake",
    "insufficient_balance",
    "internal",
]
"""Refusals of the services, beside the engine's codes (SCENARIOS.md)."""


class SeatInfo(_Message):
    """A seat's player and whether they are connected (else their turns are auto-played)."""

    player: SeatPlayer
    connected: bool


class MatchInfo(_Message):
    """The match around the round: its length, stake, round number and team totals."""

    mode: MatchMode
    variant: Literal["twos-meld", "classic"]
    stake: int
    round: int
    totals: dict[Literal["A", "B"], int]
    status: Literal["playing", "finished", "aborted"]


class ViewMessage(_Message):
    """The seat's whole view. Sent after every change; a client replaces its state with it."""

    type: Literal["view"] = "view"
    protocol: int = PROTOCOL_VERSION
    table_id: str
    version: int
    seat: int
    seats: dict[Literal["1", "2", "3", "4"], SeatInfo]
    match: MatchInfo
    turn_deadline: float | None
    """Epoch seconds when auto-play takes the current turn (TABLE-2), if timed."""
    view: PlayerView
    last_action: dict[str, Any] | None = None
    """The public form of the action that produced this version, for animation."""


class ErrorMessage(_Message):
    """A refusal. Nothing changed. ``view`` comes with ``stale_version``."""

    type: Literal["error"] = "error"
    code: ErrorCode | ServiceErrorCode
    message: str
    table_id: str | None = None
    view: ViewMessage | None = None


class RoundResultMessage(_Message):
    """A round was scored (SCORE-1) and what comes next; reveals the round's seed."""

    type: Literal["round_result"] = "round_result"
    table_id: str
    round: int
    scores: dict[Literal["A", "B"], TeamScore]
    totals: dict[Literal["A", "B"], int]
    next: Literal["round", "tie_break", "end"]
    seed: str
    """Revealed now: recompute the shuffle and check it against ``commitment`` (DEAL-4)."""
    commitment: str


class MatchResultMessage(_Message):
    """The match is over: the winning team, the totals and each seat's account change."""

    type: Literal["match_result"] = "match_result"
    table_id: str
    winner: Literal["A", "B"]
    totals: dict[Literal["A", "B"], int]
    rounds_played: int
    rewards: dict[Literal["1", "2", "3", "4"], int]
    """Account points each seat gains or loses (MATCH-3, MATCH-4)."""


class QueuedMessage(_Message):
    """The player waits in a queue until four make a table or ``expires_at`` passes."""

    type: Literal["queued"] = "queued"
    mode: MatchMode
    variant: Literal["twos-meld", "classic"]
    stake: int
    expires_at: float


class QueueLeftMessage(_Message):
    """The player is no longer waiting: they left, their ticket timed out, they
    disconnected, or the host closed the friends table they had joined."""

    type: Literal["queue_left"] = "queue_left"
    reason: Literal["left", "timeout", "disconnected", "closed"]


class LobbyView(_Message):
    """A friends table being formed: who sits where, and the code to invite others."""

    type: Literal["lobby"] = "lobby"
    code: str
    host: str
    mode: MatchMode
    variant: Literal["twos-meld", "classic"]
    seats: dict[Literal["1", "2", "3", "4"], SeatPlayer | None]


class BalanceMessage(_Message):
    """The account, shared with the platform's other rummy modes (MATCH-3, JOKER-1)."""

    type: Literal["balance"] = "balance"
    points: int
    jokers: int


ServerMessage = Annotated[
    ViewMessage
    | ErrorMessage
    | RoundResultMessage
    | MatchResultMessage
    | QueuedMessage
    | QueueLeftMessage
    | LobbyView
    | BalanceMessage,
    Field(discriminator="type"),
]
