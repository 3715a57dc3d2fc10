"""What the services keep about a table between invocations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from services.common.events import SeatPlayer
from shared_engine.match import MatchMode

Status = Literal["playing", "finished", "aborted"]
SEATS = (1, 2, 3, 4)


@dataclass(frozen=True)
class TableRecord:
    """The live item of a table: match facts, the round's state and who is connected.

    ``version`` grows by one with every write that changes what players see;
    every such write is conditional on the version it read.
    """

    table_id: str
    mode: MatchMode
    variant: Literal["twos-meld", "classic"]
    stake: int
    seats: dict[int, SeatPlayer]
    version: int = 0
    status: Status = "playing"
    round: int = 0
    totals: tuple[int, int] = (0, 0)
    tie_break: bool = False
    """The round being played was added because the totals were tied (MATCH-2)."""
    state: str | None = None
    """The round's state as ``shared_engine.dumps`` wrote it; never sent to a client."""
    connections: dict[int, str | None] = field(default_factory=lambda: dict.fromkeys(SEATS))
    turn_started: int = 0
    """The version at which the current turn began: the key of its timer."""
    turn_deadline: float | None = None
    updated_at: float = 0.0

    def seat_of(self, player_id: str) -> int | None:
        return next((s for s, p in self.seats.items() if p.player_id == player_id), None)

    def evolve(self, **changes: object) -> TableRecord:
        return replace(self, **changes)  # type: ignore[arg-type]
