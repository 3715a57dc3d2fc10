"""Domain events: what an applied action caused, in the past tense.

Events never carry a hidden tile: a drawn tile is known only to its owner, who
sees it in their own view. That lets any service publish them as they are.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TileDrawn:
    seat: int


@dataclass(frozen=True, slots=True)
class BonusThreeExposed:
    """DEAL-3/TURN-2/THREE-1: a red or yellow three went to the team's bonus area."""

    seat: int
    tile: int


@dataclass(frozen=True, slots=True)
class JokerButtonUsed:
    """JOKER-1: the services debit one spare joker from the seat's account."""

    seat: int


@dataclass(frozen=True, slots=True)
class PileTaken:
    seat: int
    tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MeldsLaid:
    seat: int
    melds: tuple[tuple[int, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class TeamOpened:
    team: int


@dataclass(frozen=True, slots=True)
class CanastaCompleted:
    team: int
    rank: int


@dataclass(frozen=True, slots=True)
class Discarded:
    seat: int
    tile: int


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round is over: ``went_out`` is the seat that went out, or None (stock)."""

    went_out: int | None


Event = (
    TileDrawn
    | BonusThreeExposed
    | JokerButtonUsed
    | PileTaken
    | MeldsLaid
    | TeamOpened
    | CanastaCompleted
    | Discarded
    | RoundEnded
)
