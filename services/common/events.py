"""Every EventBridge event the services exchange, as pydantic models.

The models are the single source of the JSON Schemas in ``events/schemas/``
(``python -m tools.schemas``) and of the samples' validation. The
``detail-type`` of an event is its class name; its ``source`` names the
service that wrote it.
"""

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.common.constants import EVENT_SOURCE
from shared_engine import Variant
from shared_engine.match import MatchMode
from shared_engine.view import ScoreView

Team = Literal["A", "B"]
SeatKey = Literal["1", "2", "3", "4"]
BotLevel = Literal["easy", "normal", "hard"]
"""How hard a server-side bot plays (``shared_engine.search.LEVELS``): easy is the
heuristic player, normal and hard search ahead."""


class _Detail(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class SeatPlayer(_Detail):
    """Who sits in a seat; bots are seats their host filled, played by the server.

    ``bot`` is the only mark of a bot: the server sets it where it seats one (a host's
    ``fill_bots``, ids ``bot:<code>-<seat>`` that no token's subject maps to). Every seat
    taken through a connection is a player's, whatever their id looks like."""

    player_id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=32)
    bot: bool = False
    level: BotLevel | None = Field(default=None, exclude_if=lambda v: v is None)
    """A bot's level, chosen by the host who added it; a player's seat has none."""


FRIENDS_TABLE_PREFIX = "f-"
"""Whose table id starts so was formed from a friends table's lobby (``f-<code>-<hex>``):
its four may play again together (``rematch``); a queue's tables are ``uuid`` hex."""


def is_friends_table(table_id: str) -> bool:
    return table_id.startswith(FRIENDS_TABLE_PREFIX)


def is_practice(players: Iterable[SeatPlayer]) -> bool:
    """MATCH-3: a match with any seat played by a bot from its start is practice and
    settles no account points and no stake. Only a seat the host filled with a bot is
    one: a player's seat auto-played after a disconnect or a timeout stays theirs."""
    return any(player.bot for player in players)


class TableFormed(_Detail):
    """A table of four is ready; the deal service deals its first round."""

    table_id: str
    mode: MatchMode
    variant: Variant = "twos-meld"
    stake: int = Field(default=0, ge=0)
    seats: dict[SeatKey, SeatPlayer]


class RoundStarted(_Detail):
    """A round was dealt. ``commitment`` fixes the shuffle before anyone plays (DEAL-4)."""

    table_id: str
    round: int = Field(ge=1)
    dealer: int = Field(ge=1, le=4)
    commitment: str
    version: int


class RoundEnded(_Detail):
    """The last action of a round was applied (OUT-1 going out, or STOCK-1/2); score it."""

    table_id: str
    round: int
    version: int
    went_out: int | None


class TeamScore(ScoreView):
    """SCORE-1 for one team: the five parts and their sum (as the players' views show it)."""


class RoundScored(_Detail):
    """The round's scores and the match decision; reveals the round's seed."""

    table_id: str
    round: int
    scores: dict[Team, TeamScore]
    totals: dict[Team, int]
    next: Literal["round", "tie_break", "end"]
    seed: str
    commitment: str


class MatchEnded(_Detail):
    """The match is over; the ledger settles it (MATCH-3, MATCH-4) and the profile service
    adds it to its players' histories, stats and ratings."""

    table_id: str
    mode: MatchMode
    stake: int
    winner: Team
    totals: dict[Team, int]
    rounds_played: int
    seats: dict[SeatKey, SeatPlayer]


class TableAborted(_Detail):
    """The match was abandoned before its end (every player left): arena stakes are refunded."""

    table_id: str
    mode: MatchMode
    stake: int
    seats: dict[SeatKey, SeatPlayer]
    reason: str


class LedgerSettled(_Detail):
    """A match's account changes were booked (MATCH-3, MATCH-4), or its stakes refunded."""

    table_id: str
    purpose: Literal["settlement", "refund"]
    changes: dict[str, int]
    """Account id → points gained (negative: lost)."""


class PlayerConnected(_Detail):
    """A player opened a connection; ``seat`` is set when it took back a seat at a live table."""

    player_id: str
    connection_id: str
    table_id: str | None = None
    seat: int | None = None


class PlayerDisconnected(_Detail):
    """A player's current connection closed; their seat, if any, is now absent (TABLE-2)."""

    player_id: str
    connection_id: str
    table_id: str | None = None
    seat: int | None = None


EVENT_TYPES: dict[str, type[_Detail]] = {
    model.__name__: model
    for model in (
        TableFormed,
        RoundStarted,
        RoundEnded,
        RoundScored,
        MatchEnded,
        TableAborted,
        LedgerSettled,
        PlayerConnected,
        PlayerDisconnected,
    )
}


class EventEnvelope(BaseModel):
    """An EventBridge event as a target receives it.

    Tolerant of what the platform adds or omits (moto leaves out ``account``);
    strict about ``detail``, which is parsed by the model its type names.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore", defer_build=True)

    detail_type: str = Field(alias="detail-type")
    source: str
    id: str | None = None
    time: str | None = None
    detail: dict[str, Any]

    def parsed(self) -> _Detail:
        return EVENT_TYPES[self.detail_type].model_validate(self.detail)


EMITTERS: dict[str, str] = {
    "TableFormed": "matchmaking",
    "RoundStarted": "deal",
    "RoundEnded": "turn",
    "RoundScored": "score",
    "MatchEnded": "score",
    "TableAborted": "score",
    "LedgerSettled": "ledger",
    "PlayerConnected": "connect",
    "PlayerDisconnected": "connect",
}
"""detail-type → the one service that emits it: its source is ``canasta.<service>``. The
manifest's rules, grants and docs and every ``Outbound`` read it from here."""

OPERATOR_EMITS: dict[str, str] = {"TableAborted": "ops"}
"""What the operators' function (``services/ops``) publishes besides the services (an
operator's ``close`` ends a stuck table as if every player had left), under source
``canasta.<this>``."""


def source_of(detail_type: str, emitter: str | None = None) -> str:
    """The ``source`` of an event: ``canasta.<the service that emits it>``, or of the
    operators' console where it may emit that type too; any other emitter is a mistake."""
    emitters = {EMITTERS[detail_type], OPERATOR_EMITS.get(detail_type)}
    chosen = EMITTERS[detail_type] if emitter is None else emitter
    if chosen not in emitters:
        raise ValueError(f"{emitter} does not emit {detail_type}")
    return f"{EVENT_SOURCE}.{chosen}"
